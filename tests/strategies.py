"""Hypothesis strategies for task laws, composed from small named pieces.

Every property test draws its laws from here.  From the smallest piece up:

* numbers: ``squared_norms`` (0, or a squared norm in [0.01, 5]), ``positive_norms``,
  ``grid_norms`` (multiples of 1/4: atoms that stay well apart), ``shapes`` (Beta exponents),
  ``raw_weights`` (unnormalised probabilities), ``zeta_constants``;
* ``intervals()``: a support ``(a, b)`` with ``a`` a squared norm and ``b − a`` in [0.05, 3];
* laws of one squared norm: ``atoms()`` (with ``atoms_at_zero`` and ``positive_atoms``),
  ``uniform_laws()``, ``beta_laws(asymmetric=…)`` (Beta pieces), ``continuous_laws``,
  ``discrete_laws(unequal=…)``, ``mixtures(parts)``, ``zero_atom_mixtures()`` (an atom at 0
  beside a continuous part); ``scalar_laws`` is any of them, ``separated_scalar_laws`` those
  without mixtures and with atoms well apart, ``asymmetric_scalar_laws`` the ones with no
  symmetry that could hide a swapped parameter;
* ``zeta_laws`` and ``dims``;
* task laws: ``task_laws(scalar)`` (the law of s = ‖m‖²), ``per_modality_task_laws(sv, sr, …)``
  (the laws of ‖v‖² and ‖r‖²), ``any_task_laws``;
* LAW text: ``written_laws()`` draws ``(text, law)``: LAW text written here, independently of
  ``TaskLaw.spec()`` (several number formats, spaces, items in any order, defaults left out),
  with the law that the text describes, built from the constructors.
"""
from __future__ import annotations

from hypothesis import strategies as st

from mmicl.numerics.scalar_laws import Beta, Discrete, Exponential, Mixture, Point, TwoPoint

from mmicl.numerics.task_law import TaskLaw, ZetaLaw

# --------------------------------------------------------------------------- numbers

squared_norms = st.one_of(st.just(0.0), st.floats(min_value=0.01, max_value=5.0))
"""0 (a prompt with m = 0) or a squared norm in [0.01, 5].  Atoms at 1e-177 make the loss's
curvature at α_T astronomically small (the flow then needs ~1e177 time units), and a norm like
1e-148 adds ~1e-150 to the LSA gap, below anything float64 can tell from 0: numerical edges, not
properties of the theory, so the strategies keep away from them."""
positive_norms = st.floats(min_value=0.05, max_value=5.0)
grid_norms = st.integers(0, 20).map(lambda k: k / 4)
"""0, 0.25, …, 5: atoms on a grid are at least 1/4 apart, so a law that is not a point law has
an LSA gap well above rounding."""
shapes = st.floats(min_value=0.3, max_value=4.0)
"""Beta exponents; below 1 the density is singular at that end."""
raw_weights = st.floats(min_value=0.05, max_value=1.0)
widths = st.floats(min_value=0.05, max_value=3.0)
zeta_constants = st.one_of(st.floats(min_value=0.2, max_value=3.0), st.floats(min_value=-3.0, max_value=-0.2))
dims = st.integers(min_value=1, max_value=4)


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
positive_atoms = atoms(positive_norms)

# --------------------------------------------------------------------------- continuous pieces


@st.composite
def uniform_laws(draw, support=None):
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


scalar_laws = st.one_of(continuous_laws, discrete_laws(), mixtures())
"""Any bounded law of one squared norm (a Beta piece, a discrete law, or a mixture of pieces and
atoms)."""

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
    """Some prompts have m ≠ 0 (a scalar law or a task law)."""
    sig = law.signal_bounds() if isinstance(law, TaskLaw) else law.signal_support()
    return sig is not None


def spread(law) -> float:
    """``s_hi − s_lo`` over the prompts with m ≠ 0 (0 when there are none)."""
    sig = law.signal_bounds() if isinstance(law, TaskLaw) else law.signal_support()
    return 0.0 if sig is None else sig[1] - sig[0]


# --------------------------------------------------------------------------- ζ and task laws

zeta_laws = st.one_of(st.just(ZetaLaw("normal")), st.just(ZetaLaw("rademacher")),
                      zeta_constants.map(lambda c: ZetaLaw("const", c)))


@st.composite
def task_laws(draw, scalar=scalar_laws, require_signal: bool = True):
    """A bounded task law: the law of ‖m‖² from ``scalar``, a random ζ law and random d1, d2;
    ``require_signal``: with some signal (s_hi > 0.05)."""
    if require_signal:
        scalar = scalar.filter(lambda law: law.support()[1] > 0.05 and has_signal(law))
    return TaskLaw(s=draw(scalar), zeta=draw(zeta_laws), d1=draw(dims), d2=draw(dims))


@st.composite
def per_modality_task_laws(draw, sv=scalar_laws, sr=scalar_laws, anisotropic: bool = False):
    """Independent laws of ‖v‖² and ‖r‖²; ``anisotropic``: the directions of v may be stretched
    (only when d1 > 1).  May have no signal (sv = sr = point(0)): see ``has_signal``."""
    d1, d2 = draw(dims), draw(dims)
    stretch = None
    if anisotropic and d1 > 1:
        stretch = draw(st.none() | st.tuples(*[st.floats(0.3, 3.0)] * d1))
    return TaskLaw(d1=d1, d2=d2, sv=draw(sv), sr=draw(sr), zeta=draw(zeta_laws), anisotropy_v=stretch)


non_degenerate_task_laws = task_laws(scalar_laws.filter(lambda law: spread(law) > 0.05))
"""Laws whose s varies (by more than 0.05) over the prompts with m ≠ 0."""

any_task_laws = st.one_of(task_laws(), per_modality_task_laws().filter(has_signal))
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
