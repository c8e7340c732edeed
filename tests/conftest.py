import os
import sys
from pathlib import Path

import pytest
from hypothesis import settings

sys.path.insert(0, str(Path(__file__).parent / "support"))  # the helpers the tests share

# Hypothesis: no deadline (the first call of a compiled function may build it), few examples by
# default; `HYPOTHESIS_PROFILE=thorough` for more.
settings.register_profile("default", deadline=None, max_examples=25)
settings.register_profile("thorough", deadline=None, max_examples=300)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))


DOCS = Path(__file__).parent / "docs"


def pytest_collection_modifyitems(config, items):
    """Every test under tests/docs/ carries the ``docs`` marker (``-m docs``, ``-m "not docs"``)."""
    for item in items:
        if DOCS in Path(str(item.fspath)).parents:
            item.add_marker(pytest.mark.docs)


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
    from mmicl.proofs.registry import REGISTRY
    from mmicl.proofs.verify import registered

    registered()
    before, loaded = dict(REGISTRY), dict(plugins._loaded)
    yield
    REGISTRY.clear()
    REGISTRY.update(before)
    plugins._loaded.clear()
    plugins._loaded.update(loaded)


DEVICES = ["cpu", pytest.param("cuda", marks=pytest.mark.cuda)]
"""The torch devices the end-to-end testbed tests run on: the CPU, and a CUDA device (marked
``cuda``; skipped where there is none)."""


@pytest.fixture(params=DEVICES)
def device(request):
    """The torch device of a test, once per entry of ``DEVICES``: "cpu", and "cuda", skipped
    ("needs a CUDA device") where torch sees none.  torch is imported only here, when a cuda case
    is set up, so that test runs that need no torch do not load it."""
    if request.param == "cuda":
        import torch

        if not torch.cuda.is_available():
            pytest.skip("needs a CUDA device")
    return request.param
