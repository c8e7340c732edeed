"""Progress bars draw only where a live bar can be drawn, and are no-ops with the same methods
elsewhere (a log, CI, a pipe, a Jupyter kernel)."""
from __future__ import annotations

import pytest

from mmicl.numerics.progress import progress_bar


def test_a_bar_on_a_stream_that_is_not_a_terminal_is_a_silent_no_op(capsys):
    with progress_bar() as bar:          # pytest captures stderr: not a terminal
        task = bar.add_task("work", total=3)
        for _ in range(3):
            bar.advance(task)
    assert bar.disable
    assert capsys.readouterr().err == ""


def test_a_disabled_bar_stays_disabled_and_an_enabled_one_draws_on_a_terminal(monkeypatch):
    assert progress_bar(enabled=False).disable
    from rich.console import Console

    monkeypatch.setattr(Console, "is_terminal", property(lambda self: True))
    assert not progress_bar().disable
    monkeypatch.setattr("rich.console._is_jupyter", lambda: True)
    assert progress_bar().disable        # in a Jupyter kernel rich would need ipywidgets


@pytest.mark.parametrize("module", ["mmicl.proofs.claims.lca", "mmicl.numerics.training",
                                    "mmicl.numerics.testbed.train", "mmicl.numerics.runs.runner"])
def test_every_long_loop_draws_its_bar_through_progress_bar(module):
    import importlib
    import inspect

    source = inspect.getsource(importlib.import_module(module))
    assert "progress_bar(" in source and "Progress(" not in source.replace("progress_bar(", "")
