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


@pytest.fixture
def clean_registry():
    """Claims a test registers (its own, a plugin's) are taken out of the registry afterwards; the
    built-in claims are loaded first, since their modules register them only on first import."""
    from mmicl.proofs import plugins
    from mmicl.proofs.registry import REGISTRY, registered

    registered()
    before, loaded = dict(REGISTRY), dict(plugins._loaded)
    yield
    REGISTRY.clear()
    REGISTRY.update(before)
    plugins._loaded.clear()
    plugins._loaded.update(loaded)
