"""``mmicl certify``: certified enclosures of α_T and of Theorem 4.1's gap, re-checked independently."""
from __future__ import annotations

import json
from pathlib import Path

import click
from mmicl.proofs.certificates.alpha import MAX_CERTIFY_DEPTH

from mmicl.commands.common import Command, WritablePath, depth_type, emit_json, load_law
from mmicl.numerics.validate import InputError
from mmicl.proofs.certificates.alpha import certify_alpha_T, check_width
from mmicl.numerics.strict_json import dumps
from mmicl.proofs.certificates.check import check
from mmicl.proofs.certificates.document import bundle, read_certificate, write_certificate

__all__ = ["Width", "certify"]



class Width(click.ParamType):
    """A positive exact decimal in [1e-100, 1], read as a rational (``1e-12`` is exactly 10^−12)."""

    name = "width"

    def convert(self, value, param, ctx):

        try:
            return check_width(value if not isinstance(value, (int, float)) else str(value))
        except InputError as e:
            self.fail(str(e), param, ctx)

    def get_metavar(self, param, ctx=None):
        return "W"


@click.command("certify", cls=Command)
@click.option("--law", "law_text", required=True, metavar="LAW",
              help="Task law with exact decimal parameters, e.g. 's=uniform(0.5,4)' (see 'mmicl laws').")
@click.option("--T", "T", type=depth_type(MAX_CERTIFY_DEPTH), default=None,
              help=f"Depth of the LCA, from 1 to {MAX_CERTIFY_DEPTH}: certify α_T.")
@click.option("--width", type=Width(), default="1e-12", show_default=True,
              help="The enclosure of α_T is narrower than this (a decimal in [1e-100, 1]).")
@click.option("--gap", is_flag=True, help="Also certify Theorem 4.1's gap of the best single-layer LSA (n → ∞).")
@click.option("--all-T", "all_T", is_flag=True,
              help="Certify α_T at every depth: its side of α* for every T ≥ 1, and α* − α_T within an explicit "
                   "third-order bound of its two-term expansion for T ≥ T0 (laws with atoms at the ends of the "
                   "support and integer Beta pieces on all of it; see docs/certificates.md).")
@click.option("--out", type=WritablePath("file"), default=None,
              help="Write the certificate (JSON; a bundle with --T and --gap) to FILE, atomically.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def certify(law_text, T, width, gap, all_T, out, as_json):
    """Prove that α_T is unique and lies in [lo, hi] (hi − lo < W), and/or enclose Thm 4.1's gap, and/or
    bound α* − α_T at every depth (--all-T), in exact rational and interval arithmetic; then re-verify the certificate with the independent checker
    (mmicl.proofs.certificates.check, standard library only).  Exit status 1 if the check fails.

    \b
    JSON: {"schema_version", "law", "T", "alpha_T": {"lo", "hi", "lo_rational", "hi_rational"}, "unique",
    "width", "hi_minus_lo", "gap": {"lo", "hi", "lo_rational", "hi_rational", "exact", "positive"},
    "all_T": {"statement", "T0", "K", "expansion", "bounds": [{"T", "lo", "hi"}]} (or {"certified": false,
    "reason"} for a law or step the proof does not cover; exit status 1), "checked", "check_reasons", "certificate", "seconds"}; "lo"/"hi" are exact decimals of the rationals
    for α_T and outward roundings of the bounds for the gap."""
    from mmicl.proofs.certificates.gap import certify_gap

    if T is None and not gap and not all_T:
        raise click.UsageError("give --T T (certify α_T), --gap (certify Theorem 4.1's gap), --all-T (every depth), "
                               "or several of them")
    load_law(law_text)  # a bad LAW, or one beyond the numerics' scale, is a usage error naming --law
    certs, out_json = [], {"law": law_text.strip()}
    if T is not None:
        cert = certify_alpha_T(law_text, T, width)
        certs.append(cert)
        c = cert["claim"]
        out_json.update({"T": T, "alpha_T": {k: c[k] for k in ("lo", "hi", "lo_rational", "hi_rational")},
                         "unique": True, "width": c["width"], "hi_minus_lo": c["hi_minus_lo"]})
    if gap:
        cert = certify_gap(law_text)
        certs.append(cert)
        c = cert["claim"]
        out_json["gap"] = {k: c[k] for k in ("lo", "hi", "lo_rational", "hi_rational", "exact", "positive")}
    if all_T:
        from mmicl.proofs.certificates.all_depths import NotCertifiable, certify_all_depths, tail_bounds

        try:
            cert = certify_all_depths(law_text, width)
        except NotCertifiable as e:
            out_json["all_T"] = {"certified": False, "reason": str(e)}
            if not certs:
                if as_json:
                    emit_json(out_json)
                else:
                    click.echo(f"law          {out_json['law']}")
                    click.echo(f"every T      not certified: {e}")
                raise SystemExit(1)
        else:
            certs.append(cert)
            c = cert["claim"]
            shown = sorted({1, c["T0"] - 1, c["T0"], 10 * c["T0"], 10**6})
            out_json["all_T"] = {
                "certified": True, "statement": c["statement"], "T0": c["T0"], "K": c["K"],
                "expansion": {k: c[k] for k in ("alpha_star", "lambda_ratio", "C", "E2", "E1", "E0")} | {"A": c["ends"]["A"]},
                "bounds": [{"T": t, **dict(zip(("lo", "hi"), tail_bounds(cert, t)))} for t in shown]}
    doc = certs[0] if len(certs) == 1 else bundle(certs)
    if out is not None:
        write_certificate(out, doc)
        written = read_certificate(out)  # the checker sees exactly what was written
    else:
        written = json.loads(dumps(doc))
    ok, reasons = check(written)
    out_json.update({"checked": ok, "check_reasons": reasons,
                     "certificate": str(Path(out)) if out is not None else None,
                     "seconds": {c["certificate"]: c["provenance"]["seconds"]["total"] for c in certs}})
    if out is None:
        out_json["certificate_null_reason"] = "no --out FILE given: the certificate was checked in memory"
    if as_json:
        emit_json(out_json)
    else:
        _print(out_json)
    if not ok or not out_json.get("all_T", {"certified": True})["certified"]:
        raise SystemExit(1)


def _print(o: dict) -> None:
    click.echo(f"law          {o['law']}")
    if "alpha_T" in o:
        a = o["alpha_T"]
        click.echo(f"alpha_T      T = {o['T']}: unique, in [{a['lo']}, {a['hi']}]  (hi − lo = {o['hi_minus_lo']} < {o['width']})")
    if "gap" in o:
        g = o["gap"]
        what = "exact" if g["exact"] else "bounds"
        click.echo(f"LSA gap      {g['lo']} ≤ G ≤ {g['hi']} ({what}); {'G > 0' if g['positive'] else 'G = 0'}")
    if "all_T" in o:
        a = o["all_T"]
        if not a["certified"]:
            click.echo(f"every T      not certified: {a['reason']}")
        else:
            click.echo(f"every T      {a['statement']}")
            click.echo(f"             for T ≥ {a['T0']}, n = 2T − 1: |α* − α_T − δ_c(n)| < K(1 + log n)³/n³, K = {a['K']}")
            click.echo("             δ_c(n) = (A log n + C)/n + (E2 log²n + E1 log n + E0)/n²  (coefficients in --json)")
            for b in a["bounds"]:
                click.echo(f"             T = {b['T']:<8} α* − α_T ∈ ({b['lo']:.10e}, {b['hi']:.10e})")
    click.echo(f"checked      {'yes, by the independent checker' if o['checked'] else 'NO'}")
    for r in o["check_reasons"]:
        click.echo(f"  - {r}")
    if o["certificate"]:
        click.echo(f"certificate  {o['certificate']}  (re-check: python -m mmicl.proofs.certificates.check FILE)")
