import os
import sys
from pathlib import Path

import pytest
from hypothesis import settings

sys.path.insert(0, str(Path(__file__).parent))

# Hypothesis: no deadline (the first call of a compiled function may build it), few examples by
# default; `HYPOTHESIS_PROFILE=thorough` for more.
settings.register_profile("default", deadline=None, max_examples=25)
settings.register_profile("thorough", deadline=None, max_examples=300)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))


@pytest.fixture(autouse=True, scope="session")
def _cache_dir(tmp_path_factory):
    """Compiled theory functions go to a temporary cache, so tests also exercise the build."""
    os.environ.setdefault("MMICL_CACHE", str(tmp_path_factory.mktemp("mmicl-cache")))
    yield
