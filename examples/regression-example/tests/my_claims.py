"""My own claim, checked by mmicl's machinery beside the built-in ones."""
import math

import mmicl
from mmicl import hypotheses as hyp

DEFAULT_LAW = "s=uniform(1,3)"


@mmicl.claim("mytheory.alpha_star", title="α* = 2/(2 + s_lo + s_hi)",
             statement="For a bounded law of s with signal, α* = 2/(2 + s_lo + s_hi) (the limit of α_T), "
                       "and α_T lies in [1/(1 + s_hi), 1/(1 + s_lo)].")
def evaluate(config: mmicl.RunConfig):
    law = mmicl.as_law(config.law or DEFAULT_LAW)
    hypotheses = [hyp.bounded_s(law), hyp.has_signal(law)]
    if not all(h.met for h in hypotheses):
        return hypotheses, []
    lo, hi = law.signal_bounds()
    a = mmicl.alpha_star(law)
    closed = 2 / (2 + lo + hi)
    exact = mmicl.Check(
        "α* = 2/(2 + s_lo + s_hi)", "closed form", abs(a - closed) <= 4 * math.ulp(closed),
        {"alpha_star": a, "closed_form": closed}, atol=0.0, rtol=1e-15,
        tolerance="4 ulp: α* is one division of float64 sums of the support's ends")
    depth = 10 if config.quick else 100
    a_T = mmicl.alpha_T(law, depth)
    inside = mmicl.Check(
        f"α_T ∈ [1/(1 + s_hi), 1/(1 + s_lo)] at T = {depth}", "root-finding",
        1 / (1 + hi) * (1 - 1e-12) <= a_T <= 1 / (1 + lo) * (1 + 1e-12), {"T": depth, "alpha_T": a_T},
        role="corroborating", atol=0.0, rtol=1e-10,
        tolerance="1e-10 relative: Brent's root of the depth-T loss, to ~1e-14, with room for another platform")
    return hypotheses, [exact, inside], {"alpha_star": a, "alpha_T": a_T}
