"""Output on any terminal: where stdout or stderr cannot encode mmicl's text (an ASCII terminal,
``PYTHONIOENCODING=ascii``, a C locale without UTF-8), each character it cannot encode is written
as readable ASCII instead of ending the command in a ``UnicodeEncodeError``.

``ascii_fallback()`` sets that up for the command line; it changes nothing where the streams
encode Unicode.  The replacements: Greek letters by their names (α → ``alpha``), arrows and
relations by their ASCII forms (→ ``->``, ≤ ``<=``), box-drawing characters by ``+``, ``-`` and
``|``, and anything else by its compatibility decomposition (``²`` → ``2``) or, failing that,
``?``.
"""
from __future__ import annotations

import codecs
import sys
import unicodedata

__all__ = ["ASCII_ERRORS", "ascii_fallback", "to_ascii"]

ASCII_ERRORS = "mmicl-ascii"
"""The name of the codec error handler that writes ``to_ascii`` of what it cannot encode."""

_NAMED = {
    "α": "alpha", "β": "beta", "γ": "gamma", "δ": "delta", "ε": "eps", "ζ": "zeta", "η": "eta", "θ": "theta",
    "λ": "lambda", "μ": "mu", "ν": "nu", "ξ": "xi", "π": "pi", "ρ": "rho", "σ": "sigma", "τ": "tau", "φ": "phi",
    "χ": "chi", "ψ": "psi", "ω": "omega", "Γ": "Gamma", "Δ": "Delta", "Λ": "Lambda", "Σ": "Sigma", "Φ": "Phi",
    "Ω": "Omega", "→": "->", "←": "<-", "↦": "|->", "⇒": "=>", "≤": "<=", "≥": ">=", "≠": "!=", "≈": "~",
    "−": "-", "–": "-", "—": "--", "×": "x", "·": "*", "…": "...", "∞": "inf", "√": "sqrt", "∈": " in ",
    "∉": " not in ", "±": "+/-", "∑": "sum", "∏": "prod", "∂": "d", "∇": "grad", "‖": "||", "′": "'",
    "“": '"', "”": '"', "‘": "'", "’": "'", "•": "*", "✓": "ok", "✗": "x", "⁻": "-", "⊥": " indep ",
}


def to_ascii(text: str) -> str:
    """``text`` in ASCII, each other character replaced as the module docstring says."""
    out = []
    for ch in text:
        if ord(ch) < 128:
            out.append(ch)
        elif ch in _NAMED:
            out.append(_NAMED[ch])
        elif "BOX DRAWINGS" in unicodedata.name(ch, ""):
            name = unicodedata.name(ch)
            corner = any(w in name for w in ("DOWN", "UP", "LEFT", "RIGHT"))
            across, down = "HORIZONTAL" in name, "VERTICAL" in name
            out.append("-" if across and not down and not corner else "|" if down and not across and not corner
                       else "+")
        else:
            plain = unicodedata.normalize("NFKD", ch).encode("ascii", "ignore").decode()
            out.append(plain or "?")
    return "".join(out)


def _handler(error: UnicodeError):
    if not isinstance(error, UnicodeEncodeError):
        raise error
    return to_ascii(error.object[error.start:error.end]), error.end


codecs.register_error(ASCII_ERRORS, _handler)


def ascii_fallback(streams=None) -> None:
    """Make each stream (default: stdout and stderr) write ``to_ascii`` of what its encoding cannot
    hold; a stream that encodes Unicode, or cannot be reconfigured, is left as it is."""
    for stream in (sys.stdout, sys.stderr) if streams is None else streams:
        encoding = getattr(stream, "encoding", None) or "ascii"
        try:
            "α→│".encode(encoding)
            continue  # it encodes Unicode
        except (UnicodeEncodeError, LookupError):
            pass
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            try:
                reconfigure(errors=ASCII_ERRORS)
            except (ValueError, OSError):
                pass
