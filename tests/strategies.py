"""Hypothesis strategies for task laws, composed from small named pieces."""
from __future__ import annotations

from hypothesis import strategies as st

from mmicl.numerics.laws import Beta, Discrete, Mixture, Point, TaskLaw, ZetaLaw

squared_norms = st.one_of(st.just(0.0), st.floats(min_value=0.01, max_value=5.0))
"""0 (a prompt with m = 0) or a squared norm in [0.01, 5].  Atoms at 1e-177 make the loss's
curvature at α_T astronomically small (the flow then needs ~1e177 time units): a numerical
edge, not a property of the theory, so the strategies keep away from it."""
positive_shapes = st.floats(min_value=0.3, max_value=4.0)


@st.composite
def intervals(draw):
    """A Beta law (uniform when p = q = 1) on a non-empty interval of [0, 5]."""
    a = draw(squared_norms)
    width = draw(st.floats(min_value=0.05, max_value=3.0))
    uniform = draw(st.booleans())
    p, q = (1.0, 1.0) if uniform else (draw(positive_shapes), draw(positive_shapes))
    return Beta(p, q, a, a + width)


point_masses = squared_norms.map(Point)


@st.composite
def discrete_laws(draw):
    values = draw(st.lists(squared_norms, min_size=2, max_size=4, unique=True))
    weights = draw(st.lists(st.floats(min_value=0.05, max_value=1.0), min_size=len(values), max_size=len(values)))
    total = sum(weights)
    return Discrete(tuple(values), tuple(w / total for w in weights))


@st.composite
def mixtures(draw):
    parts = draw(st.lists(st.one_of(intervals(), point_masses), min_size=2, max_size=3))
    weights = draw(st.lists(st.floats(min_value=0.05, max_value=1.0), min_size=len(parts), max_size=len(parts)))
    total = sum(weights)
    return Mixture(tuple(parts), tuple(w / total for w in weights))


scalar_laws = st.one_of(intervals(), discrete_laws(), mixtures())
zeta_laws = st.one_of(st.just(ZetaLaw("normal")), st.just(ZetaLaw("rademacher")),
                      st.floats(min_value=0.2, max_value=3.0).map(lambda c: ZetaLaw("const", c)))
dims = st.integers(min_value=1, max_value=4)


@st.composite
def task_laws(draw, scalar=scalar_laws):
    """A bounded task law with some signal (s_hi > 0): law of ‖m‖², random ζ law and d1, d2."""
    s = draw(scalar.filter(lambda law: law.support()[1] > 0.05 and law.signal_support() is not None))
    return TaskLaw(s=s, zeta=draw(zeta_laws), d1=draw(dims), d2=draw(dims))


def _spread(law) -> float:
    sig = law.signal_support()
    return 0.0 if sig is None else sig[1] - sig[0]


non_degenerate_task_laws = task_laws(scalar_laws.filter(lambda law: _spread(law) > 0.05))
"""Laws whose s varies (by more than 0.05) over the prompts with m ≠ 0."""
