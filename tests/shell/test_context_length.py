"""``--n`` means one thing in every command that has it (``lsa``, ``train``): a context length, or
``inf`` for the large-context limit n → ∞; the old spellings (``train --n 0``, ``lsa`` without
``--n``) still work and ``--help`` says so (``commands.common.ContextLength``)."""
from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from mmicl.cli import main

L = "s=uniform(0.5,4)"
TRAIN = ["train", "--model", "lsa", "--law", L, "--steps", "3", "--batch", "8", "--samples", "16", "--json"]


def _json(*argv: str) -> dict:
    r = CliRunner().invoke(main, list(argv))
    assert r.exit_code == 0, r.output
    return json.loads(r.output)


@pytest.mark.parametrize("spelling", ["inf", "INF", "∞", "infinity", " inf "])
def test_lsa_reads_inf_as_leaving_n_out(spelling):
    assert _json("lsa", "--law", L, "--n", spelling, "--json") == _json("lsa", "--law", L, "--json")
    assert _json("lsa", "--law", L, "--n", spelling, "--json")["n"] is None


def test_lsa_finite_n_is_unchanged():
    out = _json("lsa", "--law", L, "--n", "40", "--json")
    assert out["n"] == 40 and out != _json("lsa", "--law", L, "--json")


@pytest.mark.train
def test_train_reads_inf_as_the_old_zero():
    new, old = _json(*TRAIN, "--n", "inf"), _json(*TRAIN, "--n", "0")
    assert new == old and new["n"] is None and new["n_null_reason"] == "the large-context limit n → ∞"


@pytest.mark.parametrize("command, old", [("lsa", "Leaving --n out (the old spelling) is inf too."),
                                          ("train", "The old spelling --n 0 still means inf.")])
def test_the_help_gives_the_one_spelling_and_the_old_one(command, old):
    r = CliRunner().invoke(main, [command, "--help"], terminal_width=1000)
    text = " ".join(r.output.split())
    assert "--n N|inf" in text and "or inf for the large-context limit n → ∞" in text and old in text


@pytest.mark.parametrize("argv, says", [
    (["lsa", "--law", L, "--n", "0"], "an integer from 1 to 1000000000000 or inf (the large-context limit n → ∞; "
                                      "omit --n for the large-context limit, as before), got 0"),
    (["train", "--model", "lsa", "--law", L, "--n", "-1"],
     "an integer from 0 to 1000000000000 or inf (the large-context limit n → ∞; 0: the large-context limit, the old "
     "spelling), got -1"),
    (["lsa", "--law", L, "--n", "infinite"], "got 'infinite'"),
])
def test_a_bad_n_names_both_spellings(argv, says):
    r = CliRunner().invoke(main, argv)
    assert r.exit_code == 2 and "Invalid value for '--n'" in r.output and says in r.output, r.output
