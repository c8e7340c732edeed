"""Progress bars of long computations: rich bars on standard error that never get in the way.

``progress_bar`` is one transient rich ``Progress`` on stderr, disabled (a no-op with the same
methods) where it cannot draw a live bar: when stderr is not a terminal (a log file, CI, a pipe)
and inside a Jupyter kernel, where rich would need ipywidgets and otherwise warns and leaves empty
outputs.  Every long loop of mmicl shows its progress through it.
"""
from __future__ import annotations

__all__ = ["progress_bar"]



def progress_bar(*columns, enabled: bool = True):
    """A transient rich ``Progress`` on stderr with these ``columns`` (rich's default columns when
    none are given), disabled when ``enabled`` is False, stderr is not a terminal, or the code runs
    in a Jupyter kernel.  Use it as a context manager or ``start()`` / ``stop()`` it."""
    from rich.console import Console
    from rich.progress import Progress

    console = Console(stderr=True)
    live = enabled and console.is_terminal and not console.is_jupyter
    return Progress(*columns, console=console, transient=True, disable=not live)
