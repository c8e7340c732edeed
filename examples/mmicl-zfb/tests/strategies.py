"""Random cases: SPD covariances with eigenvalue spreads 1..100 at d = 1..4, and N in 1..50."""
import numpy as np
from hypothesis import strategies as st

from mmicl_zfb import numerics as nm


@st.composite
def spd_cases(draw, max_d: int = 4):
    d = draw(st.integers(1, max_d))
    spread = draw(st.floats(1.0, 100.0))
    seed = draw(st.integers(0, 2**32 - 1))
    N = draw(st.integers(1, 50))
    return nm.random_spd(d, spread, np.random.default_rng(seed)), N, seed
