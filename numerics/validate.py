"""Checks at the boundary: each names the value, what is allowed, and how to fix it.

The checks of the caller's values raise ``InputError`` (``mmicl.theory.errors``: an ``MmiclError``
and a ``ValueError``), so that a caller can tell "the caller gave a value that cannot be used" apart
from a failure inside a computation: the command line turns exactly these errors (every
caller-mistake class derives from ``InputError``) into usage errors, and lets anything else surface
as the bug it is.

This module imports nothing heavy (it is used by the command line's start-up path).
"""
from __future__ import annotations

import math
import numbers

from mmicl.theory.errors import InputError

__all__ = [
    "cuda_driver_present",
    "MAX_TRAIN_DEPTH", "MAX_DEPTH_VARIANT", "MAX_FLOW_EVALUATIONS",
    "START_BOX",
    "MAX_CONTEXT",
    "MAX_BATCH_FLOATS",
    "MAX_STEPS",
    "MAX_SAMPLES",
    "MAX_MC",
    "MAX_PROFILE",
    "check_batch_memory",
    "MAX_DEPTH_ONE",
    "MAX_DEPTH_MP",
    "MAX_DEPTH_TWO",
    "MAX_DEPTH_FLOW_TWO",
    "MAX_DEPTH_UNBOUNDED",
    "MAX_DEPTH_UNTIED",
    "MAX_DIM",
    "MAX_DIM_VERIFY",
    "MAX_LAW_SCALE",
    "MAX_LSA_FLOATS",
    "MAX_SEED",
    "MAX_ZETA2",
    "MIN_ZETA2",
    "MAX_QUOTE",
    "InputError",
    "MAX_LINE",
    "abbreviate",
    "check_count",
    "check_depth",
    "check_device",
    "check_dimension",
    "check_finite",
    "check_lsa_size",
    "check_real",
    "check_seed",
    "check_zeta",
    "shorten_message",
]

MAX_SEED = 2**32 - 1
"""Largest seed accepted: numpy's legacy limit; derived seeds (``seed·100 + k``, ``seed + 7919``)
stay far inside the 64-bit range of ``torch.Generator.manual_seed``."""

MAX_LAW_SCALE = 1e6
"""Largest ``s = ‖m‖²`` a law may reach.  Far above it float64 keeps fewer and fewer digits of
``1 + s``: at ``s ≈ 1e20`` α_T comes out as α*/2 whatever T, at ``s ≈ 1e77`` the
two-parameter minimiser is NaN, at ``s ≈ 1e308`` the excess risk is 10^1749.  Tokens of norm up to
10³ are also what float32 training can take without losing the noise."""

# ---------------------------------------------------------------------------------------------
# ζ: one stated range of E[ζ²], refused outside it (API and command line alike)
# ---------------------------------------------------------------------------------------------
#
# The choice: ζ is *refused* outside ``MIN_ZETA2 ≤ E[ζ²] ≤ MAX_ZETA2``, not carried in log scale.
# ζ only scales the labels: every risk and every excess is ``E[ζ²]`` times a ζ-free number, and α_T,
# the minimisers and the flows do not depend on ζ at all, so nothing is lost by asking for a law of
# ζ inside the range and rescaling the risks afterwards.  Carrying ``log E[ζ²]`` through every risk
# (and the float32 torch models, which train on squared labels) would buy nothing.  The check is
# made on the number itself, never on a square computed in float64: ``const(1e200)`` would overflow
# (an ``OverflowError``) and ``const(1e-200)`` would underflow to 0 and be taken for ζ ≡ 0.

MAX_ZETA2 = 1e30
"""Largest ``E[ζ²]``: ζ only scales the labels (every risk scales by ``E[ζ²]``), but the torch models
train in float32, whose largest number is 3.4e38, on squared labels."""

MIN_ZETA2 = 1e-30
"""Smallest non-zero ``E[ζ²]``: the mirror of ``MAX_ZETA2``.  Squared labels of 1e-30 times risks
that fall to 1e-10 stay above float32's smallest normal number (1.2e-38); far below, the risks of the
float32 models underflow to 0 and a risk of exactly 0 would read as a perfect model."""

# ---------------------------------------------------------------------------------------------
# sizes: one limit per public function, sized by what that function costs
# ---------------------------------------------------------------------------------------------
#
# Timed on the 2-core machine of the project (two cores shared with other work), law
# ``s=uniform(0.5,4)`` unless said otherwise; each limit keeps one call within about a minute.
# The cost of a call also grows with the number of quadrature nodes of the law (a discrete law
# with thousands of atoms is slower at every T): the limits are sized on laws of the kind the
# claims use.  The built-in claims' own calls stay within them (full size included): thm6.2 goes
# to T = 10⁵ (one-parameter), thm6.3 to T = 200 (two-parameter minimiser and loss) and T = 30
# (two-parameter flow), the untied claims to T = 640, the α_T cross-check in mpmath to T = 1000.

MAX_DEPTH_ONE = 10**6
"""``alpha_T``, ``excess_risk``, ``flow_one`` (and the one-parameter loss, gradient, curvature):
measured on ``s=uniform(0.5,4)``: α_T 0.8 s and the one-parameter flow 0.3 s at T = 10⁶ (the
command line's earlier note: T = 10⁷ takes ~15 s, at 10³⁰ the flow no longer comes to rest).  Also
``mmicl alpha --T`` and ``mmicl limits --T-max``; thm6.2 goes to T = 10⁵."""

MAX_DEPTH_MP = 10**4
"""``alpha_T_mp`` (30-digit mpmath quadrature of the derivative, then a root finder): measured
1.8 s at T = 100, 1.3 s at T = 1000 and 2.0 s at T = 10⁴ on 2 shared cores; larger T were not
measured, so the limit stays at the largest measured depth (the claims use T ≤ 1000)."""

MAX_DEPTH_TWO = 1000
"""``TwoParameterLoss``, ``two_parameter_terms``, ``minimise_two`` (and ``minimise_two_residual``):
the jet recurrence runs T layers per evaluation; ``minimise_two`` (≈ 1000 evaluations on a grid and
a Brent search) took 0.8 s at T = 100, 2.5 s at T = 300, 9.3 s at T = 1000 and would take ~90 s at
10⁴ (at T = 10⁷ it ran for more than 125 s).  The loss object alone costs 0.1 s per evaluation at
T = 10⁴; it is held to the same limit as the minimiser it serves.  thm6.3 goes to T = 200."""

MAX_DEPTH_FLOW_TWO = 100
"""``flow_two``, ``basin_two`` (per start) and ``mmicl flow2 --T``: the stiff two-parameter flow from
(0, 0) took 1.4 s at T = 10, 2.5 s at T = 30, 10 s at T = 100 and 34 s at T = 300 (still moving at
τ_max) on 2 shared cores; ~90 s at T = 100 was seen on 2 fully loaded cores, so 100 keeps a call
within about a minute.  thm6.3 runs it up to T = 30, its basins up to T = 10, ``mmicl limits --model
two --basin`` at T ≤ 20."""

MAX_DEPTH_VARIANT = 10_000
"""The LCA variants (``numerics.variants``: the loss, its minimiser, the excess at given
parameters; ``VariantLCA``): T layer maps per evaluation; the variant claims go to T = 1000."""

MAX_FLOW_EVALUATIONS = 20_000
"""Evaluations of the loss (value, gradient, Hessian) one variant flow may make before it stops
with the outcome ``"budget"``: a flow that comes to rest at T = 30 used about 9 500; from a start
where the iterated state overflows float64, LSODA was seen to run for more than 10 minutes without
this bound."""

MAX_DEPTH_UNBOUNDED = 2000
"""``alpha_T_unbounded`` (an exponential law: mpmath root finding on the closed-form stationarity
condition, with ~T extra digits): 1.1 s at T = 500 and 8.5 s at T = 2000 on 2 loaded cores (the
working precision grows with T, so the cost grows faster than T)."""

MAX_DEPTH_UNTIED = 2000
"""``optimal_schedule`` (the untied optimum) and ``untied_excess`` (a schedule of that many layers,
on a rule of ~T + margin nodes): the Lanczos process costs O(T²·n) with n ≈ T + margin nodes,
measured 2.0 s at T = 400, 1.6 s at T = 1000 and 36 s at T = 2000 on 2 loaded cores (25 s on one
free core).  The untied claims go to T = 640."""

MAX_DIM = 1024
"""``d1 + d2`` of a law given to ``best_lsa``/``lsa_excess``, to ``verify`` and to the command line
(``--d1``, ``--d2``, LAW text): the command line's limit since issue 9, now also the API's.  At
d1 = 10⁶ the same calls asked for 7.28 TiB.  It is *not* by itself a bound on cost: ``best_lsa``
is also held to ``MAX_LSA_FLOATS`` (nodes × d²), and ``verify``'s Monte Carlo holds batch × (d+1)²
floats per batch — measured: ``verify("thm4.1", law="s=uniform(0.5,4); d1=32; d2=32")`` (quick) failed
to allocate 655 MB under an 8 GB address-space cap, and at d = 256 asked for a 10 GB tensor, so a
claim run with a law near MAX_DIM does not fit this machine: ``verify`` has its own limit,
``MAX_DIM_VERIFY``."""

MAX_DIM_VERIFY = 32
"""``d1 + d2`` of a law given to ``verify`` and ``mmicl verify --law``: the claims train torch
models and run Monte Carlo on (d+1)×(d+1) matrices per prompt, whose memory grows like d² and
time faster.  Measured on 2 loaded cores, ``mmicl verify --quick --claim thm4.1`` on
``s=uniform(0.5,4)`` with d1 = d2: 20 s and 1.1 GB peak at d = 16, 35 s and 2.6 GB at d = 32,
and at d = 64 still running after 400 s at 8.7 GB.  The full sizes hold more prompts."""

MAX_LSA_FLOATS = 2**28
"""(quadrature nodes of the law) × d² for ``best_lsa``, ``lsa_excess`` and ``norm_blocks``: the
normal equations and the gap hold a (nodes, d, d) float64 array of coordinate moments (a few copies
at once).  Measured: ``s=uniform(0.5,4)`` (180 nodes) at d = 256 took 3.7 s for the limit and n = 100
(0.3 GiB); ``sv=uniform(0.2,1); sr=beta(2,2,0.5,2)`` (180 × 180 = 32 400 nodes) at d = 256 grew past
17 GiB and had to be stopped.  2²⁸ float64s are 2 GiB per array: ``s=uniform(0.5,4)`` fits up to
d = 1024 (MAX_DIM), a per-modality law of 32 400 nodes up to d ≈ 90."""

MAX_TRAIN_DEPTH = 1000
"""``mmicl train`` and the ``montecarlo`` run kind: a T-layer model runs T layers per step."""
START_BOX = 10.0
"""Starts of the flows: the two-parameter flow stops as diverged outside |α|, |β| ≤ 10, and the
one-parameter flow from |α0| = 10¹⁰ did not finish in 10 minutes (α* is in (0, 1])."""
MAX_CONTEXT = 10**12
"""Context lengths: beyond this use the large-context limit (``--n inf``)."""
MAX_BATCH_FLOATS = 2**28
"""One batch of prompt moments holds batch × (d+1)² floats (1 GiB of float32 at this bound)."""
MAX_STEPS = 10**7
"""Training steps of one run (``mmicl train``, the testbed commands)."""
MAX_SAMPLES = 10**8
"""Fresh prompts of one risk estimate (``mmicl train --samples``)."""
MAX_MC = 10**7
"""Monte Carlo prompts of ``mmicl lsa --mc``."""
MAX_PROFILE = 10**6
"""Points of the per-prompt excess profile of ``mmicl lsa --profile``."""

MAX_QUOTE = 80
"""How many characters of a caller's text (a law) an error message quotes before it abbreviates."""


def abbreviate(text, limit: int = MAX_QUOTE) -> str:
    """``text`` (a law, say) for an error message: itself if short, else its first ``limit``
    characters, "…" and its length, so that a bad 10 000-atom law gets one short line."""
    text = str(text)
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… ({len(text)} characters)"


MAX_LINE = 240
"""An error line longer than this is shortened by ``shorten_message``."""


def shorten_message(message: str, limit: int = MAX_LINE) -> str:
    """``message`` with every line longer than ``limit`` shortened: the text it quotes (everything
    before the first ``": "`` after which the rest of the line is short) is ``abbreviate``-d and the
    reason kept, so "discrete(1:0.0001, … 10 000 atoms): probabilities must sum to 1" stays one
    short line."""
    budget = limit - MAX_QUOTE - 30
    lines = []
    for line in str(message).split("\n"):
        if len(line) > limit:
            cut = next((i for i in _find_all(line, ": ") if len(line) - i <= budget), None)
            if cut is not None and cut > 0:
                line = abbreviate(line[:cut]) + line[cut:]
            else:
                line = f"{line[:MAX_QUOTE]}… ({len(line)} characters) …{line[-budget:]}"
        lines.append(line)
    return "\n".join(lines)


def _find_all(text: str, sub: str):
    """The positions of ``sub`` in ``text``, first first."""
    i = text.find(sub)
    while i >= 0:
        yield i
        i = text.find(sub, i + 1)


def _scalar(x):
    """A 0-d array (or numpy scalar) as the Python number it holds; anything else unchanged.
    Arrays with ``ndim > 0`` are left as they are, for the caller to refuse by name."""
    if getattr(x, "ndim", None) == 0 and hasattr(x, "item"):
        return x.item()
    return x


def _is_bool(x) -> bool:
    """``bool`` or numpy's bool (``np.bool_``, named ``bool`` in numpy 2)."""
    return isinstance(x, bool) or type(x).__name__ in ("bool", "bool_")


def _shape_note(x) -> str | None:
    shape = getattr(x, "shape", None)
    if shape is not None and getattr(x, "ndim", 0) > 0:
        return f"an array of shape {tuple(shape)}"
    return None


def check_depth(T, limit: int | None = None, what: str = "", error: type[ValueError] = InputError) -> int:
    """The depth ``T`` as a positive int, at most ``limit`` (``what`` names the function whose
    cost the limit is sized by), or an ``error`` that says what a depth must be.

    Accepted: ``int`` and ``np.integer``, integral floats (``10.0``, ``np.float32(10.0)``) and 0-d
    arrays of these.  Refused: ``bool`` (``True`` is not a number of layers), non-integral or
    non-finite floats, strings, arrays with ``ndim > 0``."""
    T = _scalar(T)
    if _is_bool(T):
        raise error(f"the depth T must be a positive integer (number of layers), got the bool {T!r}")
    if not isinstance(T, numbers.Integral):
        shape = _shape_note(T)
        if shape:
            raise error(f"the depth T must be one positive integer (number of layers), got {shape}")
        if isinstance(T, numbers.Real) and math.isfinite(T) and float(T).is_integer():
            T = int(T)
        else:
            raise error(f"the depth T must be a positive integer (number of layers), got {T!r}")
    if T < 1:
        raise error(f"the depth T must be ≥ 1 (T = 0 is no model at all), got {T}")
    if limit is not None and T > limit:
        where = f" for {what}" if what else ""
        raise error(f"the depth T must be ≤ {limit}{where}, got {T}: it is served up to T = {limit} "
                    "(one call beyond takes more than about a minute)")
    return int(T)


def check_count(name: str, n, lo: int = 1, hi: int | None = None, error: type[ValueError] = InputError) -> int:
    """A whole number of things (grid points, samples) in ``[lo, hi]``, as an int: the same types as
    ``check_depth`` are accepted (``int``, ``np.integer``, integral floats, 0-d arrays), ``bool`` is
    refused."""
    n = _scalar(n)
    rng = f"from {lo} to {hi}" if hi is not None else f"≥ {lo}"
    if _is_bool(n) or not isinstance(n, numbers.Real) or (
            not isinstance(n, numbers.Integral) and not (math.isfinite(n) and float(n).is_integer())):
        shape = _shape_note(n)
        raise error(f"{name} must be a whole number {rng}, got {shape or abbreviate(repr(n))}")
    n = int(n)
    if n < lo or (hi is not None and n > hi):
        raise error(f"{name} must be a whole number {rng}, got {n}")
    return n


def check_real(name: str, x, lo: float | None = None, hi: float | None = None,
               error: type[ValueError] = InputError) -> float:
    """A real parameter of the caller (a start α₀, a width, a tolerance) as a finite float in
    ``[lo, hi]`` (either end optional), or an ``error`` naming ``name``.

    Accepted: ``int``, ``float``, ``np.integer``, ``np.floating`` and 0-d arrays of these.
    Refused, each in one line: ``bool``, strings and other non-numbers, arrays with ``ndim > 0``
    (``np.array([0.1])``: give the number itself), NaN and ±inf."""
    x = _scalar(x)
    shape = _shape_note(x)
    if shape:
        raise error(f"{name} must be one real number, got {shape}; give the number itself")
    if _is_bool(x) or not isinstance(x, numbers.Real):
        raise error(f"{name} must be a real number, got {abbreviate(repr(x))}")
    try:
        v = float(x)
    except (TypeError, ValueError, OverflowError):
        raise error(f"{name} must be a real number that float64 holds, got {abbreviate(repr(x))}") from None
    if not math.isfinite(v):
        raise error(f"{name} must be finite, got {v!r}")
    if (lo is not None and v < lo) or (hi is not None and v > hi):
        rng = (f"in [{lo:g}, {hi:g}]" if lo is not None and hi is not None else
               f"≥ {lo:g}" if lo is not None else f"≤ {hi:g}")
        raise error(f"{name} must be {rng}, got {v!r}")
    return v


def check_finite(name: str, x, error: type[ValueError] = ValueError) -> float:
    """``x`` as a finite float, or an ``error`` (a ``ValueError`` subclass) naming ``name``.

    A plain ``ValueError`` by default: this check also guards values computed inside (an α that
    became NaN is a failure of the computation, not of the caller); pass ``InputError`` where ``x``
    is the caller's (or use ``check_real``)."""
    x = _scalar(x)
    shape = _shape_note(x)
    if shape:
        raise error(f"{name} must be one real number, got {shape}")
    try:
        x = float(x)
    except (TypeError, ValueError, OverflowError):
        raise error(f"{name} must be a real number, got {abbreviate(repr(x))}") from None
    if not math.isfinite(x):
        raise error(f"{name} must be finite, got {x!r}")
    return x


def check_dimension(d1: int, d2: int, limit: int = MAX_DIM, what: str = "",
                    error: type[ValueError] = InputError) -> None:
    """Refuse ``d1 + d2 > limit`` (``MAX_DIM``) before anything is allocated."""
    if d1 + d2 > limit:
        where = f" for {what}" if what else ""
        why = ("the claims' Monte Carlo and training grow like d² in memory; see MAX_DIM_VERIFY"
               if limit == MAX_DIM_VERIFY else "the models hold d×d moment matrices per quadrature node")
        raise error(f"d1 + d2 = {d1 + d2} must be ≤ {limit}{where} ({why})")


def _log10_abs(x: float) -> float:
    return math.log10(abs(x)) if x != 0 else -math.inf


def check_zeta(kind: str, value: float = 1.0, samples=(), error: type[ValueError] = InputError) -> None:
    """Refuse a law of ζ whose ``E[ζ²]`` lies outside ``[MIN_ZETA2, MAX_ZETA2]`` (ζ ≡ 0 is left to
    the law's own "ζ ≡ 0" refusal).  Judged in log10, from the numbers themselves: nothing is
    squared in float64, so ``const(1e200)`` is not an overflow and ``const(1e-200)`` is not ζ ≡ 0.
    ``value``/``samples`` are assumed finite (the law checks that first)."""
    if kind == "const":
        log_z2 = 2 * _log10_abs(value)
        shown = f"const({value:g}): E[ζ²] = c² = 10^{log_z2:.4g}" if value != 0 else None
    elif kind == "samples":
        top = max((abs(float(z)) for z in samples), default=0.0)
        if top == 0:
            return
        mean = math.fsum((float(z) / top) ** 2 for z in samples) / len(samples)
        log_z2 = 2 * math.log10(top) + math.log10(mean)
        shown = f"ζ samples: E[ζ²] = 10^{log_z2:.4g}"
    else:
        return  # normal, rademacher: E[ζ²] = 1
    if shown is None:
        return
    lo, hi = math.log10(MIN_ZETA2), math.log10(MAX_ZETA2)
    allowed = (f"E[ζ²] must lie in [{MIN_ZETA2:g}, {MAX_ZETA2:g}] (ζ only scales the labels: every risk scales "
               "by E[ζ²], so rescale afterwards)")
    if log_z2 > hi + 1e-12:
        why = "overflows float64" if log_z2 > 308 else "is above the range float32 training can take"
        raise error(f"{shown} {why}; {allowed}")
    if log_z2 < lo - 1e-12:
        why = "underflows float64 (it is not ζ ≡ 0)" if log_z2 < -307 else "is below the range float32 training can take"
        raise error(f"{shown} {why}; {allowed}")


def check_lsa_size(task, what: str = "best_lsa") -> None:
    """Refuse, before anything is allocated, a law whose LSA moments would not fit: ``d1 + d2 ≤
    MAX_DIM`` and (quadrature nodes) × d² ≤ ``MAX_LSA_FLOATS``.  ``law`` is a ``TaskLaw``; its rules
    are built (cheap: they are what the computation uses anyway).  (The parameter is not named
    ``law``: this module cannot import ``takes_law``.)  An unbounded law is left to the
    computation's own refusal."""
    law = task
    check_dimension(law.d1, law.d2, MAX_DIM, what)
    parts = [law.s] if law.s is not None else [law.sv, law.sr]
    if not all(p.is_bounded for p in parts):
        return
    k = 1
    for p in parts:
        k *= len(p.rule().nodes)
    floats = k * law.d**2
    if floats > MAX_LSA_FLOATS:
        raise InputError(f"{what}: the law's quadrature rule has {k} nodes (sv and sr: their product) and "
                         f"d = d1 + d2 = {law.d}, so one moment array holds {k} × d² = {floats:.3g} float64s "
                         f"({floats * 8 / 2**30:.3g} GiB); at most {MAX_LSA_FLOATS:.3g} (2 GiB) are allowed: lower "
                         "d1 + d2, or give s=DIST (one rule) instead of sv and sr")


def cuda_driver_present() -> bool:
    """Whether this machine may have a CUDA GPU at all, asked without importing torch: an NVIDIA
    driver (``/proc/driver/nvidia``, ``/dev/nvidiactl``, or the CUDA driver library on the library
    path).  False means ``torch.cuda.is_available()`` is False too (torch needs that driver); True
    means only that torch must be asked."""
    import os
    import sys
    from ctypes.util import find_library

    if sys.platform == "darwin":
        return False  # no CUDA build of torch for macOS
    if os.path.exists("/proc/driver/nvidia/version") or os.path.exists("/dev/nvidiactl"):
        return True
    return find_library("nvcuda" if sys.platform == "win32" else "cuda") is not None


def check_device(device) -> str:
    """``"cpu"`` or ``"cuda"`` (the latter only where torch sees a CUDA GPU), else a one-line
    ``InputError`` that says how to choose the CPU.  torch is imported only for ``"cuda"``."""
    if device not in ("cpu", "cuda"):
        raise InputError(f"device must be 'cpu' or 'cuda', got {abbreviate(repr(device))}")
    if device == "cuda":
        import torch

        if not torch.cuda.is_available():
            raise InputError("device='cuda' needs a CUDA GPU that torch can use, and there is none here "
                             "(torch.cuda.is_available() is False); pass device='cpu'")
    return device


def check_seed(seed, name: str = "seed", error: type[ValueError] = InputError) -> int:
    """``seed`` as an int in ``[0, MAX_SEED]`` (numpy refuses negative seeds, torch refuses seeds
    beyond 64 bits, and both only with a traceback)."""
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral):
        raise error(f"{name} must be an integer from 0 to {MAX_SEED}, got {seed!r}")
    if not 0 <= seed <= MAX_SEED:
        raise error(f"{name} must be an integer from 0 to {MAX_SEED} (2^32 − 1), got {seed}")
    return int(seed)


def check_batch_memory(prompts: int, d: int, fix: str, what: str = "one batch", float_bytes: int = 4,
                       copies: int = 1) -> None:
    """Prompt moments take ``prompts × (d+1)²`` floats (``copies`` times, e.g. once per layer kept
    for the backward pass); refuse sizes beyond 1 GiB (``MAX_BATCH_FLOATS`` float32s) before
    anything is allocated, with an ``InputError`` that says to lower ``fix``.  A lower bound on what
    the run needs, so it never refuses a run that fits."""
    floats = prompts * (d + 1) ** 2 * copies * float_bytes // 4
    if floats > MAX_BATCH_FLOATS:
        gib = floats * 4 / 2**30
        times = f" × {copies}" if copies > 1 else ""
        raise InputError(
            f"{what} of {prompts} prompts at d = d1 + d2 = {d} holds {prompts} × (d+1)²{times} numbers "
            f"({gib:.3g} GiB); at most 1 GiB is allowed: lower {fix}")
