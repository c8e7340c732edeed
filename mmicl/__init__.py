"""mmicl: a symbolic–numeric verifier for multi-modal in-context learning."""
from ._version import __version__

__all__ = ["__version__"]
