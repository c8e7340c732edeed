import sys
from pathlib import Path

from hypothesis import settings

# the package from this checkout, where it is not installed (PYTHONPATH may already name it)
SRC = Path(__file__).resolve().parents[1] / "src"
if str(SRC) not in sys.path:
    sys.path.insert(0, str(SRC))

# no deadline: the first call derives the Marchenko–Pastur function with SymPy
settings.register_profile("llzmp", deadline=None, max_examples=10)
settings.load_profile("llzmp")
