"""tools/mkdocs_hooks.py loaded once per test process, for the site-build and tutorial tests: one module
object, so that the tutorials that one test file executed are reused by the other's site build."""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def hooks():
    """The ``mkdocs_hooks`` module of the repository, loaded on first use and kept in ``sys.modules``."""
    if "mmicl_docs_hooks" not in sys.modules:
        spec = importlib.util.spec_from_file_location("mmicl_docs_hooks", ROOT / "tools" / "mkdocs_hooks.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        sys.modules["mmicl_docs_hooks"] = module
    return sys.modules["mmicl_docs_hooks"]
