"""mmicl's symbolic layer: SymPy only (never numpy, torch or matplotlib).

The model and its Bayes predictor (``model``), the LCA recurrence at symbolic depth (``lca``), the
LSA and its excess in rotation invariants (``lsa``), the untied LCA (``untied``), the LCA variants
from one description (``variants``), the T → ∞ endpoint analysis (``asymptotics``), the compiler to
numpy, mpmath and plain operators with its on-disk cache (``compile``), running rounding bounds of
compiled expressions (``rounding``), and the one exception root of the package (``errors``).
Nothing here imports another layer of mmicl."""

__all__: list[str] = []
