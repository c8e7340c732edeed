"""Property-based regression testing with mmicl: Hypothesis strategies for task laws, and claims
run as assertions.

``import mmicl.testing`` (it needs Hypothesis: ``pip install hypothesis``; ``import mmicl`` never
imports it).  This is the only mmicl module that imports Hypothesis when it is imported; its
strategies are the ones mmicl's own test suite draws its laws from.

Laws that carry their facts
---------------------------
``task_laws(...)`` and ``scalar_laws(...)`` draw a ``DrawnLaw``: the law itself (a ``TaskLaw``, or
a ``ScalarLaw`` such as ``Beta``, so it goes wherever a law goes: ``mmicl.alpha_T(drawn, 7)``,
``drawn.signal_bounds()``; ``.law`` is the same object), carrying its LAW text (``.text``, written
here from the same pieces, independently of ``TaskLaw.spec()``) and its ``LawFacts`` (``.facts``),
worked out from how the law was built and never by calling the code under test:

- ``facts.bounded``: s = ‖m‖² is bounded (no exponential piece);
- ``facts.signal_values``: how many distinct values s takes over the prompts with m ≠ 0, capped at
  ``MANY`` (= 3, "three or more"; a continuous piece counts as ``MANY``);
- ``facts.s_lo``, ``facts.s_hi``: the ends of s over the prompts with m ≠ 0 (``None`` when every
  prompt has m = 0; ``s_hi`` is ``inf`` for an unbounded law);
- ``facts.support``: ``(ess inf s, ess sup s)`` over all prompts; ``facts.mass_at_zero``: some
  prompts have m = 0; ``facts.atoms``: the values of s when it takes finitely many, else ``None``.

A property branches on the facts or ``assume``s them::

    from hypothesis import assume, given, settings
    import mmicl.testing as mt

    @settings(max_examples=5, deadline=None)
    @given(mt.task_laws())
    def test_thm62_never_fails(drawn):
        assume(drawn.facts.has_signal)
        expected = "holds" if drawn.facts.bounded else "hypothesis-not-met"
        mt.assert_verdict("thm6.2", drawn, expected={expected, "inconclusive"})

The strategies are composed from small named pieces (``point_pieces``, ``uniform_pieces``,
``beta_pieces``, ``discrete_pieces``, ``exponential_pieces``, ``mixture_pieces``) and shrink
toward simple laws: a failing property is reported on a point or a uniform law, with ζ normal and
d1 = d2 = 1, where one of those fails it.

Numerical edges kept away from (each piece's docstring says why): atoms lie on the grid k/16
(``ATOM_GRID``), intervals are at least 0.05 wide, Beta exponents lie in [0.3, 4], squared norms
stay ≥ 0.01 where not 0 and ≤ 8 in each piece.  These are edges of float64, not properties of the theory; a
property about such laws writes its own strategy from the pieces.

Claims as assertions
--------------------
``check_claim(claim_id, law)`` runs a registered claim (built-in, a plugin's or your own) on a law
at a size and returns its ``ClaimResult``; ``assert_verdict(claim_id, law, expected)`` asserts its
verdict, and its failure says which hypotheses were not met and which checks failed or were
undecided, with their numbers and where each tolerance comes from.

Cases beyond laws
-----------------
A claim with its own kind of case (``mmicl.CaseType``: a covariance, a context length, a noise
level) is checked with ``check_claim(claim_id, case=...)``; ``cases(claim_id)`` is the strategy its
case type declares.  Pieces for such strategies: ``spectra(d, lo, hi)`` (sorted eigenvalues) and
``positive_definite_matrices(d, lo, hi)`` (symmetric positive definite matrices with a spectrum in
``[lo, hi]``); whole numbers and ranges are Hypothesis's own ``st.integers(lo, hi)``.

The plain-law strategies
------------------------
Strategies drawing plain ``ScalarLaw``/``TaskLaw`` objects (no facts), for properties of the
numerics: from the smallest piece up,

* numbers: ``squared_norms`` (0, or a squared norm in [0.01, 5]), ``positive_norms``,
  ``grid_norms`` (multiples of 1/4: atoms that stay well apart), ``shapes`` (Beta exponents),
  ``raw_weights`` (unnormalised probabilities), ``zeta_constants``;
* ``intervals()``: a support ``(a, b)`` with ``a`` a squared norm and ``b − a`` in [0.05, 3];
* laws of one squared norm: ``atoms()`` (with ``atoms_at_zero`` and ``positive_atoms``),
  ``uniform_laws()``, ``beta_laws(asymmetric=…)`` (Beta pieces), ``continuous_laws``,
  ``discrete_laws(unequal=…)``, ``mixtures(parts)``, ``zero_atom_mixtures()`` (an atom at 0
  beside a continuous part); ``plain_scalar_laws`` is any of them, ``separated_scalar_laws``
  those without mixtures and with atoms well apart, ``asymmetric_scalar_laws`` the ones with no
  symmetry that could hide a swapped parameter;
* ``zeta_laws()`` and ``dims``;
* task laws: ``task_laws_from(scalar)`` (the law of s = ‖m‖²), ``per_modality_task_laws(sv, sr,
  …)`` (the laws of ‖v‖² and ‖r‖²), ``non_degenerate_task_laws``, ``any_task_laws``;
* LAW text: ``written_laws()`` draws ``(text, law)``: LAW text written here, independently of
  ``TaskLaw.spec()`` (several number formats, spaces, items in any order, defaults left out),
  with the law that the text describes, built from the constructors.
"""
from __future__ import annotations

import math
import shutil
import tempfile
from dataclasses import dataclass, field
from typing import Iterable

from hypothesis import strategies as st
from hypothesis.errors import InvalidArgument

from mmicl.numerics.laws.scalar import Beta, Discrete, Exponential, Mixture, Point, TwoPoint
from mmicl.numerics.laws.task import TaskLaw, ZetaLaw
from mmicl.numerics.validate import InputError
from mmicl.proofs.verify import case_text, registered, verify
from mmicl.proofs.claim import VERDICTS

__all__ = [
    # laws with their facts
    "MANY", "ATOM_GRID", "LawFacts", "DrawnLaw", "task_laws", "scalar_laws", "zeta_laws", "depths",
    "point_pieces", "uniform_pieces", "beta_pieces", "discrete_pieces", "exponential_pieces", "mixture_pieces",
    # claims as assertions
    "check_claim", "assert_verdict", "explain", "cases",
    # cases beyond laws
    "spectra", "positive_definite_matrices",
    # plain laws
    "squared_norms", "positive_norms", "grid_norms", "shapes", "raw_weights", "widths", "zeta_constants", "dims",
    "probability_vectors", "intervals", "atoms", "atoms_at_zero", "positive_atoms", "uniform_laws", "beta_laws",
    "continuous_laws", "discrete_laws", "mixtures", "zero_atom_mixtures", "plain_scalar_laws",
    "separated_scalar_laws", "asymmetric_scalar_laws", "has_signal", "spread", "task_laws_from",
    "per_modality_task_laws", "non_degenerate_task_laws", "any_task_laws",
    # LAW text
    "number_formats", "spaces", "dist_texts", "written_laws",
]

MANY = 3
"""``LawFacts.signal_values`` counts up to ``MANY``: "three or more" values, all that any
hypothesis of the paper asks for (Theorem 6.3 needs 3)."""

ATOM_GRID = 16
"""Atoms of the fact-carrying strategies lie on the grid k/16, 0 ≤ k ≤ 80 (so in [0, 5]).  Sums of
such atoms (s = ‖v‖² + ‖r‖²) are exact in float64, so the count of distinct values in the facts is
the one the quadrature nodes show; and two atoms are at least 1/16 apart, so the spread of
1 + s, ρ ≥ 0.0625/12 ≈ 0.005, is resolved by float64 at every depth the claims sweep
(``TaskLaw.float64_unresolved``: ρ ≥ 2.3e-13·T) and by the Monte Carlo route at small depths."""

_ZETAS = ("normal", "rademacher", "const")
_MODALITIES = ("s", "sv+sr")

# =========================================================================== facts


@dataclass(frozen=True)
class LawFacts:
    """What a drawn law is, worked out from how it was built (see the module docstring)."""

    bounded: bool
    """s = ‖m‖² is bounded (s_hi < ∞)."""
    signal_values: int
    """Distinct values of s over the prompts with m ≠ 0, capped at ``MANY``; a continuous piece
    counts as ``MANY``; 0 when every prompt has m = 0."""
    s_lo: float | None
    """ess inf of s over the prompts with m ≠ 0 (None: there are none).  A continuous piece that
    reaches 0 keeps 0 as its lower end (``TaskLaw.signal_bounds``)."""
    s_hi: float | None
    """ess sup of s over the prompts with m ≠ 0 (``inf`` when unbounded; None: there are none)."""
    support: tuple[float, float]
    """``(ess inf s, ess sup s)`` over all prompts (``TaskLaw.s_bounds``)."""
    mass_at_zero: bool
    """Some prompts have m = 0 (an atom of s at 0)."""
    atoms: frozenset | None = field(default=None, repr=False)
    """The values s takes, where it takes finitely many (no continuous piece); else None."""

    @property
    def has_signal(self) -> bool:
        """Some prompts have m ≠ 0 (s is not a.s. 0)."""
        return self.signal_values > 0

    @property
    def single_value(self) -> bool:
        """s takes exactly one value over the prompts with m ≠ 0."""
        return self.signal_values == 1

    @property
    def atomic(self) -> bool:
        """s takes finitely many values (no continuous piece)."""
        return self.atoms is not None


class DrawnLaw:
    """A law drawn by ``task_laws`` or ``scalar_laws``, and a law itself: an instance of the law's
    own class (a ``TaskLaw``, or ``Beta``, ``Point``, … for ``scalar_laws``) that also carries
    ``text`` (its LAW text, or DIST text for a scalar law) and ``facts`` (``LawFacts``).  So it
    goes wherever a law goes: ``mmicl.alpha_T(drawn, 7)``, ``drawn.signal_bounds()``,
    ``TaskLaw(s=drawn)``.  ``drawn.law`` is the drawn law itself (for code written when the law
    was a field).  Its repr shows the text and the facts, so a falsifying example reads as a law;
    ``isinstance(x, DrawnLaw)`` tells a drawn law from a plain one."""

    text: str
    facts: LawFacts

    @property
    def law(self):
        """The law itself (``self``)."""
        return self

    def __str__(self) -> str:
        return self.text

    def __repr__(self) -> str:
        return f"DrawnLaw(text={self.text!r}, facts={self.facts!r})"

    def __eq__(self, other) -> bool:  # a drawn Point(2) is Point(2): text and facts only describe it
        return _plain(self) == _plain(other)

    def __hash__(self) -> int:
        return hash(_plain(self))


_DRAWN_CLASSES: dict[type, type] = {}


def _plain(law):
    """A drawn law as a plain instance of its own class (the parts of a law that is drawn as a
    whole: a mixture's components, a task law's s, sv, sr); a plain law as it is."""
    if not isinstance(law, DrawnLaw):
        return law
    plain = object.__new__(type(law)._plain_class)
    for name, value in vars(law).items():
        if name not in ("text", "facts"):
            object.__setattr__(plain, name, value)
    return plain


def _drawn(law, text: str, facts: LawFacts):
    """``law`` as an instance of ``Drawn<its class>`` (its class and ``DrawnLaw``), carrying
    ``text`` and ``facts``: the law's state copied as it is."""
    import dataclasses

    cls = type(law)
    sub = _DRAWN_CLASSES.get(cls)
    if sub is None:
        namespace = {"__annotations__": {"text": "str", "facts": "LawFacts | None"}, "text": "", "facts": None,
                     "__module__": __name__, "__qualname__": f"Drawn{cls.__name__}",
                     "__doc__": f"A drawn {cls.__name__} (``DrawnLaw``).", "_plain_class": cls}
        sub = dataclasses.dataclass(frozen=True, eq=False, repr=False)(type(f"Drawn{cls.__name__}", (DrawnLaw, cls),
                                                                            namespace))
        _DRAWN_CLASSES[cls] = sub
    drawn = object.__new__(sub)  # the law's state as it is: not made again (a constructor may renormalise)
    for name, value in vars(law).items():
        object.__setattr__(drawn, name, value)
    object.__setattr__(drawn, "text", text)
    object.__setattr__(drawn, "facts", facts)
    return drawn


def _atomic_facts(values: Iterable[float]) -> LawFacts:
    atoms = frozenset(float(v) for v in values)
    pos = sorted(v for v in atoms if v > 0)
    return LawFacts(bounded=True, signal_values=min(len(pos), MANY), s_lo=pos[0] if pos else None,
                    s_hi=pos[-1] if pos else None, support=(min(atoms), max(atoms)), mass_at_zero=0.0 in atoms,
                    atoms=atoms)


def _continuous_facts(a: float, b: float) -> LawFacts:
    """A piece with a density on [a, b], b > a ≥ 0 (b = inf: unbounded)."""
    return LawFacts(bounded=math.isfinite(b), signal_values=MANY, s_lo=a, s_hi=b, support=(a, b), mass_at_zero=False)


def _mixture_facts(parts: list[LawFacts]) -> LawFacts:
    if all(p.atomic for p in parts):
        return _atomic_facts(frozenset().union(*(p.atoms for p in parts)))
    sig = [p for p in parts if p.has_signal]  # a continuous part always has signal: sig is not empty
    return LawFacts(bounded=all(p.bounded for p in parts), signal_values=MANY, s_lo=min(p.s_lo for p in sig),
                    s_hi=max(p.s_hi for p in sig), support=(min(p.support[0] for p in parts),
                                                            max(p.support[1] for p in parts)),
                    mass_at_zero=any(p.mass_at_zero for p in parts))


def _sum_facts(v: LawFacts, r: LawFacts) -> LawFacts:
    """The facts of s = ‖v‖² + ‖r‖² (independent): s > 0 iff ‖v‖² > 0 or ‖r‖² > 0, so the least
    value of s with m ≠ 0 is the least of (least ‖v‖² > 0) + (least ‖r‖²) and the other way round."""
    if v.atomic and r.atomic:
        return _atomic_facts(a + b for a in v.atoms for b in r.atoms)
    lows = ([v.s_lo + r.support[0]] if v.has_signal else []) + ([v.support[0] + r.s_lo] if r.has_signal else [])
    hi = v.support[1] + r.support[1]
    return LawFacts(bounded=v.bounded and r.bounded, signal_values=MANY, s_lo=min(lows), s_hi=hi,
                    support=(v.support[0] + r.support[0], hi), mass_at_zero=v.mass_at_zero and r.mass_at_zero)


def _n(x: float) -> str:
    """A float as LAW text that reads back as the same float."""
    return repr(float(x))


# =========================================================================== pieces with facts


def _check_bool(name: str, value) -> None:
    if not isinstance(value, bool):
        raise InvalidArgument(f"{name}={value!r} must be True or False")


def _atom_values(atom_at_zero: bool):
    """k/16 for k in [0, 80] (k ≥ 1 without atoms at 0): see ``ATOM_GRID``.  Shrinks toward 0
    (or 1/16)."""
    return st.integers(0 if atom_at_zero else 1, 5 * ATOM_GRID).map(lambda k: k / ATOM_GRID)


def point_pieces(atom_at_zero: bool = True):
    """``point(c)``, c on the grid of ``ATOM_GRID``; ``point(0)`` (every prompt has m = 0) only
    with ``atom_at_zero``.  Shrinks toward ``point(0)`` (or ``point(0.0625)``)."""
    _check_bool("atom_at_zero", atom_at_zero)
    return _atom_values(atom_at_zero).map(lambda c: _drawn(Point(c), f"point({_n(c)})", _atomic_facts([c])))


@st.composite
def _support(draw):
    """``(a, b)``: ``a`` from ``squared_norms`` (0 or [0.01, 5]: see its docstring), ``b − a`` in
    [0.05, 3] (a narrower support is a float64 edge: ``TaskLaw.float64_unresolved``)."""
    a = draw(squared_norms)
    return a, a + draw(widths)


def uniform_pieces():
    """``uniform(a, b)`` on a support of ``_support`` (at least 0.05 wide, a = 0 allowed: a
    density reaching 0 is not an atom at 0).  Shrinks toward ``uniform(0, 0.05)``-like laws."""
    return _support().map(lambda ab: _drawn(Beta(1.0, 1.0, *ab), f"uniform({_n(ab[0])},{_n(ab[1])})",
                                              _continuous_facts(*ab)))


@st.composite
def beta_pieces(draw):
    """``beta(p, q, a, b)``: p, q in [0.3, 4] (``shapes``; below 1 the density is singular at that
    end) on a support of ``_support``."""
    p, q = draw(shapes), draw(shapes)
    a, b = draw(_support())
    return _drawn(Beta(p, q, a, b), f"beta({_n(p)},{_n(q)},{_n(a)},{_n(b)})", _continuous_facts(a, b))


@st.composite
def discrete_pieces(draw, atom_at_zero: bool = True, min_size: int = 2, max_size: int = 4):
    """``discrete(v1:p1, …)``: 2–4 distinct atoms on the grid of ``ATOM_GRID``, probabilities ≥ 0.05
    before normalising (a tinier atom weighs nothing a claim can see, but can still decide a count)."""
    vals = draw(st.lists(_atom_values(atom_at_zero), min_size=min_size, max_size=max_size, unique=True))
    probs = draw(probability_vectors(len(vals)))
    text = "discrete(" + ",".join(f"{_n(v)}:{_n(p)}" for v, p in zip(vals, probs)) + ")"
    return _drawn(Discrete(tuple(vals), probs), text, _atomic_facts(vals))


def exponential_pieces():
    """``exponential(rate)``, rate in [0.2, 5]: the unbounded piece (s_hi = ∞)."""
    rates = st.floats(min_value=0.2, max_value=5.0)
    return rates.map(lambda r: _drawn(Exponential(r), f"exponential({_n(r)})", _continuous_facts(0.0, math.inf)))


@st.composite
def mixture_pieces(draw, parts, min_size: int = 2, max_size: int = 3):
    """``mix(w1*P1, …)`` of 2–3 pieces drawn from ``parts`` (a strategy of ``DrawnLaw``s of scalar
    laws), weights ≥ 0.05 before normalising."""
    comps = draw(st.lists(parts, min_size=min_size, max_size=max_size))
    probs = draw(probability_vectors(len(comps)))
    text = "mix(" + ",".join(f"{_n(w)}*{c.text}" for w, c in zip(probs, comps)) + ")"
    return _drawn(Mixture(tuple(_plain(c) for c in comps), probs), text, _mixture_facts([c.facts for c in comps]))


def scalar_laws(bounded: bool = True, atoms: bool = True, atom_at_zero: bool = True):
    """A ``DrawnLaw`` of one squared norm (a ``ScalarLaw`` itself, ``.text`` its DIST text):
    a point, a uniform, a Beta piece, a discrete law, or a mixture of 2–3 of these.

    ``bounded``: True: every law is bounded; False: exponential pieces may appear too (alone or in
    mixtures; ``facts.bounded`` says which).  ``atoms``: False: no point, discrete law or atom in a
    mixture (only densities).  ``atom_at_zero``: atoms at 0 (prompts with m = 0) may appear."""
    for name, value in (("bounded", bounded), ("atoms", atoms), ("atom_at_zero", atom_at_zero)):
        _check_bool(name, value)
    simple = ([point_pieces(atom_at_zero)] if atoms else []) + [uniform_pieces(), beta_pieces()]
    if atoms:
        simple.append(discrete_pieces(atom_at_zero))
    if not bounded:
        simple.append(exponential_pieces())
    return st.one_of(*simple, mixture_pieces(st.one_of(*simple)))


def zeta_laws(kinds: Iterable[str] = _ZETAS):
    """A ``ZetaLaw`` of one of ``kinds`` (``"normal"``, ``"rademacher"``, ``"const"``; the constant
    from ``zeta_constants``, |c| in [0.2, 3]).  Shrinks toward the first kind.  (ζ is independent of
    m: it has no facts about s to carry.)"""
    kinds = tuple(kinds)
    if not kinds or any(k not in _ZETAS for k in kinds) or len(set(kinds)) != len(kinds):
        raise InvalidArgument(f"zeta kinds={kinds!r}: give some of {_ZETAS}, each once")
    laws = {"normal": st.just(ZetaLaw("normal")), "rademacher": st.just(ZetaLaw("rademacher")),
            "const": zeta_constants.map(lambda c: ZetaLaw("const", c))}
    return st.one_of(*(laws[k] for k in kinds))


def _zeta_text(z: ZetaLaw) -> str:
    return f"const({_n(z.value)})" if z.kind == "const" else z.kind


def task_laws(bounded: bool = True, modalities: Iterable[str] = _MODALITIES, atoms: bool = True,
              atom_at_zero: bool = True, zeta: Iterable[str] = _ZETAS, max_dim: int = 4):
    """A ``DrawnLaw`` of a task: a ``TaskLaw`` itself, with ``.text`` its LAW text and ``.facts``
    about s = ‖m‖².

    ``modalities``: the forms drawn: ``"s"`` (the law of ‖m‖², direction uniform on the sphere)
    and ``"sv+sr"`` (independent laws of ‖v‖² and ‖r‖², one per modality; s is their sum).
    ``bounded``, ``atoms``, ``atom_at_zero``: as for ``scalar_laws``, for each law drawn.
    ``zeta``: the kinds of ζ law (``zeta_laws``).  ``max_dim``: d1 and d2 in [1, max_dim].

    Some laws drawn have no signal (every prompt has m = 0: ``point(0)``, or ``sv`` and ``sr``
    both ``point(0)``) unless ``atom_at_zero=False``; ``assume(drawn.facts.has_signal)`` where a
    property needs signal.  Shrinks toward ``s=point(0); zeta=normal; d1=1; d2=1``, then toward a
    point away from 0 and a uniform law."""
    modalities = tuple(modalities)
    if not modalities or any(m not in _MODALITIES for m in modalities) or len(set(modalities)) != len(modalities):
        raise InvalidArgument(f"modalities={modalities!r}: give some of {_MODALITIES}, each once")
    if isinstance(max_dim, bool) or not isinstance(max_dim, int) or not 1 <= max_dim <= 16:
        raise InvalidArgument(f"max_dim={max_dim!r} must be a whole number from 1 to 16 (verify allows d1 + d2 ≤ 32)")
    scalars = scalar_laws(bounded=bounded, atoms=atoms, atom_at_zero=atom_at_zero)
    zetas = zeta_laws(zeta)
    sizes = st.integers(1, max_dim)

    @st.composite
    def draw_task(draw):
        mode = draw(st.sampled_from(modalities))
        if mode == "s":
            s = draw(scalars)
            kw, items, facts = {"s": _plain(s)}, [f"s={s.text}"], s.facts
        else:
            v, r = draw(scalars), draw(scalars)
            kw, items, facts = ({"sv": _plain(v), "sr": _plain(r)}, [f"sv={v.text}", f"sr={r.text}"],
                                _sum_facts(v.facts, r.facts))
        z, d1, d2 = draw(zetas), draw(sizes), draw(sizes)
        items += [f"zeta={_zeta_text(z)}", f"d1={d1}", f"d2={d2}"]
        return _drawn(TaskLaw(d1=d1, d2=d2, zeta=z, **kw), "; ".join(items), facts)

    return draw_task()


def depths(min_value: int = 1, max_value: int = 10_000):
    """A depth T (the number of layers): small depths often (up to 12), powers of 2 and 10, any
    depth in [min_value, max_value] sometimes.  Shrinks toward ``min_value`` (a depth that must be
    large shrinks to the least one or to a power of 2 or 10 above it).  The default cap is
    the deepest depth of the claims' quick sweeps."""
    for name, v in (("min_value", min_value), ("max_value", max_value)):
        if isinstance(v, bool) or not isinstance(v, int) or v < 1:
            raise InvalidArgument(f"{name}={v!r} must be a whole number ≥ 1")
    if min_value > max_value:
        raise InvalidArgument(f"min_value={min_value} > max_value={max_value}")
    marks = sorted({b**k for b in (2, 10) for k in range(0, 20) if min_value <= b**k <= max_value})
    parts = [st.integers(min_value, min(max_value, min_value + 11))]
    if marks:
        parts.append(st.sampled_from(marks))
    return st.one_of(*parts, st.integers(min_value, max_value))


# =========================================================================== claims as assertions


def _law_text(law) -> str | None:
    if law is None or isinstance(law, str):
        return law
    if isinstance(law, DrawnLaw):
        if not isinstance(law, TaskLaw):
            raise TypeError("a claim runs on a task law: draw it with task_laws(), not scalar_laws()")
        return law.text
    if isinstance(law, TaskLaw):
        return law.spec()
    raise TypeError(f"law must be LAW text, a TaskLaw, a DrawnLaw or None, got {type(law).__name__}")


def check_claim(claim_id: str, law=None, size: str = "smoke", model=None, seed: int = 0, *, out=None, case=None):
    """Run the registered claim ``claim_id`` (built-in, a plugin's or your own) on ``law`` and
    return its ``ClaimResult``.

    ``law``: LAW text, a ``TaskLaw``, a ``DrawnLaw`` (from ``task_laws``) or None (the claim's own
    laws).  ``size``: ``"smoke"`` (the default: the least work that decides, for properties over
    many laws), ``"quick"`` or ``"full"``.  ``model``: reserved for the model variants of a claim;
    only ``None`` (the paper's model) is accepted today.  ``seed``: every random choice.  ``out``:
    the folder for the claim's figures; by default a temporary folder, removed after the run (the
    result's figure paths then name files that are gone).  ``case``: for a claim with its own kind
    of case (``Claim.case``), the case as text or as an object its ``CaseType`` writes as text
    (a case drawn by ``cases(claim_id)``).

    Refused before the claim runs, as ``mmicl.verify`` refuses them: an unknown id (``KeyError``
    listing the known ones), a bad size, seed or law (``InputError``/``LawError``), a case the
    claim cannot read or a case for a claim that takes none (``CaseError``)."""

    if model is not None:
        raise InputError(f"model={model!r}: model variants are reserved for a later version; pass model=None "
                         "(the paper's model)")
    _registered(claim_id)
    text = _law_text(law)
    if out is not None:
        return verify([claim_id], law=text, size=size, seed=seed, out=out, case=case)[0]
    folder = tempfile.mkdtemp(prefix="mmicl-check-")
    try:
        return verify([claim_id], law=text, size=size, seed=seed, out=folder, case=case)[0]
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def cases(claim_id: str):
    """The Hypothesis strategy of the cases of ``claim_id``, a claim with its own kind of case
    (``Claim.case``, a ``CaseType`` with a ``strategy``): each example is a case object, which
    ``check_claim(claim_id, case=...)`` takes::

        @given(case=mt.cases("zfb.minimiser"))
        def test_minimiser(case):
            mt.assert_verdict("zfb.minimiser", case=case)

    A ``KeyError`` for an unknown id; a ``CaseError`` for a claim without a case type or whose
    case type has no strategy."""
    from mmicl.proofs.cases import CaseError

    kind = _registered(claim_id).case
    if kind is None:
        raise CaseError(f"claim {claim_id!r} takes no case (it has no CaseType): draw laws with task_laws()")
    if kind.strategy is None:
        raise CaseError(f"claim {claim_id!r}: its case type {kind.name!r} has no strategy; give CaseType one")
    return kind.strategy()


def _registered(claim_id: str):
    """The registered claim ``claim_id``, or a ``KeyError`` listing the known ones."""
    if not isinstance(claim_id, str) or claim_id not in registered():
        raise KeyError(f"no claim {claim_id!r}; known claims: {sorted(registered())}")
    return registered()[claim_id]


def _expected(expected) -> frozenset[str]:

    want = frozenset([expected] if isinstance(expected, str) else expected)
    bad = sorted(v for v in want if v not in VERDICTS)
    if not want or bad:
        raise ValueError(f"expected must be a verdict or a set of verdicts among {VERDICTS}, got {expected!r}")
    return want


def _tolerance_text(c) -> str:
    def shown(v):
        return f"{v:g}" if not isinstance(v, dict) else "{" + ", ".join(f"{k}: {x:g}" for k, x in v.items()) + "}"

    nums = ", ".join(f"{k} {shown(v)}" for k, v in (("atol", c.atol), ("rtol", c.rtol)) if v is not None)
    said = c.tolerance or "the check states none"
    why = f" ({c.numbers_tolerance})" if c.numbers_tolerance else ""
    return f"{said}; numbers may move by {nums}{why}" if nums else said


def explain(result) -> str:
    """The lines ``assert_verdict`` reports about ``result``: the verdict and its reason, the
    hypotheses not met, the checks that failed or were undecided with their numbers and tolerances."""
    lines = [f"  verdict: {result.verdict} ({result.verdict_reason})"]
    unmet = [h for h in result.hypotheses if not h.met]
    if unmet:
        lines.append("  hypotheses not met:")
        lines += [f"    - {h.text}" + (f": {h.detail}" if h.detail else "") for h in unmet]
    bad = [c for c in result.checks if c.passed is not True]
    if bad:
        lines.append("  checks failing or undecided:")
        for c in bad:
            outcome = "FAILED" if c.passed is False else "undecided"
            lines.append(f"    - [{c.role}] {c.name}: {outcome} ({c.method})")
            if c.numbers:
                lines.append(f"        numbers: {c.numbers}")
            lines.append(f"        tolerance: {_tolerance_text(c)}")
            if c.detail:
                lines.append(f"        detail: {c.detail}")
    if result.error:
        lines.append("  evaluate raised:\n" + "\n".join("    " + ln for ln in result.error.splitlines()))
    return "\n".join(lines)


def assert_verdict(claim_id: str, law=None, expected="holds", size: str = "smoke", seed: int = 0, *,
                   model=None, out=None, case=None):
    """Run ``claim_id`` on ``law`` (``check_claim``) and assert that its verdict is ``expected``: a
    verdict (``"holds"``, ``"fails"``, ``"hypothesis-not-met"``, ``"inconclusive"``, ``"error"``)
    or a set of them.  Returns the ``ClaimResult``.  ``case``: as for ``check_claim``.

    The ``AssertionError`` names the claim, the law, the size and the seed, and lists the
    hypotheses not met (with the values that decided them) and every check that failed or was
    undecided: its role, its numbers, and where its tolerance comes from (``Check.tolerance``,
    with ``atol``/``rtol`` where the check states them)::

        >>> assert_verdict("thm6.2", "s=exponential(1)")
        AssertionError: thm6.2 on s=exponential(1) (size smoke, seed 0): verdict hypothesis-not-met, expected holds
          verdict: hypothesis-not-met (hypothesis not met: s = ‖m‖² is bounded (s_hi < ∞))
          hypotheses not met:
            - s = ‖m‖² is bounded (s_hi < ∞): s ∈ [0, inf] for s=exponential(1); ...
    """
    __tracebackhide__ = True  # pytest shows the caller's line
    want = _expected(expected)
    result = check_claim(claim_id, law, size=size, model=model, seed=seed, out=out, case=case)
    if result.verdict not in want:
        shown = next(iter(want)) if len(want) == 1 else "one of " + ", ".join(sorted(want))
        where = _law_text(law) or (f"case {case_text([_registered(claim_id)], case)}" if case is not None
                                   else "its own laws")
        raise AssertionError(f"{claim_id} on {where} (size {size}, seed {seed}): verdict {result.verdict}, "
                             f"expected {shown}\n{explain(result)}")
    return result


# =========================================================================== plain laws: numbers

squared_norms = st.one_of(st.just(0.0), st.floats(min_value=0.01, max_value=5.0))
"""0 (a prompt with m = 0) or a squared norm in [0.01, 5].  Atoms at 1e-177 make the loss's
curvature at α_T astronomically small (the flow then needs ~1e177 time units), and a norm like
1e-148 adds ~1e-150 to the LSA gap, below anything float64 can tell from 0: numerical edges, not
properties of the theory, so the strategies keep away from them."""
positive_norms = st.floats(min_value=0.05, max_value=5.0)
"""A squared norm in [0.05, 5], never 0 (the ends of a law with signal)."""
grid_norms = st.integers(0, 20).map(lambda k: k / 4)
"""0, 0.25, …, 5: atoms on a grid are at least 1/4 apart, so a law that is not a point law has
an LSA gap well above rounding."""
shapes = st.floats(min_value=0.3, max_value=4.0)
"""Beta exponents; below 1 the density is singular at that end."""
raw_weights = st.floats(min_value=0.05, max_value=1.0)
"""An unnormalised weight in [0.05, 1] (``probability_vectors`` divides by their sum), so that no
piece of a mixture or atom of a discrete law is negligible."""
widths = st.floats(min_value=0.05, max_value=3.0)
"""The width b − a of a support interval, in [0.05, 3]."""
zeta_constants = st.one_of(st.floats(min_value=0.2, max_value=3.0), st.floats(min_value=-3.0, max_value=-0.2))
"""The value c of ``zeta=const(c)``: |c| in [0.2, 3], either sign."""
dims = st.integers(min_value=1, max_value=4)
"""A modality's dimension d1 or d2, from 1 to 4."""


def _normalised(raw) -> tuple[float, ...]:
    total = sum(raw)
    return tuple(w / total for w in raw)


def probability_vectors(size: int, unequal: bool = False):
    """``size`` probabilities (each ≥ 0.05 before normalising) summing to 1; ``unequal``: the
    largest is at least 1.5 times the smallest."""
    raw = st.lists(raw_weights, min_size=size, max_size=size)
    if unequal:
        raw = raw.filter(lambda w: max(w) >= 1.5 * min(w))
    return raw.map(_normalised)


# --------------------------------------------------------------------------- supports and atoms


@st.composite
def intervals(draw, low=squared_norms):
    """A support ``(a, b)``: ``a`` from ``low``, ``b − a`` in [0.05, 3]."""
    a = draw(low)
    return a, a + draw(widths)


def atoms(values=squared_norms):
    """A point mass at a value drawn from ``values``."""
    return values.map(Point)


atoms_at_zero = st.just(Point(0.0))
"""The point law at s = 0 (every prompt has m = 0: no signal)."""
positive_atoms = atoms(positive_norms)
"""A point law at a squared norm in [0.05, 5]."""

# --------------------------------------------------------------------------- continuous pieces


@st.composite
def uniform_laws(draw, support=None):
    """A uniform law on an interval drawn by ``support`` (default ``intervals()``), as ``Beta(1, 1, a, b)``."""
    a, b = draw(support if support is not None else intervals())
    return Beta(1.0, 1.0, a, b)


@st.composite
def beta_laws(draw, support=None, asymmetric: bool = False):
    """A Beta piece ``a + (b − a)·Beta(p, q)``; ``asymmetric``: ``|p − q| ≥ 0.25``, so a
    parameter swapped with its partner changes the law."""
    pair = st.tuples(shapes, shapes)
    if asymmetric:
        pair = pair.filter(lambda pq: abs(pq[0] - pq[1]) >= 0.25)
    p, q = draw(pair)
    a, b = draw(support if support is not None else intervals())
    return Beta(p, q, a, b)


continuous_laws = st.one_of(uniform_laws(), beta_laws())
"""A uniform or Beta law of s on a bounded interval."""

# --------------------------------------------------------------------------- discrete laws and mixtures


@st.composite
def discrete_laws(draw, values=squared_norms, min_size: int = 2, max_size: int = 4, unequal: bool = False):
    """Distinct atoms from ``values`` with probabilities ≥ 0.05 (before normalising)."""
    vals = draw(st.lists(values, min_size=min_size, max_size=max_size, unique=True))
    return Discrete(tuple(vals), draw(probability_vectors(len(vals), unequal=unequal)))


@st.composite
def mixtures(draw, parts=None, min_size: int = 2, max_size: int = 3, unequal: bool = False):
    """A mixture of 2–3 laws drawn from ``parts`` (default: Beta pieces and atoms)."""
    parts = parts if parts is not None else st.one_of(continuous_laws, atoms())
    comps = draw(st.lists(parts, min_size=min_size, max_size=max_size))
    return Mixture(tuple(comps), draw(probability_vectors(len(comps), unequal=unequal)))


@st.composite
def zero_atom_mixtures(draw, continuous=None):
    """``mix(w·point(0), (1 − w)·C)``: prompts with m = 0 next to a continuous part ``C`` (default:
    a Beta piece away from 0, so that s_lo over m ≠ 0 is not 0)."""
    cont = draw(continuous if continuous is not None else
                st.one_of(uniform_laws(intervals(positive_norms)), beta_laws(intervals(positive_norms))))
    w = draw(st.floats(min_value=0.05, max_value=0.9))
    return Mixture((Point(0.0), cont), (w, 1.0 - w))


plain_scalar_laws = st.one_of(continuous_laws, discrete_laws(), mixtures())
"""Any bounded law of one squared norm (a Beta piece, a discrete law, or a mixture of pieces and
atoms), as a plain ``ScalarLaw`` (no facts: see ``scalar_laws``)."""

separated_scalar_laws = st.one_of(atoms(), continuous_laws, discrete_laws(grid_norms))
"""A point mass, a Beta piece, or atoms on the grid of ``grid_norms`` (at least 1/4 apart)."""

asymmetric_scalar_laws = st.one_of(
    beta_laws(asymmetric=True),
    discrete_laws(unequal=True),
    mixtures(st.one_of(beta_laws(asymmetric=True), positive_atoms, atoms_at_zero), unequal=True),
    zero_atom_mixtures(),
    zero_atom_mixtures(beta_laws(intervals(positive_norms), asymmetric=True)),
)
"""Laws with no symmetry: Beta pieces with p ≠ q, atoms with unequal weights, mixtures of these
with atoms (at 0 too), an atom at 0 next to a continuous part."""


def has_signal(law) -> bool:
    """Some prompts have m ≠ 0 (a scalar law or a task law), asked of the law itself."""
    sig = law.signal_bounds() if isinstance(law, TaskLaw) else law.signal_support()
    return sig is not None


def spread(law) -> float:
    """``s_hi − s_lo`` over the prompts with m ≠ 0 (0 when there are none), asked of the law."""
    sig = law.signal_bounds() if isinstance(law, TaskLaw) else law.signal_support()
    return 0.0 if sig is None else sig[1] - sig[0]


# --------------------------------------------------------------------------- plain task laws


@st.composite
def task_laws_from(draw, scalar=plain_scalar_laws, require_signal: bool = True):
    """A bounded plain ``TaskLaw``: the law of ‖m‖² from ``scalar`` (a strategy of ``ScalarLaw``), a
    random ζ law and random d1, d2; ``require_signal``: with some signal (s_hi > 0.05)."""
    if require_signal:
        scalar = scalar.filter(lambda law: law.support()[1] > 0.05 and has_signal(law))
    return TaskLaw(s=draw(scalar), zeta=draw(zeta_laws()), d1=draw(dims), d2=draw(dims))


@st.composite
def per_modality_task_laws(draw, sv=plain_scalar_laws, sr=plain_scalar_laws, anisotropic: bool = False):
    """Independent laws of ‖v‖² and ‖r‖²; ``anisotropic``: the directions of v may be stretched
    (only when d1 > 1).  May have no signal (sv = sr = point(0)): see ``has_signal``."""
    d1, d2 = draw(dims), draw(dims)
    stretch = None
    if anisotropic and d1 > 1:
        stretch = draw(st.none() | st.tuples(*[st.floats(0.3, 3.0)] * d1))
    return TaskLaw(d1=d1, d2=d2, sv=draw(sv), sr=draw(sr), zeta=draw(zeta_laws()), anisotropy_v=stretch)


non_degenerate_task_laws = task_laws_from(plain_scalar_laws.filter(lambda law: spread(law) > 0.05))
"""Laws whose s varies (by more than 0.05) over the prompts with m ≠ 0."""

any_task_laws = st.one_of(task_laws_from(), per_modality_task_laws().filter(has_signal))
"""A law of s, or laws of ‖v‖² and ‖r‖², with some signal."""

# --------------------------------------------------------------------------- LAW text

number_formats = st.sampled_from([
    repr,
    lambda x: f"{x:.17g}",
    lambda x: f"{x:.17e}",
    lambda x: str(int(x)) if float(x).is_integer() else repr(x),
])
"""Ways to write a float that all read back as the same float."""
spaces = st.sampled_from(["", " "])
"""The white space LAW text may carry between its tokens (none or one space)."""


@st.composite
def _number(draw, x: float) -> str:
    return draw(number_formats)(float(x))


@st.composite
def _list(draw, items: list[str]) -> str:
    return ("," + draw(spaces)).join(items)


@st.composite
def dist_texts(draw, bounded: bool = True, nested: bool = True):
    """``(DIST text, the ScalarLaw it describes)`` for every form of the grammar: point, uniform,
    beta, twopoint, discrete, mix (of non-mix parts) and, unless ``bounded``, exponential."""
    kinds = ["point", "uniform", "beta", "twopoint", "discrete"] + (["mix"] if nested else [])
    kind = draw(st.sampled_from(kinds + ([] if bounded else ["exponential"])))
    num = lambda x: draw(_number(x))  # noqa: E731
    if kind == "point":
        c = draw(squared_norms)
        return f"point({num(c)})", Point(c)
    if kind == "uniform":
        a, b = draw(intervals())
        return f"uniform({draw(_list([num(a), num(b)]))})", Beta(1.0, 1.0, a, b)
    if kind == "beta":
        law = draw(beta_laws())
        return f"beta({draw(_list([num(law.p), num(law.q), num(law.a), num(law.b)]))})", law
    if kind == "twopoint":
        a, b = draw(st.lists(squared_norms, min_size=2, max_size=2, unique=True))
        p = draw(st.floats(min_value=0.05, max_value=0.95))
        return f"twopoint({draw(_list([num(a), num(b), num(p)]))})", TwoPoint(a, b, p)
    if kind == "discrete":
        values = draw(st.lists(squared_norms, min_size=2, max_size=4, unique=True))
        probs = draw(probability_vectors(len(values)))
        atoms_text = [f"{num(v)}:{num(p)}" for v, p in zip(values, probs)]
        return f"discrete({draw(_list(atoms_text))})", Discrete(tuple(values), probs)
    if kind == "exponential":
        rate = draw(st.floats(min_value=0.1, max_value=5.0))
        return f"exponential({num(rate)})", Exponential(rate)
    parts = draw(st.lists(dist_texts(bounded=bounded, nested=False), min_size=2, max_size=3))
    probs = draw(probability_vectors(len(parts)))
    text = f"mix({draw(_list([f'{num(w)}*{t}' for w, (t, _) in zip(probs, parts)]))})"
    return text, Mixture(tuple(law for _, law in parts), probs)


@st.composite
def written_laws(draw, bounded: bool = True):
    """``(LAW text, the TaskLaw it describes)``: ``s=DIST`` or ``sv=DIST; sr=DIST``, with ``zeta``,
    ``d1`` and ``d2`` each written or left to its default, items in any order."""
    items, kw = [], {}
    if draw(st.booleans()):
        text, law = draw(dist_texts(bounded))
        items.append(f"s={text}")
        kw["s"] = law
    else:
        (tv, lv), (tr, lr) = draw(dist_texts(bounded)), draw(dist_texts(bounded))
        items += [f"sv={tv}", f"sr={tr}"]
        kw.update(sv=lv, sr=lr)
    zeta = draw(st.sampled_from([None, "normal", "rademacher", "const"]))
    if zeta == "const":
        c = draw(zeta_constants)
        items.append(f"zeta=const({draw(_number(c))})")
        kw["zeta"] = ZetaLaw("const", c)
    elif zeta is not None:
        items.append(f"zeta={zeta}")
        kw["zeta"] = ZetaLaw(zeta)
    for key in ("d1", "d2"):
        if draw(st.booleans()):
            kw[key] = draw(dims)
            items.append(f"{key}={kw[key]}")
    sep = draw(st.sampled_from([";", "; ", " ; "]))
    return sep.join(draw(st.permutations(items))), TaskLaw(**kw)


# =========================================================================== cases beyond laws


def _dims(d):
    if isinstance(d, bool) or not (isinstance(d, int) or isinstance(d, st.SearchStrategy)):
        raise InvalidArgument(f"d is a whole number ≥ 1 or a strategy of them, got {d!r}")
    if isinstance(d, int) and d < 1:
        raise InvalidArgument(f"d is a whole number ≥ 1, got {d}")
    return st.just(d) if isinstance(d, int) else d


def _spectrum_bounds(lo, hi):
    if not (isinstance(lo, (int, float)) and isinstance(hi, (int, float)) and 0 < lo <= hi < math.inf):
        raise InvalidArgument(f"a spectrum lies in [lo, hi] with 0 < lo ≤ hi < ∞, got lo={lo!r}, hi={hi!r}")
    if hi / lo > 1e8:
        raise InvalidArgument(f"hi/lo = {hi / lo:.3g} > 1e8: float64 cannot keep such a matrix positive definite "
                              "through its rotation; narrow the range")


def spectra(d=st.integers(1, 4), lo: float = 1.0, hi: float = 10.0):
    """A spectrum: ``d`` eigenvalues in ``[lo, hi]`` (0 < lo ≤ hi, hi/lo ≤ 1e8), sorted ascending, as
    a tuple of floats.  ``d``: a whole number or a strategy of them (default 1 to 4).  Shrinks toward
    eigenvalues equal to ``lo`` (the identity's spectrum, scaled)."""
    _spectrum_bounds(lo, hi)
    dims = _dims(d)
    values = st.floats(min_value=float(lo), max_value=float(hi), allow_nan=False)
    return dims.flatmap(lambda n: st.lists(values, min_size=n, max_size=n).map(lambda v: tuple(sorted(v))))


def positive_definite_matrices(d=st.integers(1, 4), lo: float = 1.0, hi: float = 10.0):
    """A symmetric positive definite ``d × d`` matrix (a numpy array) with its eigenvalues in
    ``[lo, hi]`` up to rounding: Q·diag(λ)·Qᵀ with λ from ``spectra(d, lo, hi)`` and Q the
    orthogonal factor of I + E (E's entries in [−1, 1]), symmetrised.  The eigenvalues are λ within
    about 10·d·ε·hi, so the matrix is positive definite for hi/lo ≤ 1e8 (checked at ``lo``).
    Shrinks toward ``lo``·I: E toward 0 (a diagonal matrix), λ toward ``lo``."""
    import numpy as np

    _spectrum_bounds(lo, hi)
    dims = _dims(d)
    entries = st.floats(min_value=-1.0, max_value=1.0, allow_nan=False)

    @st.composite
    def matrix(draw):
        n = draw(dims)
        lam = np.array(draw(spectra(n, lo, hi)))
        e = np.array(draw(st.lists(entries, min_size=n * n, max_size=n * n))).reshape(n, n)
        q, r = np.linalg.qr(np.eye(n) + e)
        if np.min(np.abs(np.diag(r))) < 1e-6:  # I + E (nearly) singular: its Q is not well defined
            q = np.eye(n)
        m = (q * lam) @ q.T
        return (m + m.T) / 2
    return matrix()
