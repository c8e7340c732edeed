"""Mutation test of mmicl's maths: does the test suite fail when a formula breaks?

Run as a script (pytest does not collect it: the name does not start with ``test_``)::

    python tools/mutation.py                       # every mutant, on a copy of HEAD
    python tools/mutation.py --only NAME[,NAME..]  # some mutants (the option may be repeated)
    python tools/mutation.py --json OUT.json       # also write the report as JSON
    python tools/mutation.py --list                # the mutations, and where each snippet is now
    python tools/mutation.py --worktree            # a copy of the working tree instead of a commit
    python tools/mutation.py --set core|extended   # the maths mutants, or the per-package ones

A test entry of a mutation may be a file or a node id (``file.py::test``): each mutant of the
extended set runs its own package's selection only (``STATS``, ``CERTS``, ``STORE``, ``VALIDATE``, …),
so that one mutant costs seconds, not the whole suite.

How it works
------------
1. A *source tree* is exported to a scratch folder under /tmp (never /work/main, which others
   edit): ``git archive REV`` (default HEAD; the commit hash goes into the report), or with
   ``--worktree`` the tracked and untracked-but-not-ignored files of the working tree as they are
   now.  Its ``mmicl/`` folder gets symlinks ``theory``, ``numerics``, ``proofs`` to the copy's
   folders, so that with ``PYTHONPATH=<copy>`` and the copy as working directory, ``import mmicl``
   and every ``mmicl.*`` module load from the copy (the editable install's finder, which points at
   /work/main, sits *after* the path finder on ``sys.meta_path`` and is never asked).  This is
   checked on every run, not assumed: a small pytest plugin (``-p _mutation_probe``) records the
   file of every loaded ``mmicl*`` module (after collection, and again at the end, so that a
   mutant whose test never ends is still known to have run on the copy), and a run where one of
   them lies outside the copy is an error.
2. Each mutation is a snippet (exact text or a regular expression) and its replacement.  The
   snippet is searched for in every ``.py`` file under ``theory/``, ``numerics/`` (with
   ``numerics/testbed/``) and ``proofs/`` (with its certificates, sweep and claims), so a function that moved to another module is still found.  A snippet
   found nowhere is reported ``not-found``; found more than once, ``ambiguous`` (the mutation must
   then be made more specific); both are left out of the score.  A mutated file that does not
   compile is ``invalid`` (a bug in the mutation, also left out).
3. For each mutant a fresh copy of the source tree is made, the one file is rewritten, and
   ``nice -n 10 python -m pytest -q -x -n 0 -p no:cacheprovider --hypothesis-seed=0 <mapped test files>``
   runs in it, one mutant at a time, with ``PYTHONDONTWRITEBYTECODE=1`` (no stale ``.pyc`` across
   copies) and one BLAS/OpenMP thread.  The probe plugin also turns off Hypothesis's shrink phase
   (the examples tried are the same, and any failure is reported; only the minimisation of a
   failing example, which can take minutes, is skipped).  pytest exit status 1 (a test failed) or 2 (collection
   failed, e.g. a module-level law no longer parses) is *killed*; 0 is *survived*; past the time
   limit the process group is killed and the mutant is *timeout* (counted as killed in the score,
   listed separately); anything else is an *error*.
   Score = killed / (killed + survived + timeout).
4. Compiled theory formulas are cached on disk under a key made of a hash of ``theory/``; the
   builders of some of them live in numerics modules.  Each mutant gets its own cache folder:
   empty when the mutated file is under ``theory/`` or contains ``compiled(`` (a builder), else a
   copy of the cache the unmutated baseline run filled (nothing it holds can depend on that file).
5. Before the mutants, every mapped test file runs once on the unmutated copy (the *baseline*): it
   must pass, and its time sets the mutants' time limit (``3 × baseline + 60 s`` unless
   ``--timeout``).  A failing baseline file stops the run (``--no-baseline`` skips this).
"""
from __future__ import annotations

import argparse
import dataclasses
import datetime as _dt
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SEARCHED = ("theory", "numerics", "proofs", "mmicl")
EXCLUDED: tuple[str, ...] = ()
"""Every package is searched: ``theory/``, ``numerics/`` with ``numerics/testbed/``, ``proofs/``
with ``proofs/certificates/``, ``numerics/runs/`` and ``proofs/claims/``, and ``mmicl/``."""

# test files, relative to tests/; fast ones first within each list (pytest -x stops at the first
# failure, so the cheap killers should run first)
THEORY = ["theory/test_derivations.py"]
LAWS = ["numerics/test_laws.py"]
LCA = ["theory/test_derivations.py", "numerics/test_lca.py", "numerics/test_lca_properties.py"]
LSA = ["numerics/test_lsa.py", "numerics/test_lsa_properties.py"]
FLOWS = ["numerics/test_lca.py", "shell/test_api.py"]
SAMPLING = ["numerics/test_sampling.py", "numerics/test_models.py"]
# per-package selections for the extended set: an entry may be a node id (``file.py::test``), so that
# a mutant runs only the tests that exercise its code
STATS = ["numerics/testbed/test_intervals.py"]
ESTIMATE = ["numerics/test_estimate.py"]
ATOMIC = ["numerics/test_atomic.py", "numerics/runs/test_sweeps.py"]
VALIDATE = ["shell/test_api_guards.py"]
REST_TWO = ["numerics/test_two_parameter_accuracy.py::test_a_saddle_is_not_a_rest_point"]  # the whole file: ~3 min
UNBOUNDED = ["numerics/test_unbounded_laws.py", "shell/test_api.py"]
CERTS = ["proofs/test_forged_certificates.py"]
STORE = ["numerics/runs/test_store.py", "numerics/runs/test_sweeps.py"]
VERDICTS = ["proofs/test_verdict_rule.py"]
# files mmicl reads back and writes: the tests that make the damage themselves
FOLDER = ["shell/test_results_folder.py"]
CHECKPOINTS = ["numerics/testbed/test_checkpoints.py"]
RESUME = ["numerics/testbed/test_resume.py"]
STORE_CHECKS = ["numerics/runs/test_store_integrity.py"]
CLAIM_API = ["proofs/test_claim_api.py"]  # the public claim API and plugins
# mmicl.testing and the pytest plugin.  Not the whole of test_testing_api.py: two of its tests are
# about shrinking, which the harness's probe turns off (they fail on the unmutated copy there)
FACTS = ["shell/test_testing_api.py::test_the_facts_of_a_drawn_task_law_are_the_laws_own",
         "shell/test_testing_api.py::test_the_facts_of_a_drawn_scalar_law_are_the_laws_own"]
BASELINES = ["shell/test_regression_example.py"]
BASELINE_GUARDS = ["shell/test_baseline_fixture.py"]
CLAIM_GUARDS = ["proofs/test_claim_guards.py"]
COMPARE = ["shell/test_compare.py"]
COMPARE_SETTINGS = ["shell/test_compare_settings.py"]  # runs that differ in seed, size, law, case
CASES = ["proofs/test_cases.py"]
MULTIPLICITY = ["numerics/testbed/test_multiplicity.py"]
POWER_LAW = ["numerics/testbed/test_sign_tests.py::test_outcome_probabilities_match_a_simulation_of_seed_outcomes",
             "numerics/testbed/test_sign_tests.py::test_the_two_family_rule_decides_as_a_simulation_of_it_does",
             "numerics/testbed/test_sign_tests.py::test_the_two_family_rule_keeps_its_level_and_the_guard_only_removes_decisions"]
HEADROOM = ["proofs/testbed/test_common.py::test_headroom_is_the_room_above_a_baseline_for_the_margin_and_two_se"]  # Holm over the testbed claims' decisive checks  # a claim's own kind of case, the z-check, the case builders
LSA_TRAINING = ["proofs/test_lsa_claim.py::test_training_verdict_is_two_sided_reports_stalls_and_can_be_inconclusive"]
V4_PILOTS = ["proofs/testbed/test_pilots.py"]
V4_HEADS = ["numerics/testbed/test_balanced_iwl_and_ablation.py"]
ATTENTION_PATCH = ["numerics/testbed/test_attention_patch.py"]  # claim 8 version 4.1
RESOLUTION = ["numerics/test_resolution.py"]  # values below a function's resolution
ORDERS = ["numerics/test_depth_expansion_orders.py::test_one_law_of_each_end_class_leaves_the_derived_third_order_after_two",
          "numerics/test_asymptotics.py::test_the_log_coefficient_on_a_beta_2_3_law_agrees_within_a_bound_below_1e_9_at_T_1e6",
          "numerics/test_asymptotics.py::test_the_numbers_docs_limits_states"]  # α* − α_T to the third order
CLAIM8_PATCH = ["proofs/testbed/test_unimodal_claims.py::test_claim8s_patch_differences_read_the_uniform_patch_against_copy_and_the_matching_patch_against_it"]
V4_CLAIM9 = ["proofs/testbed/test_transfer_claims.py::test_the_v4_control_is_a_non_induction_head_of_the_top_layer_else_of_the_decoder_else_none",
             "proofs/testbed/test_transfer_claims.py::test_paired_changes_are_means_of_per_sequence_differences_with_their_paired_se"]
V4_RESULTS = ["proofs/testbed/test_design.py"]
ALL_DEPTHS = ["proofs/test_all_depths.py"]  # α_T certified at every depth
V4_DATA = ["numerics/testbed/test_multimodal_testbed.py"]
V4_TRANSFER = ["proofs/testbed/test_transfer_claims.py"]
V4_MODALITIES = ["proofs/testbed/test_modality_claims.py"]
V4_MARGINS = ["proofs/testbed/test_design.py::test_the_v4_stage2_margins_follow_their_stated_rule_on_the_size_pilot"]
SELECT = ["proofs/test_claim_api.py::test_a_pattern_whose_namespace_is_reserved_and_written_out_can_match_only_built_in_claims",
          "proofs/test_claim_api.py::test_selecting_built_in_claims_imports_no_installed_plugin"]
VARIANT_GUARDS = ["numerics/test_variant_guards.py"]
TOLERANCES = ["proofs/test_number_tolerances.py::test_a_per_key_tolerance_judges_each_number_by_its_own",
              "proofs/test_number_tolerances.py::test_a_summary_states_its_tolerance_through_summary",
              "proofs/test_number_tolerances.py::test_a_claims_summary_tolerance_reaches_its_result",
              "proofs/test_number_tolerances.py::test_a_sampled_number_false_alarms_as_often_as_stated"]
VARIANTS = ["numerics/test_variants.py", "numerics/test_variant_models.py", "docs/test_variants_page.py"]  # LCA variants
SIGN_TESTS = ["numerics/testbed/test_sign_tests.py", "proofs/testbed/test_common.py"]  # the testbed's decisions
UNIMODAL = ["proofs/testbed/test_unimodal_claims.py", "numerics/testbed/test_balanced_iwl_and_ablation.py"]
PILOT_RULES = ["proofs/testbed/test_pilots.py"]
FAMILY_VERDICTS = ["proofs/testbed/test_design.py::test_each_family_alone_is_decided_by_the_registrys_rule_on_its_own_outcomes_and_premise_counts"]
EVAL_ON = ["numerics/testbed/test_multimodal_testbed.py::test_measuring_some_sets_gives_exactly_their_metrics_of_the_full_evaluation"]
CHUNKED = ["numerics/testbed/test_chunked_evaluation.py"]  # sliced evaluation, sets drawn on request
AREA_SE = ["numerics/testbed/test_sign_tests.py::test_area_under_se_is_the_area_under_the_binomial_se_curve_and_at_most_its_maximum",
           "numerics/testbed/test_sign_tests.py::test_area_under_se_bounds_the_spread_of_areas_and_is_attained_by_perfectly_correlated_evaluations"]


@dataclasses.dataclass(frozen=True)
class Mutation:
    name: str
    snippet: str  # exact text, or a regular expression if regex=True
    replacement: str  # for a regex: a re.sub template (\1 … refer to groups)
    tests: tuple[str, ...]
    why: str  # what maths the mutant breaks
    regex: bool = False
    variants: tuple[tuple[str, str, bool], ...] = ()
    """Other ``(snippet, replacement, regex)`` forms of the same mutation, for code that was
    rewritten (not only moved) since the first form was written: the first form found is used."""

    def forms(self) -> list[tuple[str, str, bool]]:
        return [(self.snippet, self.replacement, self.regex), *self.variants]


GUARDS = "numerics/test_law_and_loss_identities.py"
"""Tests written for the survivors of the first run; it runs first for every mutant (it is fast).
A mapped test file that the source tree lacks (this one, in a tree older than it) is left out of
that run and listed in the report."""


def M(name, snippet, replacement, tests, why, regex=False, variants=(), guards=(GUARDS,)):
    return Mutation(name, snippet, replacement, tuple(dict.fromkeys([*guards, *tests])), why, regex,
                    tuple(variants))


def N(name, snippet, replacement, tests, why, regex=False, variants=()):
    """A mutant of the extended set: its own per-package test selection, without ``GUARDS`` (the
    maths guards of the core set, which do not touch these packages)."""
    m = M(name, snippet, replacement, tests, why, regex, variants, guards=())
    EXTENDED.add(name)
    return m


EXTENDED: set[str] = set()
"""Names of the mutants of the extended set (``--set extended``); the others are the core set (``--set core``)."""


def test_file(entry: str) -> str:
    """The file of a test entry (a file name or a node id ``file.py::test``)."""
    return entry.split("::", 1)[0]


MUTATIONS: list[Mutation] = [
    # ------------------------------------------------------------------ theory/model.py
    M("model_lambda", "lam = 1 + s  #", "lam = 2 + s  #", LCA,
      "the eigenvalue of Λ on span{m} is 2 + s instead of 1 + s"),
    M("model_coordinate", "reduced_coordinate = sp.sqrt(s) * u + g", "reduced_coordinate = s * u + g",
      THEORY, "a = s·u + g: the signal coordinate uses ‖m‖² for ‖m‖"),
    M("model_isserlis", "sp.factorial2(k - 1)", "sp.factorial(k - 1)", THEORY + LSA,
      "E[z^k] = (k−1)! instead of (k−1)!!: wrong at k = 0 ((−1)! is not finite) and from k = 4 on"),
    M("model_bayes_risk", "risk=sp.simplify(r.subs(c, c_star))", "risk=sp.simplify(r.subs(c, c_star / 2))",
      THEORY, "the Bayes risk is evaluated at half the Bayes coefficient"),
    # ------------------------------------------------------------------ theory/lca.py
    M("lca_rsolve_skip_sign", "(1 + w_value * lam) * p(_t) - w_skip,", "(1 + w_value * lam) * p(_t) + w_skip,",
      LCA, "the closed-form recurrence p_{t+1} = (1 + w_V λ)p_t − w_S (skip sign flipped)"),
    M("lca_depth_loop", r"(for _ in range\()depth(\):\n\s*p = sp\.expand)", r"\1depth - 1\2", THEORY,
      "query_factor_at_depth runs depth − 1 layers (off by one)", regex=True),
    M("lca_one_parameter_sign", '_build("one-parameter", (alpha,), alpha, -alpha)',
      '_build("one-parameter", (alpha,), alpha, alpha)', LCA, "W^V = +αI instead of −αI"),
    M("lca_readout_sqrt", "coefficient = zeta * sp.sqrt(s) * factor", "coefficient = zeta * s * factor",
      LCA, "the readout multiplies by s instead of √s"),
    M("lca_jet_initial", "initial = (lam * 0 - 1,)", "initial = (lam * 0 - sp.Rational(1, 2),)", LCA,
      "the jet starts at ρ = −1/2, i.e. F⁰ ≠ 0"),
    M("lca_jet_step_skip", "step = lam * ((1 + w_value * lam) * P + w_skip) - 1",
      "step = lam * ((1 + w_value * lam) * P - w_skip) - 1", LCA, "one jet layer subtracts the skip"),
    M("lca_alpha_star_minimax", "-(1 - alpha * (1 + s_hi))", "-(1 - alpha * (1 + 2 * s_hi))", LCA,
      "α* = 2/(2 + s_lo + 2 s_hi) instead of 2/(2 + s_lo + s_hi)"),
    # ------------------------------------------------------------------ theory/lsa.py
    M("lsa_mask", "M = sp.diag(*([1] * n + [0]))", "M = sp.diag(*([1] * (n + 1)))", LSA,
      "the query serves as its own key (no mask)"),
    M("lsa_closed_form_trace", "(G.T * Lam * G * (sp.eye(d) + 2 * m * m.T)).trace()",
      "(G.T * Lam * G * (sp.eye(d) + m * m.T)).trace()", LSA,
      "the closed form's 1/n term uses I + m mᵀ instead of I + 2 m mᵀ",
      variants=[('(f2 + q2 + 2 * p2 + 2 * t**2) / n', '(f2 + q2 + p2 + t**2) / n', False)]),
    # ------------------------------------------------------------------ quadrature (laws)
    M("quad_jacobi_roots_swapped", "special.roots_jacobi(n, a, b)", "special.roots_jacobi(n, b, a)",
      LAWS + ["numerics/test_lca.py"], "Gauss–Jacobi weight (1−x)^b x^a instead of (1−x)^a x^b"),
    M("quad_jacobi_left_swapped", r"(gauss_jacobi\(n, )0\.0, p - 1\.0\)", r"\1p - 1.0, 0.0)",
      LAWS + ["numerics/test_lca.py"], "the left end piece carries x^(p−1) at the wrong end", regex=True),
    M("quad_jacobi_unnormalised", "return (x + 1) / 2, w / w.sum()", "return (x + 1) / 2, w", LAWS,
      "Gauss–Jacobi weights not normalised to mass 1"),
    M("quad_no_grading", "finest = min(0.25, 1.0 / (8.0 * max(depth, 1)))", "finest = 0.25",
      LAWS + ["numerics/test_lca.py"], "no geometric grading towards the ends of the support"),
    M("beta_left_mass", "mass = h**p / p", "mass = h**p", LAWS, "∫_0^h x^(p−1) dx = h^p (the /p dropped)"),
    M("beta_right_mass", "mass = h**q / q", "mass = h**q / p", LAWS, "∫ (1−x)^(q−1) on the right piece divided by p"),
    M("beta_support_map", "return Rule(self.a + (self.b - self.a) * x, w)", "return Rule(self.a + self.b * x, w)",
      LAWS + ["numerics/test_lca.py"], "the Beta rule maps [0, 1] onto [a, a + b] instead of [a, b]"),
    M("beta_mean", "(self.b - self.a) * self.p / (self.p + self.q)", "(self.b - self.a) * self.q / (self.p + self.q)",
      LAWS, "the Beta law's mean uses q/(p + q)"),
    M("point_rule_weight", "return Rule(np.array([self.c]), np.array([1.0]))",
      "return Rule(np.array([self.c]), np.array([0.5]))", LAWS + ["numerics/test_lca.py"],
      "a point mass gets weight 1/2"),
    M("discrete_rule_weights", "return Rule(np.asarray(self.values, float), np.asarray(self.probs, float))",
      "return Rule(np.asarray(self.values, float), np.asarray(self.probs[::-1], float))",
      LAWS + ["numerics/test_lca.py"], "a discrete law's probabilities attached to the atoms in reverse"),
    M("discrete_signal_support_atom0", "pos = [v for v in self.values if v > 0]", "pos = [v for v in self.values if v >= 0]",
      LAWS + ["numerics/test_lca.py", "numerics/test_lca_properties.py", "proofs/test_lca_claims.py"],
      "an atom at s = 0 of a discrete law counts in s_lo"),
    M("mixture_signal_support_atom0", "sups = [c.signal_support() for c, p in zip(self.components, self.probs) if p > 0]",
      "sups = [c.support() for c, p in zip(self.components, self.probs) if p > 0]",
      LAWS + ["numerics/test_lca.py", "numerics/test_lca_properties.py", "proofs/test_lca_claims.py"],
      "a mixture's signal support includes its components' atoms at 0"),
    M("point_signal_support_zero", "return None if self.c == 0 else (self.c, self.c)", "return (self.c, self.c)",
      LAWS + ["numerics/test_lca.py"], "s ≡ 0 is taken to carry signal"),
    M("sum_signal_support_min", "return (min(lows), a1 + b1) if lows else None", "return (max(lows), a1 + b1) if lows else None",
      LAWS + ["numerics/test_lca.py", "proofs/test_lca_claims.py"],
      "S1 + S2: the lower end over m ≠ 0 is the larger of the two cases"),
    M("mixture_rule_unweighted", "return Rule.join([c.rule(depth) for c in self.components], self.probs)",
      "return Rule.join([c.rule(depth) for c in self.components], [1.0] * len(self.probs))",
      LAWS + ["numerics/test_lca.py"], "mixture components not weighted by their probabilities"),
    M("sum_product_rule_pairing", "weights = (r1.weights[:, None] * r2.weights[None, :]).ravel()",
      "weights = (r1.weights[:, None] * r2.weights[None, ::-1]).ravel()", LAWS + ["numerics/test_lca.py"],
      "the product rule pairs S2's weights with its nodes in reverse"),
    M("discrete_gauss_mass", "return theta, float(w.sum()) * V[0] ** 2", "return theta, V[0] ** 2", LAWS,
      "the compressed Gauss rule of a piece loses the piece's mass"),
    # ------------------------------------------------------------------ ζ and the task law
    M("zeta_const_second_moment", "return self.value**2", "return abs(self.value)",
      LAWS + ["numerics/test_lca_properties.py", "numerics/test_lsa_properties.py"], "E[ζ²] = |c| for ζ ≡ c"),
    M("zeta_samples_second_moment", "return float(np.mean(np.square(self.samples)))",
      "return float(np.mean(self.samples) ** 2)", LAWS + ["numerics/test_lsa.py"], "E[ζ²] = (E ζ)² for sampled ζ"),
    M("task_rule_zeta2", "return Rule(r.nodes, r.weights * self.zeta.second_moment())",
      "return Rule(r.nodes, r.weights)", LAWS + ["numerics/test_lca.py"], "E[ζ² h(s)] drops E[ζ²]"),
    M("task_sample_norm_not_squared", "m = g * np.sqrt(self.s.sample(n, rng))[:, None]",
      "m = g * self.s.sample(n, rng)[:, None]", LAWS + SAMPLING + ["numerics/test_lsa.py"],
      "sampled ‖m‖ = s instead of √s (the law of s read as a law of ‖m‖)"),
    # ------------------------------------------------------------------ the LAW language
    M("parse_uniform_swapped", "return Uniform(*_numbers(args, 2, name))", "return Uniform(*_numbers(args, 2, name)[::-1])",
      LAWS, "uniform(a,b) read as uniform(b,a)"),
    M("parse_twopoint_p", "return TwoPoint(*_numbers(args, 3, name))",
      "return (lambda a, b, p: TwoPoint(a, b, 1 - p))(*_numbers(args, 3, name))",
      LAWS + ["numerics/test_lca.py"], "twopoint(a,b,p) gives a the probability 1 − p"),
    M("parse_beta_shapes", "return Beta(*_numbers(args, 4, name))",
      "return (lambda p, q, a, b: Beta(q, p, a, b))(*_numbers(args, 4, name))",
      LAWS + ["numerics/test_lca.py", "numerics/test_lsa.py"], "beta(p,q,a,b) read with p and q swapped"),
    M("parse_discrete_probs", "tuple(float(p) for _, p in pairs))", "tuple(float(p) for _, p in pairs[::-1]))",
      LAWS + ["numerics/test_lsa.py"], "discrete(v1:p1,…) attaches the probabilities in reverse"),
    M("parse_mix_weights", "tuple(float(w) for w, _ in pairs))", "tuple(float(w) for w, _ in pairs[::-1]))",
      LAWS + ["numerics/test_lca.py", "proofs/test_lca_claims.py"], "mix(w1*D1,…) attaches the weights in reverse"),
    M("parse_zeta_const", 'return ZetaLaw("const", c)', 'return ZetaLaw("const", c * c)', LAWS + ["numerics/test_lsa.py"],
      "zeta=const(c) read as const(c²)"),
    M("parse_default_dims", 'raw = override if override is not None else items.get(key, "1")',
      'raw = override if override is not None else items.get(key, "2")', LAWS + ["numerics/test_lsa.py"],
      "d1 and d2 default to 2", variants=[('items.get(key, "1")', 'items.get(key, "2")', False)]),
    # ------------------------------------------------------------------ numerics/lca.py
    M("stable_interval_end", "return (0.0, 2.0 / (1.0 + hi))", "return (0.0, 2.0 / (1.0 + lo))",
      ["numerics/test_lca.py", "numerics/test_lca_properties.py"], "the stable interval ends at 2/(1 + s_lo)"),
    M("alpha_T_bracket", "a_lo, a_hi = 1.0 / (1.0 + hi), 1.0 / (1.0 + lo)", "a_lo, a_hi = 1.0 / (1.0 + hi), 1.0 / (2.0 + lo)",
      ["numerics/test_lca.py", "numerics/test_lca_properties.py"], "Brent's bracket ends at 1/(2 + s_lo)"),
    M("one_param_power", "n = 2 * T - order", "n = 2 * T - 1 - order", ["theory/test_derivations.py", "numerics/test_lca.py"],
      "the depth-T sums use r^(2T−1−k) instead of r^(2T−k)"),
    M("one_param_build_power", "base, 2 * th.T - k)", "base, 2 * th.T - 1 - k)", ["theory/test_derivations.py", "numerics/test_lca.py"],
      "the compiled amplitudes are factored against r^(2T−1−k)"),
    M("one_param_log_scale", "return ScaledValue(float(np.dot(rule.weights, terms)), n * lmax)",
      "return ScaledValue(float(np.dot(rule.weights, terms)), (n - 1) * lmax)", ["theory/test_derivations.py", "numerics/test_lca.py"],
      "the log scale of the sums is (n − 1)ℓ_max instead of nℓ_max"),
    M("one_param_sign_parity", "(base < 0) & (n % 2 == 1)", "(base < 0) & (n % 2 == 0)",
      ["theory/test_derivations.py", "numerics/test_lca.py"], "negative r raised to an even power taken as negative"),
    M("gamma_beta_coordinates", "th.gamma - th.beta, th.beta)", "th.gamma + th.beta, th.beta)",
      ["numerics/test_lca.py", "numerics/test_lca_properties.py"], "in (γ, β) coordinates W^S = γ + β instead of γ − β",
      variants=[('"gamma-beta": ((th.gamma, th.beta), th.gamma - th.beta, th.beta,',
                 '"gamma-beta": ((th.gamma, th.beta), th.gamma + th.beta, th.beta,', False)]),
    M("two_param_depth_loop", r"(for _ in range\(self\.T)(\):\n\s*state = self\._step)", r"\1 - 1\2",
      ["theory/test_derivations.py", "numerics/test_lca.py"], "the two-parameter jet runs T − 1 layers", regex=True,
      variants=[(r"(if full:\n\s*for _ in range\(self\.T)(\):)", r"\1 - 1\2", True)]),
    M("minimise_two_grid", "grid = np.linspace(-4.0 / (1.0 + lo)", "grid = np.linspace(-0.4 / (1.0 + lo)",
      ["numerics/test_lca.py", "numerics/test_lca_properties.py", "proofs/test_lca_claims.py"],
      "the β grid of the profile search stops short of the valley β ≈ −α"),
    M("lca_bayes_risk_half", "return _rule(law, 1).expect(lambda s: f(s)[0] * np.ones_like(s))",
      "return _rule(law, 1).expect(lambda s: f(s)[0] * np.ones_like(s) / 2)",
      ["numerics/test_lca.py", "shell/test_api.py", "numerics/test_lsa.py"], "the population Bayes risk is halved"),
    # ------------------------------------------------------------------ numerics/lca_matrix.py
    M("matrix_recurrence_lambda", "P = P + w_skip + w_value @ lam @ P", "P = P + w_skip + w_value @ P", THEORY,
      "the independent d×d recurrence drops Λ"),
    # ------------------------------------------------------------------ numerics/flows.py
    M("flow_one_stop_threshold", r"(def at_rest\(tau, y\):\n\s*return _newton_step_one\(law, T, y\[0\]\) - )0\.5e-12",
      r"\g<1>0.5e-6", FLOWS, "the real-clock flow stops when the Newton step is below 5e-7", regex=True,
      variants=[('REST_HALF_WIDTH = 0.5e-12', 'REST_HALF_WIDTH = 0.5e-6', False)]),
    M("flow_real_clock_scale", r"return \[-math\.exp\(tau\) \* (\w+)\.mantissa \* math\.exp\(\1\.log_scale\)\]",
      r"return [-math.exp(tau) * \1.mantissa]", FLOWS, "the 'real' clock drops the gradient's scale e^(log_scale)", regex=True),
    M("flow_metric", "_METRIC = np.array([[2.0, 1.0], [1.0, 1.0]])", "_METRIC = np.array([[1.0, 0.0], [0.0, 1.0]])",
      FLOWS, "the (γ, β) flow uses the Euclidean metric of (γ, β), not the pull-back of (α, β)'s"),
    M("flow_real_time_sign", "math.log(wi * abs(h)) - g.log_scale", "math.log(wi * abs(h)) + g.log_scale", FLOWS,
      "dt = dα/|L'| integrated with e^(+log_scale)"),
    # ------------------------------------------------------------------ numerics/lsa.py
    M("lsa_sphere_fourth_moment", "/ (dim * (dim + 2))", "/ (dim * (dim + 1))", LSA,
      "E θ_i²θ_j² on the sphere divided by d(d + 1) instead of d(d + 2)"),
    M("lsa_normal_equations_E4", "A = np.diag(E2) + E4", "A = np.diag(E2) + 2 * E4", LSA,
      "the normal equations count E[m² m²ᵀ] twice"),
    M("lsa_normal_equations_finite_n", "A = A + (np.diag(1 + 3 * E2) + 2 * E4) / n",
      "A = A + (np.diag(1 + 2 * E2) + 2 * E4) / n", LSA, "the 1/n term of A uses 1 + 2E m_i²"),
    M("lsa_excess_finite_n", "(g**2 * (1 + 3 * mu2)).sum(1)", "(g**2 * (1 + 2 * mu2)).sum(1)", LSA,
      "the 1/n term of the excess uses 1 + 2 μ2"),
    M("lsa_bayes_coefficient", "c = 1.0 / (1.0 + norms.sum(1))", "c = 1.0 / (1.0 + norms.max(1))", LSA,
      "the Bayes coefficient 1/(1 + s) uses the larger block norm for s",
      variants=[('c = bayes_weight(norms.sum(1))', 'c = bayes_weight(norms.max(1))', False)]),
    M("lsa_cross_block_moments", "mu4 = mu2[:, :, None] * mu2[:, None, :]  #", "mu4 = 0 * mu2[:, :, None] * mu2[:, None, :]  #",
      LSA, "E[m_i² m_j²] across blocks set to 0"),
    M("lsa_anisotropic_m2", "a[i] / (1 + 2 * t * a[i]) * base(t)", "a[i] / (1 + t * a[i]) * base(t)", LSA,
      "E θ_i² of an anisotropic direction with (1 + t a_i)^(−1)"),
    M("lsa_per_prompt_quadratic", "quad = (e**2).sum(1) + (e * m).sum(1) ** 2", "quad = (e**2).sum(1)", LSA,
      "eᵀΛe computed as eᵀe",
      variants=[('excess((r**2).sum(1), (r * m).sum(1),', 'excess((r**2).sum(1), 0 * (r * m).sum(1),', False)]),
    M("lsa_bayes_risk_value", "(1.0 / (1.0 + s)))", "(1.0 / (2.0 + s)))", LSA,
      "the best LSA's reported Bayes risk uses 1/(2 + s)",
      variants=[('_compiled().bayes_risk(blocks.nodes.sum(1))[0]', '_compiled().bayes_risk(blocks.nodes.sum(1) + 1)[0]', False)]),
    # ------------------------------------------------------------------ sampling and models
    M("model_bayes_prediction", "(m * batch.query_x).sum(-1) / (1 + s)", "(m * batch.query_x).sum(-1) / (2 + s)",
      SAMPLING + ["numerics/test_lsa.py"], "the task-known Bayes prediction divides by 2 + s",
      variants=[('_bayes_formula()((m**2).sum(-1), batch.zeta', '_bayes_formula()((m**2).sum(-1) + 1, batch.zeta', False)]),
    M("sampling_wishart_dof", "shape = (dof - k) / 2", "shape = (dof - k + 1) / 2", SAMPLING,
      "Bartlett: A_kk² ~ χ²(dof − k + 1)"),
    M("sampling_limit_h", "xy = zeta[:, None] * m\n", "xy = 2 * zeta[:, None] * m\n", SAMPLING,
      "in the large-context limit h = 2ζm"),
    # ================================================================== the extended set
    # ------------------------------------------------------------------ numerics/testbed/stats.py
    N("stats_t_dof", "q = _st.t.ppf(0.5 + level / 2, n - 1)", "q = _st.t.ppf(0.5 + level / 2, n)", STATS,
      "the t interval uses n degrees of freedom instead of n − 1 (7–26 % too narrow at 5 and 3 seeds)"),
    N("stats_t_ddof", "se = v.std(ddof=1) / math.sqrt(n)", "se = v.std(ddof=0) / math.sqrt(n)", STATS,
      "the t interval's standard error from the biased sd"),
    N("stats_t_z_quantile", "q = _st.t.ppf(0.5 + level / 2, n - 1)", "q = _st.norm.ppf(0.5 + level / 2)", STATS,
      "the t interval with the normal quantile"),
    # ------------------------------------------------------------------ numerics/testbed/plateau.py
    N("plateau_sqrt_eval_size", "return p + 2 * math.sqrt(p * (1 - p) / eval_size)",
      "return p + 2 * math.sqrt(p * (1 - p)) / eval_size", STATS,
      "the copy-plateau level loses a √eval_size (0.5625 becomes 0.504)"),
    N("plateau_one_se", "return p + 2 * math.sqrt(p * (1 - p) / eval_size)",
      "return p + math.sqrt(p * (1 - p) / eval_size)", STATS, "the plateau level one standard error above B/N"),
    # ------------------------------------------------------------------ numerics/estimate.py
    N("estimate_ddof", "sd = float(np.std(v, ddof=1)) if k > 1 else math.inf",
      "sd = float(np.std(v, ddof=0)) if k > 1 else math.inf", ESTIMATE, "a Monte Carlo estimate's sd is the biased one"),
    N("estimate_se_root", "return cls(float(np.mean(v)), sd / math.sqrt(k), k)", "return cls(float(np.mean(v)), sd / k, k)",
      ESTIMATE, "se = sd/k instead of sd/√k"),
    N("estimate_interval_z", "half = Z95 * self.se", "half = 2 * self.se", ESTIMATE, "interval95 uses 2 for z_0.975"),
    # ------------------------------------------------------------------ numerics/atomic.py
    N("atomic_private_mode", "os.chmod(tmp, 0o644)", "os.chmod(tmp, 0o600)", ATOMIC,
      "written results keep mkstemp's 0600 (the writer promises files readable by everyone)"),
    # ------------------------------------------------------------------ numerics/validate.py
    N("validate_bool_depth", "if _is_bool(T):\n        raise error(f\"the depth T", "if False:\n        raise error(f\"the depth T",
      VALIDATE, "the API takes True as the depth 1"),
    N("validate_depth_limit", "if limit is not None and T > limit:", "if limit is not None and T > limit + 1:",
      VALIDATE, "a depth one beyond the function's limit is served"),
    N("validate_real_nonfinite", "if not math.isfinite(v):\n        raise error(f\"{name} must be finite",
      "if False:\n        raise error(f\"{name} must be finite", VALIDATE, "a real parameter may be NaN or ±inf"),
    N("validate_count_bool", "if _is_bool(n) or not isinstance(n, numbers.Real)", "if not isinstance(n, numbers.Real)",
      VALIDATE, "a count (grid points, samples) may be a bool"),
    N("validate_zeta_range", "if log_z2 > hi + 1e-12:", "if log_z2 > hi + 300:", VALIDATE,
      "E[ζ²] far above MAX_ZETA2 is taken"),
    # ------------------------------------------------------------------ numerics/flows.py (two-parameter rest test)
    N("rest_two_saddle", "definite = h11 > e11 and det > det_error", "definite = h11 > e11 and abs(det) > det_error",
      REST_TWO, "the two-parameter rest test takes a saddle (det H < 0) for a minimum"),
    N("rest_two_no_det", "definite = h11 > e11 and det > det_error", "definite = h11 > e11", REST_TWO,
      "the rest test's definiteness looks at H_11 only"),
    # ------------------------------------------------------------------ numerics/unbounded.py
    N("exp_stationarity_rate", "term = (a - 1) ** n / k", "term = (a - 1) ** n * k", UNBOUNDED,
      "the exponential law's public G(α) is off by k² for rates k ≠ 1 (its root, α_T, is not)"),
    N("exp_quadrature_density", "* k * mp.exp(-k * s)", "* mp.exp(-k * s)", UNBOUNDED,
      "stationarity_quadrature integrates against e^(−ks) without the density's factor k"),
    # ------------------------------------------------------------------ proofs/certificates/check.py
    N("cert_zero_sign_accepted",
      "if d == 0:\n            reasons.append(f\"D({end}) = 0",
      "if False:\n            reasons.append(f\"D({end}) = 0", CERTS,
      "a zero of D at an end of the enclosure is not refused by name (the sign test alone must then refuse it)"),
    N("cert_zero_sign_as_right_sign", "elif sign != want:", "elif sign == -want:", CERTS,
      "a sign of exactly 0 at an end is taken as the right sign.  EQUIVALENT here: the elif runs only when "
      "d ≠ 0, so sign ∈ {±1} and sign == −want ⇔ sign ≠ want; kept so a rewrite that drops the zero test is caught"),
    N("cert_width_not_strict", "if not hi - lo < width:", "if not hi - lo <= width:", CERTS,
      "an enclosure exactly as wide as the claimed width is accepted"),
    N("cert_gap_lo_zero", "if positive is True and not lo > 0:", "if positive is True and not lo >= 0:", CERTS,
      "'gap > 0' accepted with a lower bound of exactly 0"),
    N("cert_remainder_not_a_bound", "hi + w * (series / c + rho**K / t0)", "hi + w * (series / c + rho**K / c)", CERTS,
      "the series remainder ρ^K/c is not a bound (its supremum is ρ^K/t₀)"),
    N("cert_gap_lower_unchecked", "if not lo <= g_lo <= g_hi <= hi:", "if not g_hi <= hi:", CERTS,
      "a claimed lower bound above the recomputed one is accepted"),
    N("cert_zeta2_positive", "if not law.zeta2 > 0:", "if not law.zeta2 >= 0:", CERTS,
      "an α_T certificate with E[ζ²] = 0 (no unique minimiser) is accepted"),
    # ------------------------------------------------------------------ proofs/sweep (store and keys)
    N("store_index_not_rebuilt", 'self._index = {r["key"]: self._entry(r) for r in self.records()}', "self._index = {}",
      STORE, "opening a store does not rebuild its index from the run files"),
    N("store_entry_status", '"status": record["status"], "file"', '"status": "done", "file"', STORE,
      "the index records every run as done"),
    N("store_flat_nested", 'out |= _flat(v, f"{prefix}{k}.")', 'out[f"{prefix}{k}"] = v', STORE,
      "the table and CSV keep nested results as one column"),
    N("sweep_key_order", "sort_keys=True,\n                          separators", "sort_keys=False,\n                          separators",
      STORE, "a run's key depends on the order its settings were written in"),
    # ------------------------------------------------------------------ proofs/registry.py (verdict roles)
    N("verdict_corroborating_fail_holds", "if side_failed:\n        return \"inconclusive\"",
      "if False:\n        return \"inconclusive\"", VERDICTS,
      "a failed corroborating check leaves 'holds'"),
    N("verdict_no_decisive_holds", "if not decisive:\n        return \"inconclusive\", \"no decisive check\"",
      "if False:\n        return \"inconclusive\", \"no decisive check\"", VERDICTS,
      "a claim with no decisive check 'holds'"),
    # ------------------------------------------------------------------ files read back and written
    N("disk_full_traceback", "if isinstance(e, OSError) and not isinstance(e, DiskFullError) and e.errno in _FULL:",
      "if False:", FOLDER, "a full disk during a write is a raw OSError (a traceback), not one line"),
    N("figures_not_deferred", "    if pending is None:\n        write_bytes(path, buf.getvalue())",
      "    if True:\n        write_bytes(path, buf.getvalue())", FOLDER,
      "figures are written before the claim's verdict is saved"),
    N("verdict_not_saved_before_figures", "        self.run.pending_figures = [str(p) for p in figures.paths]\n        self.write()",
      "        self.run.pending_figures = [str(p) for p in figures.paths]", FOLDER,
      "a claim's verdict is saved only after its figures"),
    N("pending_never_cleared", "        self.run.pending_figures = []\n        self.write()\n        return result",
      "        self.write()\n        return result", FOLDER, "written figures stay listed as pending"),
    N("folder_lock_shared", "fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)", "fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)",
      FOLDER, "two live runs may hold one folder"),
    N("leftover_any_hidden_file", "return bool(_TEMPORARY.match(name))", 'return name.startswith(".")',
      FOLDER, "a new run deletes every hidden file of OUT, not only the writer's temporary files"),
    N("replace_any_non_link", "    if not stat.S_ISREG(mode):\n        raise NotAFileError",
      "    if stat.S_ISLNK(mode):\n        raise NotAFileError", FOLDER,
      "a folder or FIFO where a summary file goes is replaced after the other files (a traceback, files changed)"),
    N("lock_through_hard_links", "        if os.fstat(fd).st_nlink > 1:", "        if False:", FOLDER,
      "a lock file that is a hard link to a user's file has that file overwritten with the pid"),
    N("lock_through_links", "        check_replaceable(path)  # a link, folder or FIFO named .mmicl.lock",
      "        pass  # a link, folder or FIFO named .mmicl.lock", FOLDER,
      "a link named .mmicl.lock is not refused in the words that name it"),
    N("ctrl_c_is_a_claims_error", "(isinstance(e, KeyboardInterrupt) and interrupts.pressed())",
      "(isinstance(e, KeyboardInterrupt) and False)", FOLDER,
      "a real Ctrl-C during a claim of another origin is that claim's error and the run goes on"),
    N("cache_file_called_damaged", "    if not stat.S_ISDIR(mode):\n        _warn_once", "    if False:\n        _warn_once",
      ["theory/test_formula_cache.py"], "MMICL_CACHE naming a file warns of a damaged cache file"),
    N("stage1_digest_unchecked", "        if actual != stored:\n            raise Stage1Error", "        if False:\n            raise Stage1Error",
      CHECKPOINTS, "an edited stage-1 checkpoint (zeroed weights, metrics set to 0.99) is accepted"),
    N("train_checkpoint_digest_unchecked", 'if actual != state["digest"]:', "if False:", CHECKPOINTS,
      "an edited training checkpoint is accepted"),
    N("train_checkpoint_depth_unbound", '"model_settings": _model_settings(model),', '"model_settings": {},',
      ["numerics/test_training.py"], "a T = 5 checkpoint resumes a T = 10 run and reports T = 5's α"),
    N("snapshot_generators_not_restored", "        g.set_state(v)", "        pass", RESUME,
      "a resumed testbed run draws other batches than the uninterrupted run would"),
    N("snapshot_adam_not_restored", '    opt.load_state_dict(state["adam"])', "    pass", RESUME,
      "a resumed testbed run restarts Adam's moments"),
    N("snapshot_step_repeated", 'return int(state["step"]) + 1,', 'return int(state["step"]),', RESUME,
      "a resumed testbed run takes its snapshot's last step twice"),
    N("snapshot_identity_unchecked", 'if saved is not None and saved["identity"] != _identity_text(identity):', "if False:", RESUME,
      "a snapshot saved for other settings (another learning rate) is resumed"),
    N("snapshot_kept_after_record", "        discard_snapshot(store.root, record[\"key\"])", "        pass", RESUME,
      "a finished run's snapshot stays in the store"),
    N("store_checksum_unchecked", '        if doc["checksum"] != checksum(doc):\n            return "checksum does not match"',
      '        if False:\n            return "checksum does not match"', STORE_CHECKS,
      "a sweep record whose numbers were edited is accepted and skipped on rerun"),
    # ------------------------------------------------------------------ the claim API and plugins
    N("reserved_namespace_open", "if origin != BUILTIN and namespace in RESERVED_NAMESPACES:", "if False:", CLAIM_API,
      "a user's claim may take a built-in claim's namespace"),
    N("register_twice_silently", "if old is not None and not (replace and (old.origin == claim.origin or old.origin != BUILTIN)):",
      "if False:", CLAIM_API, "registering an id twice silently replaces the first claim"),
    N("user_errors_pass_through", "        return isinstance(e, InputError) or not isinstance(e, Exception)\n    return False",
      "        return isinstance(e, InputError) or not isinstance(e, Exception)\n    return isinstance(e, InputError)",
      CLAIM_API, "a user's claim raising a LawError stops the run instead of being its 'error' verdict"),
    N("passed_read_as_truthy", "    if isinstance(value, (bool, np.bool_)):\n        return bool(value)",
      "    if True:\n        return bool(value)", CLAIM_GUARDS,
      "Check(..., float('nan')) and passed='False' make the claim hold"),
    N("claim_exit_ends_run", "        except BaseException as e:  # noqa: BLE001 -- reported as this claim's verdict",
      "        except Exception as e:  # noqa: BLE001 -- reported as this claim's verdict", CLAIM_GUARDS,
      "a plugin claim calling sys.exit(0) ends the run with exit 0, the claims after it never run"),
    N("claim_config_shared", "returned = self.evaluate(replace(config))", "returned = self.evaluate(config)",
      CLAIM_GUARDS, "a claim that sets config.seed changes the run's recorded seed"),
    N("claim_json_unchecked", "            _json_able(self.id, result)\n", "            pass\n", CLAIM_GUARDS,
      "a claim returning a set in its summary breaks the summary write (a traceback, folder left running)"),
    N("plugin_exit_silent", "        if isinstance(e, SystemExit):  # sys.exit() in a plugin's import",
      "        if False:  # sys.exit() in a plugin's import", CLAIM_GUARDS,
      "a plugin calling sys.exit(3) while imported is reported as an import error without saying it exited"),
    N("plugins_loaded_every_time", "    if _installed_loaded:\n        return", "    if False:\n        return", CLAIM_API,
      "installed plugins are imported again on every listing or run.  EQUIVALENT: ``_loaded`` records each "
      "entry point too, so a second pass imports nothing (test_an_installed_plugin_is_seen_once_by_claims_and_verify "
      "counts the imports); the flag only saves re-reading the entry-point metadata"),
    # ------------------------------------------------------------------ mmicl.testing, the pytest plugin
    N("facts_single_value_wrong", "return self.signal_values == 1", "return self.signal_values >= 1", FACTS,
      "a drawn law's facts say s takes one value whenever it has signal"),
    N("baseline_regressions_pass", "        if regressions:\n            lines = [", "        if False:\n            lines = [",
      BASELINES, "the mmicl_baseline fixture passes a test whose numbers moved"),
    N("baseline_uncovered_passes", "        if uncovered and not regressions:", "        if False:", BASELINE_GUARDS,
      "a baseline whose summary was emptied passes a test whatever its numbers"),
    N("baseline_names_collide", "    if plain == name:\n        return name", "    if True:\n        return plain",
      BASELINE_GUARDS, "test ids [s=point(2)] and [s_point_2] share one baseline file"),
    N("compare_empty_old_passes", "    _has_claims(old, old_name)\n", "    pass\n", COMPARE,
      "an old run with no claims passes any new one"),
    N("compare_duplicate_ids", "        if cid in seen:", "        if False:", COMPARE,
      "two claims with one id in a summary: the last one hides the other (a fails goes unseen)"),
    N("compare_any_schema", "    if version > SCHEMA_VERSION:", "    if False:", COMPARE,
      "a summary of schema_version 999 is compared as if its keys meant what they mean now"),
    N("compare_infinity_matches_all", "        return old == new\n    o, n = Fraction(old), Fraction(new)",
      "        return True\n    o, n = Fraction(old), Fraction(new)", COMPARE,
      "an Infinity in the old run matches any new value, even at --rtol 0"),
    N("compare_nan_moves", "        return isinstance(old, float) and isinstance(new, float) and math.isnan(old) and math.isnan(new)",
      "        return False", COMPARE, "a NaN compared with itself is reported as a regression"),
    N("per_key_tolerance_ignored", "        stated = tolerance_of(atol, rtol, key)", "        stated = None", TOLERANCES,
      "compare judges every number by --rtol, ignoring the tolerance its check states for it"),
    N("summary_tolerance_dropped", '            summary_atol=getattr(summary, "atol", None),', "            summary_atol=None,",
      TOLERANCES, "a claim's Summary tolerances never reach its result"),
    N("sampling_atol_no_sqrt2", "return MOVE_Z * math.sqrt(2.0) * se if", "return MOVE_Z * se if", TOLERANCES,
      "a sampled number may move by 4 se, not by 4 se of a difference of two estimates"),
    # ------------------------------------------------------------------ LCA variants as data
    N("readout_both_evolved_not_squared", "        return factor**2", "        return factor", VARIANTS,
      "with keys and query evolved the readout multiplier is P_T, not P_T²"),
    N("f0_tokens_ignored", 'p0 = sp.Integer(0 if variant.f0 == "zero" else 1)', "p0 = sp.Integer(0)", VARIANTS,
      "F⁰ = X derives the model of F⁰ = 0"),
    N("skip_always_on", 'skip = 1 if variant.skip == "on" else 0', "skip = 1", VARIANTS,
      "the variant without the skip derives the model with it"),
    N("jet_starts_at_zero", "state = [np.full((G, nodes.shape[1]), float(self.model.p0))]",
      "state = [np.zeros((G, nodes.shape[1]))]", VARIANTS, "the iterated layer starts from F⁰ = 0 whatever f0 says"),
    N("matrix_both_evolved_once", '"evolved-keys-and-query": M.T @ (M @ h)}', '"evolved-keys-and-query": M.T @ h}',
      VARIANTS, "the d×d check model reads both-evolved out with one factor of P"),
    N("floor_stable_only", "    (best, names) = min(out.values(), key=lambda r: r[0].excess)",
      '    (best, names) = out["stable"]', VARIANTS, "the floor ignores the 1/T-scaled family"),
    N("variant_sign_not_canonical", "    x, even = _canonical(jet, x, v)\n", "    even = ()\n", VARIANT_GUARDS,
      "a minimiser of a loss even in a parameter comes back with whichever sign the search landed on"),
    N("variant_any_point_stationary", "    stationary = bool(step is not None and step <= STATIONARY_STEP",
      "    stationary = True or bool(step is not None and step <= STATIONARY_STEP", VARIANT_GUARDS,
      "a search that ended on a point far from any minimum calls it resolved (off by 10^11 on a wide law)"),
    N("variant_unresolvable_law_accepted", '    law.require_float64_resolved("the LCA variants", T)\n', "    pass\n",
      VARIANT_GUARDS, "variant_floor on s=uniform(5e-324,1e-300) gives a zero floor where alpha_T refuses the law"),
    N("variant_flow_unbounded", "        if calls[0] > MAX_FLOW_EVALUATIONS:", "        if False:", VARIANT_GUARDS,
      "a variant flow from where the state overflows repeats its first step for more than ten minutes"),
    N("limit_rule_any_slope", "if bool(np.all(np.diff(half) < 0)) and last is not None and last <= -0.5:",
      "if bool(np.all(np.diff(half) < 0)) and last is not None and last <= 0.5:", VARIANTS,
      "variant.floor's limit check holds for a gap that falls at any rate"),
    N("variant_gate_open", 'if config.variant is not None and self.origin == BUILTIN and not {"*", config.variant} & set(self.variants):',
      "if False:", VARIANTS, "the paper's theorems run on another variant as if it were the default"),
    N("flow_rest_loose", "REST_STEP = 1e-12", "REST_STEP = 1e-3", VARIANTS,
      "the variant flow stops 1e-3 away from the minimum and says converged"),
    N("torch_tokens_start_ignored", 'x = torch.stack([mo.query_x, mo.xy], dim=-1)  # (x_q, h)\n        f = torch.zeros_like(x) if self.variant.f0 == "zero" else x',
      'x = torch.stack([mo.query_x, mo.xy], dim=-1)  # (x_q, h)\n        f = torch.zeros_like(x)',
      VARIANTS, "the torch model starts from F⁰ = 0 whatever f0 says"),
    # ------------------------------------------------------------------ the testbed claims' designs
    N("seed_outcome_ignores_margin", "    excess = d - m\n", "    excess = d\n", SIGN_TESTS,
      "a seed shows 'an effect above the margin' for any positive difference"),
    N("sign_test_tail_loose", "    if p_above <= a:\n        decision: Optional[bool] = True",
      "    if p_above <= 2 * a:\n        decision: Optional[bool] = True", SIGN_TESTS,
      "the sign test decides at twice its stated level"),
    N("families_never_disagree", "    if opposite:\n        reason = f\"the families disagree", "    if False:\n        reason = f\"the families disagree",
      SIGN_TESTS, "a family that alone decides the opposite does not stop the pooled decision"),
    N("inferiority_as_superiority", '    if c.kind == "inferiority":\n        return -d, c.margin',
      '    if c.kind == "inferiority":\n        return d, c.margin', SIGN_TESTS,
      "a check of 'A lowers B' is decided as 'A raises B'"),
    N("area_se_in_quadrature", "    return np.tensordot(trapezoid_weights(x), np.sqrt(p * (1 - p) / n), axes=(0, 0))",
      "    return np.sqrt(np.tensordot(trapezoid_weights(x) ** 2, p * (1 - p) / n, axes=(0, 0)))",
      tuple(UNIMODAL + AREA_SE),
      "an area's se assumes independent evaluations, which reuse one set (it understates the se)"),
    N("window_edges_swapped", "    return np.minimum(half - t10, t90 - half)", "    return np.maximum(half - t10, t90 - half)",
      tuple(UNIMODAL), "a half-rise after ICL's window counts as inside it"),
    N("balanced_se_without_blind", "    return (np.sqrt(p * (1 - p)) + np.asarray(sd_blind, float)) / math.sqrt(EVAL_SIZE)",
      "    return np.sqrt(p * (1 - p)) / math.sqrt(EVAL_SIZE)", tuple(UNIMODAL),
      "the blind rule's own sampling noise is left out of a balanced in-weights difference"),
    N("circuit_neither_keeps_prev_heads", "    neither = ~induction & ~(sel[\"prev_token\"] > prev_threshold)",
      "    neither = ~induction", tuple(UNIMODAL),
      "the control set of the circuit ablation includes the previous-token heads the circuit needs"),
    N("settled_steps_the_largest_settled", "    return {\"steps\": min(every) if every else max(grid),",
      "    return {\"steps\": max(every) if every else max(grid),", tuple(PILOT_RULES),
      "claims 2 and 3's version-4 rule takes the largest settled step count, against its statement (the smallest)"),
    N("claim1_edge_the_smallest_below", "    return {\"K_edge\": max(below) if below else min(grid),",
      "    return {\"K_edge\": min(below) if below else min(grid),", tuple(PILOT_RULES),
      "claim 1's version-4 rule takes the smallest K below 0.9, against its statement (the largest)"),
    N("family_verdict_reads_the_pool", '            passed = c["passed"] if o is None else family_decision(o)',
      '            passed = c["passed"]', tuple(FAMILY_VERDICTS),
      "a family's verdict is the pooled decision, not its own sign test"),
    N("family_premise_one_failure_short", "counts[f][1] - counts[f][0] <= PREMISE_FAILURES",
      "counts[f][1] - counts[f][0] < PREMISE_FAILURES", tuple(FAMILY_VERDICTS),
      "a family's premise fails with as many failing seeds as the rule allows"),
    N("fusion_premise_at_the_level", "    return np.asarray(icl, float) > copy_level(copy, n_eval, plus)",
      "    return np.asarray(icl, float) >= copy_level(copy, n_eval, plus)", tuple(PILOT_RULES + ["proofs/testbed/test_common.py"]),
      "a seed (a fusion run among them) at exactly B/N + 2 se counts as doing ICL"),
    N("claim6_rule_six_of_eight", '        if any(sum(met[k2][s]) >= 7 for s in FUSION_STEP_GRID):',
      '        if any(sum(met[k2][s]) >= 6 for s in FUSION_STEP_GRID):', tuple(PILOT_RULES),
      "claim 6's pilot rule accepts 6 of 8 pilot seeds, against its statement"),
    N("claim6_steps_rule_seven_of_eight", '"fusion_steps": last if all(met[k2][last]) else None',
      '"fusion_steps": last if sum(met[k2][last]) >= 7 else None', tuple(PILOT_RULES),
      "claim 6's pilot rule takes the longest steps with a pilot seed short of the premise"),
    N("eval_on_ignored", "    on = set(check_eval_on(eval_on) or METRICS_OF)", "    on = set(METRICS_OF)", tuple(EVAL_ON),
      "a run asked to measure one set measures them all (its history then holds what it was not asked for)"),
    N("swallowed_ctrl_c_ignored", "    if _watching and _pressed:\n        raise KeyboardInterrupt",
      "    if False:\n        raise KeyboardInterrupt", ("numerics/test_interrupts.py",),
      "a Ctrl-C whose KeyboardInterrupt was swallowed where it landed never stops the run"),
    N("config_bool_count", "        if isinstance(v, bool) or not isinstance(v, int) or v < 1:\n            raise TestbedConfigError",
      "        if not isinstance(v, int) or v < 1:\n            raise TestbedConfigError", ("numerics/testbed/test_unimodal_testbed.py",),
      "a testbed config takes True for a count (K=True runs as K=1)"),
    N("premise_summary_counts_dropped", "return Summary({**numbers, **counts, **outcome_words(checks)}",
      "return Summary({**numbers, **outcome_words(checks)}", ("proofs/testbed/test_common.py",),
      "a claim's summary leaves out how many seeds met each premise"),
    N("premise_summary_count_atol_dropped", "atol={**atol, **count_atol}, why=why)", "atol=atol, why=why)",
      ("proofs/testbed/test_common.py",), "the premise counts are reported with no tolerance"),
    N("chunk_weights_unweighted", "        w = (sl.stop - sl.start) / b\n",
      "        w = 1 / len(item_slices(*icl.target.shape, chunk))\n", tuple(CHUNKED),
      "a sliced evaluation averages its slices' means with equal weights though the last slice is shorter"),
    N("chunk_last_slice_dropped", "    return [slice(i, min(i + n, b)) for i in range(0, b, n)] or [slice(0, 0)]",
      "    return [slice(i, i + n) for i in range(0, b - n + 1, n)] or [slice(0, 0)]", tuple(CHUNKED),
      "the items past the last whole slice are never evaluated"),
    N("chunk_budget_ignored", "    n = max(1, EVAL_CHUNK_SEQUENCES // max(int(E), 1)) if chunk is None else chunk",
      "    n = b if chunk is None else chunk", tuple(CHUNKED),
      "the default evaluates a whole set in one forward pass, whatever its size (claim 7's 18 GB)"),
    N("lazy_draw_keeps_all_first_stream", "                if name in want:\n                    kept[name] = s",
      "                kept[name] = s", tuple(CHUNKED),
      "drawing one set of the first stream keeps all six (the memory a one-set run was to save)"),
    N("lazy_draw_holds_last_set", "                del s  # a set not asked for is let go now, not when the next one replaces it\n",
      "", tuple(CHUNKED), "the last set of the first stream stays alive while the shifts are drawn (two sets held)"),
    N("lazy_draw_skips_stream", "            for name in first:  # one stream, in this order (the sets of the first version)",
      "            for name in [n for n in first if n in want]:", tuple(CHUNKED),
      "a set drawn alone skips the sets before it in its stream, so its items differ from the full draw's"),
    N("compare_seed_rule_old_se_only", "            atol, rtol = MOVE_Z * math.hypot(so, sn), 0.0",
      "            atol, rtol = MOVE_Z * so, 0.0", COMPARE_SETTINGS,
      "across seeds the bound forgets the new run's se (two independent estimates: both se's add)"),
    N("compare_seed_ignored", "        if not other_seed or not (keys is True or top in keys):",
      "        if True:", COMPARE_SETTINGS, "two seeds' sampled numbers are judged as reruns of one run"),
    N("compare_numbers_across_sizes", '    out.numbers_compared = not differ & {"size", "law", "variant", "case"}',
      "    out.numbers_compared = True", COMPARE_SETTINGS,
      "runs of other sizes, laws or cases have their numbers compared as if the same computation"),
    N("compare_render_lists_all", "        listed = moved if every else moved[:shown]", "        listed = moved",
      COMPARE_SETTINGS, "the summary lists every moved number (the 1 621-line output)"),
    N("built_in_only_any_namespace", '    return not any(ch in namespace for ch in "*?[") and namespace in RESERVED_NAMESPACES',
      '    return not any(ch in namespace for ch in "*?[")', SELECT,
      "a pattern in a plugin's namespace skips the installed plugins, whose claims it should match"),
    N("lsa_smoke_stall_fails", '        elif smoke and d["mean"] > k * d["se"]:', "        elif False:", LSA_TRAINING,
      "at the smoke size a restart not yet converged is a failure of the theorem"),
    N("case_not_passed", "            config = replace(config, case_value=self.read_case(config.case))",
      "            self.read_case(config.case)", CASES, "a claim given a case runs on its own cases instead"),
    N("case_read_by_first_only", "    for c in chosen:\n        c.read_case(text)", "    pass", CASES,
      "a case is given to claims that cannot read it, found only when they run"),
    N("z_check_passes_without_power", "        passed = False if abs(z) > k else (True if pw >= power else None)",
      "        passed = abs(z) <= k", CASES, "a z-check passes where the test could not have failed"),
    N("rejection_power_one_tail", "    return _phi(r - k) + _phi(-r - k)", "    return _phi(r - k)", CASES,
      "the power leaves out the other tail (at no difference: half the false-alarm rate)"),
    N("positive_definite_ignores_asymmetry", "    met = bool(np.all(np.isfinite(m)) and asym == 0.0 and ev[0] > 0)",
      "    met = bool(np.all(np.isfinite(m)) and ev[0] > 0)", CASES,
      "a matrix that is not symmetric is taken for a covariance"),
    N("integer_in_takes_bools", "    whole = isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))",
      "    whole = isinstance(value, (int, np.integer))", CASES, "True is taken for the whole number 1"),
    N("holm_is_bonferroni", "        stepping = stepping and (m - j) * Fraction(float(p_values[name])) <= Fraction(float(alpha))",
      "        stepping = stepping and m * Fraction(float(p_values[name])) <= Fraction(float(alpha))", MULTIPLICITY,
      "Holm's step-down divides every p-value's level by m (Bonferroni: no step down)"),
    N("holm_adjusted_not_monotone", "        running = max(running, min(1.0, (m - j) * float(p_values[name])))",
      "        running = min(1.0, (m - j) * float(p_values[name]))", MULTIPLICITY,
      "an adjusted p-value smaller than one before it (the step-down's running maximum left out)"),
    N("headroom_without_se", "    return b + margin + 2 * np.sqrt(b * (1 - b) / n) < ceiling", "    return b + margin < ceiling",
      HEADROOM, "a baseline within two se of leaving no room for the margin still counts as having room"),
    N("outcome_probabilities_no_eval_noise", "    total = math.hypot(s_seed, s_eval)", "    total = s_seed", POWER_LAW,
      "a seed's measured difference is taken to carry no evaluation noise beyond the margin's 2 se"),
    N("v4_stage1_rule_six_of_eight", "    return {\"steps\": next((s for s in V4_STAGE1_STEP_GRID if sum(met[s]) >= 7), None), **out}",
      "    return {\"steps\": next((s for s in V4_STAGE1_STEP_GRID if sum(met[s]) >= 6), None), **out}", V4_PILOTS,
      "the v4 stage-1 rule takes a step count at which only 6 of 8 pilot seeds meet the premise"),
    N("v4_distractor_rule_no_rise", '        if t["no_stage2_median"] <= copy + 0.10 and t["final_median"] >= t["no_stage2_median"] + 0.30:',
      '        if t["no_stage2_median"] <= copy + 0.10:', V4_PILOTS,
      "the distractor rule takes a σ at which stage 2 does not raise M2-necessary ICL"),
    N("v4_distractor_rule_all_seeds", "    keep = np.asarray(premise, bool)", "    keep = np.ones(len(premise), bool)", V4_PILOTS,
      "the distractor rule reads seeds whose stage 1 fails the premise"),
    N("matched_control_any_layer", "        if k > len(free):\n            return None", "        if k > len(free):\n            k = len(free)",
      V4_HEADS, "a layer with too few eligible heads gets a smaller control instead of none"),
    N("matched_control_with_replacement", "        control[layer, rng.choice(free, size=k, replace=False)] = True",
      "        control[layer, rng.choice(free, size=k, replace=True)] = True", V4_HEADS,
      "the control draws a head twice, so it holds fewer heads than the layer's induction heads"),
    N("json_writes_the_rounding", "    if isinstance(obj, BelowResolution):\n        return None, below_resolution_text(obj.resolution)\n",
      "", RESOLUTION, "strict JSON writes a value below resolution as its digits"),
    N("variant_excess_unflagged", "    return flag_resolution(float(loss.values(np.array([params]))[0]), resolution(law, T))",
      "    return float(loss.values(np.array([params]))[0])", RESOLUTION,
      "variant_excess returns the rounding below its resolution as a plain number"),
    N("minimum_excess_unflagged", "    r.excess = flag_resolution(r.excess, r.resolution)",
      "    r.excess = float(r.excess)", RESOLUTION,
      "variant_minimum's excess below resolution is a plain number"),
    N("floor_unflagged", "    value, stable, scaled = (flag_resolution(x, floor_resolution)",
      "    value, stable, scaled = (float(x)", RESOLUTION + ["numerics/test_variants.py"],
      "a variant's floor of 0 to rounding is a plain number (its digits are the rounding)"),
    N("lsa_gap_unflagged", "    return BestLSA(law.spec(), n, gamma, flag_resolution(lsa_excess(law, gamma, n, blocks=blocks), resolution),",
      "    return BestLSA(law.spec(), n, gamma, float(lsa_excess(law, gamma, n, blocks=blocks)),", RESOLUTION,
      "the best LSA's gap below its resolution is a plain number"),
    N("lsa_gap_resolution_too_fine", "    return float(blocks.zeta2 * blocks.d * np.trace(A) * e**2)",
      "    return float(blocks.zeta2 * blocks.d * np.trace(A) * e**4)", RESOLUTION,
      "the LSA gap's resolution is far below the rounding it is meant to bound"),
    N("tail_cubic_only_c30", "        return cubic[(3, 0)].lo > 0 and all(c.lo >= 0 for c in cubic.values())",
      "        return cubic[(3, 0)].lo > 0", ALL_DEPTHS,
      "the tail proof takes F > 0 from c₃₀ alone, whatever the sign of the other third-order coefficients"),
    N("tail_interval_product_two_corners", "        return Interval(min(p), max(p))._round()",
      "        return Interval(min(p[0], p[3]), max(p[0], p[3]))._round()", ALL_DEPTHS,
      "an interval product takes only two of its four corner products"),
    N("tail_origin_not_checked", "        if not value.is_zero():\n            reasons.append(f\"F's Taylor",
      "        if False:\n            reasons.append(f\"F's Taylor", ALL_DEPTHS,
      "the checker does not require the expansion to cancel F to second order"),
    N("tail_log_without_its_tail", "            return _down(s), _up(s + tail)", "            return _down(s), _up(s)", ALL_DEPTHS,
      "the bounds on log q drop the series' remainder, so the upper bound is below log q"),
    N("tail_side_without_the_rest", "    low = C.lo + e.A * l0.lo - rest.hi", "    low = C.lo + e.A * l0.lo", ALL_DEPTHS,
      "the tail's side ignores the second-order and remainder terms"),
    N("tail_u0_not_checked", "    if not u0 * n0 >= log_n0.hi:", "    if False:", ALL_DEPTHS,
      "a box that misses the depths with u above u0 is accepted"),
    N("tail_box_a_point", "    F = _F(e, coeffs[\"C\"], coeffs[\"E2\"], coeffs[\"E1\"], coeffs[\"E0\"], K, sign, Interval(0, x0), Interval(0, u0), 3,",
      "    F = _F(e, coeffs[\"C\"], coeffs[\"E2\"], coeffs[\"E1\"], coeffs[\"E0\"], K, sign, Interval(x0), Interval(u0), 3,", ALL_DEPTHS,
      "the third-order coefficients are evaluated at the box's corner instead of over the box"),
    N("all_depths_finite_not_checked", "        _check_alpha(c, law, own)\n        reasons += [f\"T = {c['T']}: {r}\" for r in own]",
      "        reasons += [f\"T = {c['T']}: {r}\" for r in own]", ALL_DEPTHS,
      "the finite certificates below T0 are not re-checked"),
    N("end_without_its_second_local_term", "            + sp.log(1 + kappa * q / (n + bb + 1) + kappa2 * q**2 / ((n + bb + 1) * (n + bb + 2))))",
      "            + sp.log(1 + kappa * q / (n + bb + 1)))", ORDERS,
      "an end's integral drops its C₂ term, so the third order is wrong"),
    N("stirling_one_order_short", "    return (sp.log(K) + n * sp.log(r) + bb * sp.log(q) + _log_gamma_ratio(bb, x, L, 2)",
      "    return (sp.log(K) + n * sp.log(r) + bb * sp.log(q) + _log_gamma_ratio(bb, x, L, 1)", ORDERS,
      "Γ(n+1)/Γ(n+b+1) is expanded one order short of the third"),
    N("end_C1_ignores_the_next_pieces", "        C1, C2 = (sum(w[1 + k - j] for w in weighted for j in range(k + 1) if w[0] == bb + j) for k in (1, 2))",
      "        C1, C2 = (sum(w[1 + k] for w in weighted if w[0] == bb) for k in (1, 2))", ORDERS,
      "an end's C₁, C₂ leave out the pieces whose exponent is one or two more (an atom on a density)"),
    N("weight_hi_slope_sign", "    for name, at in ((\"lo\", local_s_end + _u), (\"hi\", local_s_end - _u)):",
      "    for name, at in ((\"lo\", local_s_end + _u), (\"hi\", local_s_end + _u)):", ORDERS,
      "the weight's slope at the top end has the wrong sign"),
    N("check_bound_one_window_end", "        bound = None if reason else 2 * (third[-1] + third[-2]) / span[-1]",
      "        bound = None if reason else 2 * third[-1] / span[-1]", ORDERS,
      "the slope's error bound counts the third order at one end of the decade only"),
    N("check_without_second_order", "    y = [r[\"T_gap_computed\"] - (0.0 if ex.second is None else T * ex.term(T, 2)) for r, T in zip(rows, Ts)]",
      "    y = [r[\"T_gap_computed\"] for r in rows]", ORDERS,
      "the check judges the first order without subtracting the derived second (the secant error)"),
    N("patch_lands_on_the_first_row", "                last = torch.where(on, patch_row.to(attn.dtype).unsqueeze(2), attn[..., -1, :])",
      "                last = torch.where(on, patch_row.to(attn.dtype).unsqueeze(2), attn[..., 0, :])", ATTENTION_PATCH,
      "the rows a patched head keeps are the first token's, not its own query row"),
    N("patch_ignores_the_mask", "                on = patch_mask[:, layer].to(torch.bool).view(E, 1, H, 1)",
      "                on = torch.ones_like(patch_mask[:, layer]).to(torch.bool).view(E, 1, H, 1)", ATTENTION_PATCH,
      "every head of the layer is patched, not only the masked ones"),
    N("patch_rows_on_the_items", "    rows[..., label_positions(N).to(rows.device)] = weights / weights.sum(-1, keepdim=True)",
      "    rows[..., (label_positions(N) - 1).to(rows.device)] = weights / weights.sum(-1, keepdim=True)", ATTENTION_PATCH,
      "the patch's weight sits on the context items, not on their labels"),
    N("count_matched_from_any_head", "    k, free = int(induction.sum()), np.flatnonzero(eligible)",
      "    k, free = int(induction.sum()), np.flatnonzero(~induction)", ATTENTION_PATCH,
      "the count-matched control may take previous-token heads (any non-induction head)"),
    N("claim8_specific_reversed", '            "specific": (matching - uniform, acc_se(matching, uniform))}',
      '            "specific": (uniform - matching, acc_se(matching, uniform))}', CLAIM8_PATCH,
      "claim 8's control check reads the uniform patch against the matching one"),
    N("claim8_collapse_se_of_the_intact", "    se = binomial_se(np.clip(uniform, 0, 1), EVAL_SIZE)",
      "    se = binomial_se(np.clip(matching, 0, 1), EVAL_SIZE)", CLAIM8_PATCH,
      "claim 8's copy checks take the se of the other patch's accuracy"),
    N("circuit_prev_includes_induction", "    prev = ~induction & (sel[\"prev_token\"] > prev_threshold)",
      "    prev = sel[\"prev_token\"] > prev_threshold", V4_HEADS,
      "the previous-token ablation also takes out induction heads that score as previous-token heads"),
    N("v4_control_may_be_induction", "        if row[j] <= threshold:", "        if True:", V4_CLAIM9,
      "the control head is the least-induction head of the top's layer even when it is an induction head (version 3's flaw)"),
    N("paired_se_unpaired", "        out[f\"{k}_se\"] = v.std(1, ddof=1) / math.sqrt(n)",
      "        out[f\"{k}_se\"] = v.std(1, ddof=0) / math.sqrt(n - 1) + 0.01", V4_CLAIM9,
      "the paired se is not the sd of the per-sequence differences over √n"),
    N("holm_reads_every_version", "        latest[claim] = (version, folder)", "        latest[f\"{claim} {version}\"] = (version, folder)",
      V4_RESULTS, "Holm's family also counts the superseded versions of a claim"),
    N("holm_keeps_any_decision", "        r[\"holm_decision\"] = r[\"decision\"] if kept else None",
      "        r[\"holm_decision\"] = r[\"decision\"]", V4_RESULTS,
      "a check stays decided after Holm whether or not its direction survives"),
    N("magnitude_first_family_only", '    d = np.concatenate([np.asarray(numbers.get(k, []), float) for k in ("diff_A", "diff_B")]) \\',
      '    d = np.concatenate([np.asarray(numbers.get(k, []), float) for k in ("diff_A",)]) \\', V4_RESULTS,
      "the magnitude reads one family's seeds only"),
    N("v4_must_learn_lenient", "    return np.asarray(before, float) <= copy + 0.10", "    return np.asarray(before, float) <= copy + 0.30",
      V4_TRANSFER, "'stage 2 has to learn M2' admits a decoder that already does M2-necessary ICL before stage 2"),
    N("v4_no_stage2_reads_the_end", "    return np.asarray(r.curve(metric, arm)[0], float)",
      "    return np.asarray(r.curve(metric, arm)[-1], float)", V4_TRANSFER,
      "the no-stage-2 baseline is read at the end of stage 2, not at step 0"),
    N("v4_claim4_headroom_on_diverse", "    room = {f: headroom(final(c1.metric, c1.b, f), c1.margin) for f in fams}",
      "    room = {f: headroom(final(c1.metric, c1.a, f), c1.margin) for f in fams}", V4_TRANSFER,
      "claim 4's headroom is read on the diverse arm instead of the low-K1 baseline"),
    N("v4_area_headroom_without_se", "    return np.asarray(auc, float) + float(margin) + 2 * np.asarray(se, float) < 1.0",
      "    return np.asarray(auc, float) + float(margin) < 1.0", V4_TRANSFER,
      "the area headroom of claims 5 and 7 leaves out the area's two se"),
    N("v4_claim5_headroom_on_deep", '    room = {f: area_headroom(auc["base", f], se["base", f], margin) for f in fams}',
      '    room = {f: area_headroom(auc["deep", f], se["deep", f], margin) for f in fams}', V4_TRANSFER,
      "claim 5's headroom is read on the deep decoder instead of the base"),
    N("v4_copy_level_se_at_copy", "    return p + 2 * math.sqrt(p * (1 - p) / n)", "    return p + 2 * math.sqrt(copy * (1 - copy) / n)",
      V4_PILOTS, "the 'clearly ICL' level takes its se at B/N, not at B/N + plus"),
    N("v4_claim6_rule_no_extra_point", "            steps = grid[-1] if first is None else grid[min(first + 1, len(grid) - 1)]",
      "            steps = grid[-1] if first is None else grid[first]", V4_PILOTS,
      "claim 6's rule stops at the first step count with all 8 pilot seeds, giving slower verdict seeds no room"),
    N("v4_claim5_margin_on_area", '            "claim5_margin": round(0.1 * float(np.median(area_rise)), 2)}',
      '            "claim5_margin": round(0.1 * float(np.median(area)), 2)}', V4_MARGINS,
      "claim 5's margin is a tenth of the area, not of its rise over the no-stage-2 value"),
    N("v4_claim7_gain_is_the_slope", '            scale = spans[f] if c.metric == "auc_gain_over_span" else np.ones_like(spans[f])',
      "            scale = np.ones_like(spans[f])", V4_MODALITIES,
      "claim 7 decides the slope per unit of accuracy (version 3's unit) against the gain's margin"),
    N("v4_claim7_ceiling_on_top_dose", "    room = {f: area_headroom(y[f][0], sy[f][0], c_gain.margin) for f in fams}",
      "    room = {f: area_headroom(y[f][-1], sy[f][-1], c_gain.margin) for f in fams}", V4_MODALITIES,
      "claim 7's ceiling check reads the highest dose instead of the lowest"),
    N("v4_claim6_fallback_smallest", "        return max(V4_FUSION_K2_GRID), max(V4_FUSION_STEP_GRID)",
      "        return min(V4_FUSION_K2_GRID), max(V4_FUSION_STEP_GRID)", V4_PILOTS,
      "where claim 6's pilot picks no K2, its verdict run falls back to the smallest K2, not the largest"),
    N("v4_claim6_staged_prefers_m2", '        return rates["m1"] - rates["m2"]', '        return rates["m2"] - rates["m1"]',
      V4_MODALITIES, "the staged arm's preference for M1 is read the other way round"),
    N("v4_reported_keeps_outcomes", '        cells = [f"{k} = {_number(v, tol(k))}" for k, v in summary.items() if not str(k).startswith("verdict: ")]',
      '        cells = [f"{k} = {_number(v, tol(k))}" for k, v in summary.items()]', V4_RESULTS,
      "the reported block repeats the check outcomes that the results table holds"),
    N("distractors_class_bound", "        return torch.cat([x, self._distractor_scale * xi], -1)",
      "        return torch.cat([x, self._distractor_scale * xi + x[..., :1]], -1)", V4_DATA,
      "the distractor coordinates carry the item's class"),
    N("query_not_reversed", "    return (second, first) if layout in QUERY_REVERSED_LAYOUTS else (first, second)",
      "    return (first, second)", V4_DATA, "a query-reversed layout keeps the context's order in the query"),
    N("combined_power_no_guard", "            out[combine_families(ta, tb, a).decision] += prob * pb",
      "            out[sign_test_counts(ta.plus + tb.plus, ta.minus + tb.minus, 0, a).decision] += prob * pb", POWER_LAW,
      "the two-family rule's power leaves out the guard against families that disagree"),
]


# ---------------------------------------------------------------------------------------------
# Finding snippets
# ---------------------------------------------------------------------------------------------


def searched_files(root: Path) -> list[Path]:
    out = []
    for top in SEARCHED:
        for p in sorted((root / top).rglob("*.py")):
            rel = p.relative_to(root).as_posix()
            if "__pycache__" in rel or any(rel == e or rel.startswith(e + "/") for e in EXCLUDED):
                continue
            out.append(p)
    return out


def locate(mut: Mutation, root: Path) -> list[tuple[Path, int, int, int]]:
    """Every match ``(file, start, end, form)`` in the searched files of the first form of the
    mutation (``Mutation.forms``) that matches anywhere."""
    files = [(p, p.read_text()) for p in searched_files(root)]
    for k, (snippet, _, regex) in enumerate(mut.forms()):
        hits = []
        for p, text in files:
            if regex:
                hits += [(p, m.start(), m.end(), k) for m in re.finditer(snippet, text, re.M)]
            else:
                start = text.find(snippet)
                while start >= 0:
                    hits.append((p, start, start + len(snippet), k))
                    start = text.find(snippet, start + 1)
        if hits:
            return hits
    return []


def mutated_text(mut: Mutation, form: int, text: str, start: int, end: int) -> str:
    snippet, replacement, regex = mut.forms()[form]
    if regex:
        new = re.compile(snippet, re.M).match(text, start).expand(replacement)
    else:
        new = replacement
    return text[:start] + new + text[end:]


# ---------------------------------------------------------------------------------------------
# Source trees
# ---------------------------------------------------------------------------------------------

PROBE = '''"""pytest plugin written by tests/mutation.py: where did every mmicl module come from?
Also: Hypothesis without its shrink phase (a failure found is a kill; shrinking it to a smaller
example only costs time)."""
import json, os, sys


def pytest_sessionstart(session):
    # after tests/conftest.py has loaded its profile, before the test modules (and their
    # @settings(...) objects, which inherit from the profile loaded then) are imported
    from hypothesis import Phase, settings

    settings.register_profile("mutation-no-shrink", parent=settings.default,
                              phases=[p for p in Phase if p is not Phase.shrink])
    settings.load_profile("mutation-no-shrink")


def _record():
    mods = {name: os.path.realpath(getattr(m, "__file__", "") or "")
            for name, m in list(sys.modules.items()) if name == "mmicl" or name.startswith("mmicl.")}
    with open(os.environ["MUTATION_PROBE_OUT"], "w") as f:
        json.dump(mods, f)


def pytest_collection_finish(session):
    # once the test modules are imported: a mutant whose test then never ends (a timeout) is still
    # known to have run on the copy
    _record()


def pytest_sessionfinish(session, exitstatus):
    _record()
'''


def git(*args: str) -> str:
    return subprocess.run(["git", "-C", str(REPO), *args], check=True, capture_output=True, text=True).stdout


def export_tree(dest: Path, rev: str | None) -> dict:
    """The source tree in ``dest``: ``git archive rev`` or (rev None) the working tree's tracked and
    untracked-but-not-ignored files.  Returns what was exported."""
    dest.mkdir(parents=True)
    if rev is not None:
        commit = git("rev-parse", rev).strip()
        archive = subprocess.run(["git", "-C", str(REPO), "archive", commit], check=True, capture_output=True).stdout
        subprocess.run(["tar", "-x", "-C", str(dest)], input=archive, check=True)
        info = {"source": f"git archive {rev}", "commit": commit}
    else:
        names = git("ls-files", "-z", "-c", "-o", "--exclude-standard").split("\0")
        for name in filter(None, names):
            src = REPO / name
            if src.is_file():
                (dest / name).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(src, dest / name)
        dirty = git("status", "--porcelain", "--untracked-files=normal").splitlines()
        info = {"source": "working tree", "commit": git("rev-parse", "HEAD").strip(),
                "dirty": [line for line in dirty]}
    for sub in ("theory", "numerics", "proofs"):
        link = dest / "mmicl" / sub
        if not link.exists():
            link.symlink_to(Path("..") / sub)
    (dest / "_mutation_probe.py").write_text(PROBE)
    return info


def run_env(tree: Path, cache: Path, probe_out: Path) -> dict:
    env = dict(os.environ)
    env.update(PYTHONPATH=str(tree), PYTHONDONTWRITEBYTECODE="1", MMICL_CACHE=str(cache),
               MUTATION_PROBE_OUT=str(probe_out), OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1",
               MKL_NUM_THREADS="1", HYPOTHESIS_PROFILE=os.environ.get("HYPOTHESIS_PROFILE", "default"))
    return env


DESELECT: list[str] = []
"""pytest node ids to leave out (``--deselect``): for a tree where a test unrelated to the maths
fails before any mutation; listed in the report."""


def run_pytest(tree: Path, tests: list[str], cache: Path, timeout: float) -> dict:
    """Run the test files in ``tree``; returns rc (None on timeout), seconds, output tail and the
    modules outside the tree (should be none)."""
    probe_out = tree / ".probe.json"
    if probe_out.exists():
        probe_out.unlink()
    # -n 0: one process (the suite's default is pytest-xdist over every core), so that -x stops at the
    # first failure and the probe sees every module the tests load
    cmd = ["nice", "-n", "10", sys.executable, "-m", "pytest", "-q", "-x", "-n", "0", "-p", "no:cacheprovider",
           "-p", "_mutation_probe", "--hypothesis-seed=0", *[f"--deselect={d}" for d in DESELECT],
           *[f"tests/{t}" for t in tests]]
    t0 = time.monotonic()
    proc = subprocess.Popen(cmd, cwd=tree, env=run_env(tree, cache, probe_out), stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, start_new_session=True)
    try:
        out, _ = proc.communicate(timeout=timeout)
        rc = proc.returncode
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)  # the whole group: pytest and any child it started
        out, _ = proc.communicate()
        rc = None
    seconds = time.monotonic() - t0
    outside, loaded = [], 0
    if probe_out.exists():
        mods = json.loads(probe_out.read_text())
        loaded = len(mods)
        real_tree = os.path.realpath(tree)
        outside = sorted(f"{k}: {v}" for k, v in mods.items() if v and not v.startswith(real_tree + os.sep))
    lines = out.strip().splitlines()
    return {"rc": rc, "seconds": round(seconds, 1), "tail": "\n".join(lines[-15:]),
            "failed": [x for x in lines if x.startswith(("FAILED ", "ERROR "))][:5],
            "mmicl_modules_loaded": loaded, "modules_outside_copy": outside,
            "probe_ran": probe_out.exists()}


# ---------------------------------------------------------------------------------------------
# The run
# ---------------------------------------------------------------------------------------------


def select(names: list[str] | None, which: str = "all") -> list[Mutation]:
    pool = [m for m in MUTATIONS if which == "all" or (m.name in EXTENDED) == (which == "extended")]
    if not names:
        return pool
    wanted = [n for arg in names for n in arg.split(",") if n]
    known = {m.name: m for m in MUTATIONS}
    unknown = [n for n in wanted if n not in known]
    if unknown:
        sys.exit(f"unknown mutation(s): {', '.join(unknown)}; see --list")
    return [known[n] for n in wanted if known[n] in pool]


def score(results: list[dict]) -> dict:
    count = {k: sum(r["status"] == k for r in results)
             for k in ("killed", "survived", "timeout", "not-found", "ambiguous", "invalid", "error")}
    denom = count["killed"] + count["survived"] + count["timeout"]
    count["score"] = round((count["killed"] + count["timeout"]) / denom, 4) if denom else None
    count["score_text"] = f"{count['killed'] + count['timeout']}/{denom}" if denom else "n/a"
    return count


def table(results: list[dict]) -> str:
    w = max(len(r["name"]) for r in results)
    lines = [f"{'mutant':<{w}}  {'status':<9}  {'secs':>6}  where"]
    for r in results:
        where = f"{r.get('file', '')}:{r.get('line', '')}" if r.get("file") else r.get("detail", "")
        lines.append(f"{r['name']:<{w}}  {r['status']:<9}  {r.get('seconds', 0):>6.1f}  {where}")
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", action="append", help="mutation names, comma-separated (repeatable)")
    ap.add_argument("--json", type=Path, help="write the report here")
    ap.add_argument("--set", dest="which", choices=("all", "core", "extended"), default="all",
                    help="core: the maths mutants; extended: the per-package ones; all (default)")
    ap.add_argument("--rev", default="HEAD", help="the commit to mutate (default HEAD)")
    ap.add_argument("--worktree", action="store_true", help="mutate a copy of the working tree instead of --rev")
    ap.add_argument("--timeout", type=float, help="seconds per mutant (default 3 × baseline + 60)")
    ap.add_argument("--no-baseline", action="store_true", help="skip the unmutated run (time limit then 900 s)")
    ap.add_argument("--list", action="store_true", help="list the mutations and where each snippet is found")
    ap.add_argument("--keep", action="store_true", help="keep the scratch folder")
    ap.add_argument("--deselect", action="append", default=[],
                    help="a pytest node id to leave out of every run (repeatable; in the report)")
    args = ap.parse_args(argv)
    DESELECT[:] = args.deselect
    muts = select(args.only, args.which)

    if args.list:  # where each snippet is, in --rev and in the working tree as it is now
        with tempfile.TemporaryDirectory(prefix="mmicl-mutation-list-") as tmp:
            at_rev = Path(tmp) / "rev"
            export_tree(at_rev, args.rev)
            for m in muts:
                cols = []
                for root in (at_rev, REPO):
                    hits = locate(m, root)
                    cols.append(", ".join(f"{p.relative_to(root)}:{p.read_text().count(chr(10), 0, s) + 1}"
                                          + (f" (form {k})" if k else "") for p, s, _, k in hits) or "NOT FOUND")
                print(f"{m.name:<32} {args.rev}: {cols[0]:<28} worktree: {cols[1]:<28} {m.why}")
        print(f"{len(muts)} mutations")
        return 0

    scratch = Path(tempfile.mkdtemp(prefix="mmicl-mutation-"))
    started = time.time()
    base = scratch / "base"
    info = export_tree(base, None if args.worktree else args.rev)
    print(f"source: {info['source']} ({info['commit']}); scratch: {scratch}", flush=True)
    if info.get("dirty"):
        print("working tree changes copied: " + "; ".join(info["dirty"]), flush=True)
    report = {"schema_version": 1, **info, "started": _dt.datetime.now().isoformat(timespec="seconds"),
              "python": sys.executable, "pytest_args": "-q -x -p no:cacheprovider --hypothesis-seed=0",
              "deselected": list(DESELECT),
              "baseline": {}, "mutants": []}

    base_cache = scratch / "cache-base"
    present = lambda tests: [t for t in tests if (base / "tests" / test_file(t)).is_file()]  # noqa: E731
    files = present(dict.fromkeys(t for m in muts for t in m.tests))
    report["test_files_missing"] = [t for t in dict.fromkeys(t for m in muts for t in m.tests) if t not in files]
    if not args.no_baseline:
        for f in files:
            r = run_pytest(base, [f], base_cache, timeout=1800)
            report["baseline"][f] = {k: r[k] for k in ("rc", "seconds", "modules_outside_copy", "mmicl_modules_loaded")}
            print(f"baseline {f}: rc={r['rc']} {r['seconds']} s, {r['mmicl_modules_loaded']} mmicl modules, "
                  f"{len(r['modules_outside_copy'])} outside the copy", flush=True)
            if r["rc"] != 0 or r["modules_outside_copy"] or not r["probe_ran"]:
                print(r["tail"])
                report["error"] = f"baseline {f} failed or imported mmicl from outside the copy"
                _write(report, args.json)
                if not args.keep:
                    shutil.rmtree(scratch, ignore_errors=True)
                return 2

    for mut in muts:
        res = {"name": mut.name, "why": mut.why, "tests": list(mut.tests)}
        hits = locate(mut, base)
        if not hits:
            res.update(status="not-found", detail="snippet found in no searched file")
        elif len(hits) > 1:
            res.update(status="ambiguous", detail="; ".join(f"{p.relative_to(base)}@{s}" for p, s, _, _ in hits))
        else:
            path, start, end, form = hits[0]
            rel = path.relative_to(base).as_posix()
            text = path.read_text()
            new = mutated_text(mut, form, text, start, end)
            res.update(file=rel, line=text.count("\n", 0, start) + 1, form=form)
            try:
                compile(new, rel, "exec")
            except SyntaxError as e:
                res.update(status="invalid", detail=f"mutated file does not compile: {e}")
            if "status" not in res and not present(mut.tests):  # pytest without files would run everything
                res.update(status="error", detail="none of the mapped test files is in the tree")
            if "status" not in res:
                tree = scratch / "mutant"
                if tree.exists():
                    shutil.rmtree(tree)
                shutil.copytree(base, tree, symlinks=True)
                (tree / rel).write_text(new)
                cache = scratch / "cache-mutant"
                if cache.exists():
                    shutil.rmtree(cache)
                fresh = rel.startswith("theory/") or "compiled(" in text or not base_cache.exists()
                if fresh:
                    cache.mkdir()
                else:
                    shutil.copytree(base_cache, cache)
                tests = present(mut.tests)
                res["tests"] = tests
                limit = args.timeout or (
                    900.0 if args.no_baseline else 60 + 3 * sum(report["baseline"][t]["seconds"] for t in tests))
                r = run_pytest(tree, tests, cache, limit)
                res.update(seconds=r["seconds"], rc=r["rc"], failed=r["failed"], tail=r["tail"], fresh_cache=fresh, time_limit=limit,
                           modules_outside_copy=r["modules_outside_copy"])
                if r["modules_outside_copy"] or not r["probe_ran"]:
                    res["status"] = "error"
                    res["detail"] = "mmicl imported from outside the copy" if r["probe_ran"] else "the probe did not run"
                elif r["rc"] is None:
                    res["status"] = "timeout"
                elif r["rc"] in (1, 2):
                    res["status"] = "killed"
                elif r["rc"] == 0:
                    res["status"] = "survived"
                else:
                    res["status"] = "error"
                    res["detail"] = f"pytest exit status {r['rc']}"
        report["mutants"].append(res)
        print(f"{mut.name:<32} {res['status']:<9} {res.get('seconds', 0):>6.1f} s  {res.get('file', res.get('detail', ''))}",
              flush=True)
        _write(report, args.json)

    report["finished"] = _dt.datetime.now().isoformat(timespec="seconds")
    report["duration_s"] = round(time.time() - started, 1)
    report["summary"] = score(report["mutants"])
    _write(report, args.json)
    print()
    print(table(report["mutants"]))
    s = report["summary"]
    print(f"\nscore {s['score_text']} = {s['score']}  (killed {s['killed']}, survived {s['survived']}, "
          f"timeout {s['timeout']}; not found {s['not-found']}, ambiguous {s['ambiguous']}, invalid {s['invalid']}, "
          f"error {s['error']}); {report['duration_s']:.0f} s")
    survivors = [r["name"] for r in report["mutants"] if r["status"] == "survived"]
    if survivors:
        print("survivors: " + ",".join(survivors))
    if not args.keep:
        shutil.rmtree(scratch, ignore_errors=True)
    return 0


def _write(report: dict, path: Path | None) -> None:
    if path is None:
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(json.dumps(report, indent=1, ensure_ascii=False) + "\n")
    os.replace(tmp, path)


if __name__ == "__main__":
    sys.exit(main())
