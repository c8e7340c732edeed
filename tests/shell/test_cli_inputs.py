"""Every command-line input is checked at the boundary.

Each bad input in ``BAD`` must give exit status 2 and one ``Error:`` line that names the option and
says what is allowed, never a traceback, and never start the work it was meant to configure (the
heavy entry points are replaced by tripwires, so a check that comes too late fails loudly).
"""
from __future__ import annotations

import pytest
from click.testing import CliRunner

from mmicl.cli import main

L = "s=uniform(0.5,4)"
TR = ["train", "--model", "lca1", "--law", L, "--steps", "5", "--batch", "8", "--samples", "100", "--n", "20"]
TB = ["testbed", "train", "--quick", "--steps", "2", "--seeds", "1"]
SW = ["testbed", "sweep", "--quick", "--steps", "2", "--seeds", "1"]
V = ["verify", "--quick", "--claim", "thm6.2"]
S1 = ["testbed", "stage1", "--quick", "--steps", "2", "--seeds", "1", "--out", "{tmp}/s1.pt"]
S2 = ["testbed", "stage2", "--quick", "--steps", "2", "--from", "{tmp}/no_checkpoint.pt"]
FU = ["testbed", "fusion", "--quick", "--steps", "2", "--seeds", "1"]
EN = ["testbed", "encoder", "--quick", "--seeds", "1"]
UNDER_FILE = "{file}/sub"  # a path under a regular file: nothing can be created there

# (argv, the option the message must name, a fragment of what it must say)
BAD: list[tuple[list[str], str, str]] = [
    # verify
    (["verify", "--claim", "nope"], "--claim", "no claim matches ['nope']"),
    (["verify", "--claim", ""], "--claim", "no claim matches"),
    ([*V, "--seed", "-1"], "--seed", "from 0 to 4294967295"),
    ([*V, "--seed", str(2**70)], "--seed", "from 0 to 4294967295"),
    ([*V, "--seed", str(2**32)], "--seed", "got 4294967296"),
    ([*V, "--seed", "1.5"], "--seed", "integer"),
    ([*V, "--device", "tpu"], "--device", "'tpu' is not one of"),
    ([*V, "--out", UNDER_FILE], "--out", "is a file, so nothing can be created under it"),
    ([*V, "--out", "{file}"], "--out", "it is a file, not a folder"),
    ([*V, "--out", ""], "--out", "empty string"),
    ([*V, "--out", "{tmp}/x\0y"], "--out", "NUL byte"),
    ([*V, "--law", "s=uniform(0,1e308)"], "--law", "squared norms must stay ≤ 1e+06"),
    ([*V, "--law", "s=point(1e400)"], "--law", "must be finite, got inf"),
    ([*V, "--law", "s=uniform(nan,1)"], "--law", "must be finite, got nan"),
    ([*V, "--law", "s=uniform(2,1)"], "--law", "empty"),
    ([*V, "--law", "s=uniform(0.5,"], "--law", "unbalanced"),
    ([*V, "--law", "s=uniform(-1,2)"], "--law", "negative"),
    ([*V, "--law", ""], "--law", "empty string"),
    ([*V, "--law", "s=uniform(1,2); d1=0"], "--law", "d1 must be a positive integer"),
    ([*V, "--law", "s=uniform(1,2); zeta=const(0)"], "--law", "ζ ≡ 0"),
    ([*V, "--law", "s=exponential(1e-300)"], "--law", "mean must be ≤ 1e+06"),
    ([*V, "--law", "s=uniform(0.5,4); d1=5000"], "--law", "d1 + d2 = 5001"),
    # alpha
    (["alpha", "--law", L, "--T", "0"], "--T", "integer from 1 to 1000000"),
    (["alpha", "--law", L, "--T", "-1"], "--T", "got -1"),
    (["alpha", "--law", L, "--T", "2.5"], "--T", "got '2.5'"),
    (["alpha", "--law", L, "--T", "abc"], "--T", "got 'abc'"),
    (["alpha", "--law", L, "--T", str(10**30)], "--T", "integer from 1 to 1000000"),
    (["alpha", "--law", L, "--T", "100000000"], "--T", "got 100000000"),
    (["alpha", "--law", L, "--T", "1", "0"], "--T", "got 0"),
    (["alpha", "--law", L, "--T", "3", "--alpha0", "nan"], "--alpha0", "[-10, 10]"),
    (["alpha", "--law", L, "--T", "3", "--alpha0", "inf"], "--alpha0", "got 'inf'"),
    (["alpha", "--law", L, "--T", "3", "--alpha0", "-inf"], "--alpha0", "got '-inf'"),
    (["alpha", "--law", L, "--T", "3", "--alpha0", "1e308"], "--alpha0", "got '1e308'"),
    (["alpha", "--law", L, "--T", "3", "--alpha0", "11"], "--alpha0", "[-10, 10]"),
    (["alpha", "--law", L, "--T", "3", "--d1", "0"], "--d1", "integer from 1 to 1024"),
    (["alpha", "--law", L, "--T", "3", "--d2", "-1"], "--d2", "got -1"),
    (["alpha", "--law", L, "--T", "3", "--d1", "10000000000"], "--d1", "integer from 1 to 1024"),
    (["alpha", "--law", L, "--T", "3", "--zeta", "const(nan)"], "--zeta", "must be finite"),
    (["alpha", "--law", L, "--T", "3", "--zeta", "const(inf)"], "--zeta", "must be finite"),
    (["alpha", "--law", L, "--T", "3", "--zeta", "bogus"], "--zeta", "normal, rademacher or const(c)"),
    (["alpha", "--law", L, "--T", "3", "--zeta", "const(0)"], "--zeta", "ζ ≡ 0"),
    (["alpha", "--law", L, "--T", "3", "--zeta", "const(1e200)"], "--zeta", "overflows float64"),
    (["alpha", "--law", "s=uniform(0.5,4); zeta=const(1e200)", "--T", "3"], "--law", "overflows float64"),
    (["alpha", "--law", L, "--T", "3", "--zeta", "const(1e16)"], "--zeta", "E[ζ²] = c² = 10^32"),
    (["alpha", "--law", "s=uniform(0,1e308)", "--T", "3"], "--law", "s reaches 1e+308"),
    (["alpha", "--law", "s=uniform(1e300,1e308)", "--T", "3"], "--law", "squared norms must stay"),
    (["alpha", "--law", "s=point(1e308)", "--T", "3"], "--law", "squared norms must stay"),
    (["alpha", "--law", "sv=uniform(0,1e308); sr=point(1)", "--T", "3"], "--law", "sv reaches"),
    (["alpha", "--law", "s=mix(1*uniform(0,1e308))", "--T", "3"], "--law", "squared norms must stay"),
    (["alpha", "--law", "s=discrete(1e308:1)", "--T", "3"], "--law", "squared norms must stay"),
    (["alpha", "--law", "s=twopoint(1e308,1,0.5)", "--T", "3"], "--law", "squared norms must stay"),
    (["alpha", "--law", "s=beta(1,1,0,1e308)", "--T", "3"], "--law", "squared norms must stay"),
    (["alpha", "--law", "s=exponential(1)", "--T", "3"], "--law", "must be bounded"),
    (["alpha", "--law", "s=point(0)", "--T", "3"], "--law", "s ≡ 0"),
    (["alpha", "--law", "   ", "--T", "3"], "--law", "empty string"),
    # flow2
    (["flow2", "--law", L, "--T", "0"], "--T", "integer from 1 to 100"),
    (["flow2", "--law", L, "--T", "101"], "--T", "integer from 1 to 100"),
    (["flow2", "--law", L, "--T", str(10**30)], "--T", "integer from 1 to 100"),
    (["flow2", "--law", L, "--T", "3", "--alpha0", "nan"], "--alpha0", "[-10, 10]"),
    (["flow2", "--law", L, "--T", "3", "--beta0", "-inf"], "--beta0", "[-10, 10]"),
    (["flow2", "--law", L, "--T", "3", "--alpha0", "1e308"], "--alpha0", "[-10, 10]"),
    (["flow2", "--law", L, "--T", "3", "--beta0", "10.5"], "--beta0", "[-10, 10]"),
    (["flow2", "--law", "s=uniform(0,1e308)", "--T", "3"], "--law", "squared norms must stay"),
    (["flow2", "--law", "s=point(1e300)", "--T", "3"], "--law", "squared norms must stay"),
    (["flow2", "--law", "s=exponential(1)", "--T", "3"], "--law", "must be bounded"),
    # lsa
    (["lsa", "--law", L, "--n", "0"], "--n", "integer from 1 to 1000000000000"),
    (["lsa", "--law", L, "--n", "-1"], "--n", "omit --n for the large-context limit"),
    (["lsa", "--law", L, "--n", "1e400"], "--n", "got '1e400'"),
    (["lsa", "--law", L, "--n", str(10**30)], "--n", "integer from 1 to 1000000000000"),
    (["lsa", "--law", L, "--profile", "1"], "--profile", "integer from 2 to 1000000"),
    (["lsa", "--law", L, "--profile", str(10**12)], "--profile", "integer from 2 to 1000000"),
    (["lsa", "--law", L, "--mc", "-1"], "--mc", "integer from 0 to 10000000"),
    (["lsa", "--law", L, "--mc", "10"], "--mc", "only drawn with --compare"),
    (["lsa", "--law", L, "--compare", "--mc", str(10**12)], "--mc", "integer from 0 to 10000000"),
    (["lsa", "--law", L, "--compare", "--mc", "4", "--seed", str(2**70)], "--seed", "from 0 to 4294967295"),
    (["lsa", "--law", L, "--seed", "-1"], "--seed", "from 0 to 4294967295"),
    (["lsa", "--law", "s=uniform(0,1e308)"], "--law", "squared norms must stay"),
    (["lsa", "--law", "s=point(1e300)"], "--law", "squared norms must stay"),
    (["lsa", "--law", "s=exponential(1)"], "--law", "must be bounded"),
    (["lsa", "--law", "sv=uniform(0.5,1); sr=uniform(1,2)", "--profile", "5"], "--profile", "needs an s-law"),
    (["lsa", "--law", L, "--d1", "100000"], "--d1", "integer from 1 to 1024"),
    # train
    ([*TR, "--T", "0"], "--T", "integer from 1 to 1000"),
    ([*TR, "--T", "-1"], "--T", "got -1"),
    ([*TR, "--T", "1000000000"], "--T", "integer from 1 to 1000"),
    ([*TR, "--n", "-1"], "--n", "0: the large-context limit"),
    ([*TR, "--n", str(10**30)], "--n", "integer from 0 to 1000000000000"),
    ([*TR, "--steps", "0"], "--steps", "integer from 1 to 10000000"),
    ([*TR, "--steps", "-1"], "--steps", "got -1"),
    ([*TR, "--steps", str(10**12)], "--steps", "integer from 1 to 10000000"),
    ([*TR, "--lr", "0"], "--lr", "finite number > 0"),
    ([*TR, "--lr", "-1"], "--lr", "finite number > 0"),
    ([*TR, "--lr", "nan"], "--lr", "got 'nan'"),
    ([*TR, "--lr", "inf"], "--lr", "got 'inf'"),
    ([*TR, "--lr", "abc"], "--lr", "got 'abc'"),
    ([*TR, "--batch", "0"], "--batch", "integer ≥ 1"),
    ([*TR, "--batch", "-1"], "--batch", "integer ≥ 1"),
    ([*TR, "--batch", str(10**12)], "--batch", "at most 1 GiB"),
    ([*TR, "--samples", "0"], "--samples", "at least 2 for a standard error"),
    ([*TR, "--samples", "1"], "--samples", "got 1"),
    ([*TR, "--samples", str(10**12)], "--samples", "integer from 2 to 100000000"),
    ([*TR, "--device", "tpu"], "--device", "'tpu' is not one of"),
    ([*TR, "--seed", "-1"], "--seed", "from 0 to 4294967295"),
    ([*TR, "--seed", str(2**64)], "--seed", "from 0 to 4294967295"),
    ([*TR, "--checkpoint", UNDER_FILE], "--checkpoint", "nothing can be created under it"),
    ([*TR, "--checkpoint", "{tmp}"], "--checkpoint", "it is a folder; give a file name"),
    ([*TR, "--out", UNDER_FILE], "--out", "nothing can be created under it"),
    ([*TR, "--out", "{tmp}"], "--out", "it is a folder"),
    (["train", "--model", "nope", "--law", L], "--model", "'nope' is not one of"),
    (["train", "--model", "lca1", "--law", ""], "--law", "empty string"),
    (["train", "--model", "lca1", "--law", "s=point(1e300)"], "--law", "squared norms must stay"),
    (["train", "--model", "lca1", "--law", "s=exponential(1e-300)"], "--law", "mean must be ≤"),
    (["train", "--model", "lca1", "--law", L, "--d1", "100"], "--d1/--d2", "stationary point"),
    (["train", "--model", "lca", "--law", L, "--d1", "500"], "--batch", "at most 1 GiB"),
    (["train", "--model", "lsa", "--law", L, "--batch", "100000000"], "--batch", "at most 1 GiB"),
    # train-figures
    (["train-figures", "--out", UNDER_FILE, "--tiny"], "--out", "nothing can be created under it"),
    (["train-figures", "--out", "{file}", "--tiny"], "--out", "it is a file, not a folder"),
    (["train-figures", "--out", "", "--tiny"], "--out", "empty string"),
    (["train-figures", "--out", "{tmp}/tf", "--tiny", "--seed", "-1"], "--seed", "from 0 to 4294967295"),
    (["train-figures", "--out", "{tmp}/tf", "--tiny", "--seed", str(2**70)], "--seed", "from 0 to 4294967295"),
    (["train-figures", "--out", "{tmp}/tf", "--quick", "--tiny"], "--quick and --tiny", "cannot be given together"),
    # testbed train
    *[([*TB, opt, v], opt, "integer from 1 to") for opt in ("--K", "--N", "--D", "--L", "--B", "--layers", "--heads",
                                                             "--width", "--batch", "--eval-every") for v in ("0", "-1")],
    *[([*TB, opt, str(10**12)], opt, "integer from 1 to") for opt in ("--K", "--D", "--width", "--batch", "--layers")],
    ([*TB, "--steps", "0"], "--steps", "integer from 1 to 10000000"),
    ([*TB, "--steps", str(10**12)], "--steps", "integer from 1 to 10000000"),
    ([*TB, "--pB", "2"], "--pB", "[0, 1]"),
    ([*TB, "--pB", "-0.1"], "--pB", "[0, 1]"),
    ([*TB, "--pB", "nan"], "--pB", "got 'nan'"),
    ([*TB, "--eps", "-1"], "--eps", "[0, 1000]"),
    ([*TB, "--eps", "inf"], "--eps", "got 'inf'"),
    ([*TB, "--eps", "1e300"], "--eps", "[0, 1000]"),
    ([*TB, "--zipf", "nan"], "--zipf", "[0, 8]"),
    ([*TB, "--zipf", "20"], "--zipf", "IWL evaluation set cannot be drawn"),
    ([*TB, "--zipf", "1e300"], "--zipf", "[0, 8]"),
    ([*TB, "--lr", "0"], "--lr", "finite number > 0"),
    ([*TB, "--lr", "nan"], "--lr", "finite number > 0"),
    ([*TB, "--seeds", "0"], "--seeds", "integer from 1 to 256"),
    ([*TB, "--seeds", "-1"], "--seeds", "integer from 1 to 256"),
    ([*TB, "--seeds", "1000000"], "--seeds", "integer from 1 to 256"),
    ([*TB, "--seed", "-1"], "--seed", "from 0 to 4294967295"),
    ([*TB, "--seed", str(2**70)], "--seed", "from 0 to 4294967295"),
    ([*TB, "--threads", "0"], "--threads", "CPU count"),
    ([*TB, "--threads", "-1"], "--threads", "CPU count"),
    ([*TB, "--threads", "100000"], "--threads", "CPU count"),
    ([*TB, "--device", "tpu"], "--device", "'tpu' is not one of"),
    ([*TB, "--out", UNDER_FILE], "--out", "nothing can be created under it"),
    ([*TB, "--out", "{file}"], "--out", "it is a file, not a folder"),
    ([*TB, "--K", "100"], "--K/--L", "must be a multiple of L=16"),
    ([*TB, "--N", "7"], "--N/--B", "must be a multiple of B=2"),
    ([*TB, "--heads", "3"], "--width/--heads", "divisible by heads=3"),
    ([*TB, "--pos", "rope", "--width", "6", "--heads", "2"], "--width/--heads", "even head width"),
    ([*TB, "--pos", "nope"], "--pos", "is not one of"),
    ([*TB, "--K", "1048576", "--D", "4096"], "--K, --D or --seeds", "class means"),
    ([*TB, "--batch", "65536", "--width", "4096", "--layers", "64"], "--batch", "residual streams"),
    # testbed sweep
    ([*SW, "--knob", "K", "--values", ""], "--values", "give at least one value"),
    ([*SW, "--knob", "K", "--values", "a,b"], "--values", "K must be an integer from 1 to 1048576"),
    ([*SW, "--knob", "K", "--values", "0"], "--values", "got 0"),
    ([*SW, "--knob", "K", "--values", "-32"], "--values", "got -32"),
    ([*SW, "--knob", "K", "--values", "100"], "--values", "must be a multiple of L=16"),
    ([*SW, "--knob", "K", "--values", "64,64"], "--values", "given more than once"),
    ([*SW, "--knob", "eps", "--values", "nan"], "--values", "eps must be a finite number"),
    ([*SW, "--knob", "pB", "--values", "2"], "--values", "pB must be a finite number in [0, 1]"),
    ([*SW, "--knob", "layers", "--values", "0"], "--values", "layers must be an integer from 1 to 64"),
    ([*SW, "--knob", "width", "--values", "-1"], "--values", "width must be an integer"),
    ([*SW, "--knob", "pos", "--values", "bogus"], "--values", "is not one of"),
    ([*SW, "--knob", "pos", "--values", "ape,ape"], "--values", "given more than once"),
    ([*SW, "--knob", "nope", "--values", "1"], "--knob", "'nope' is not one of"),
    ([*SW, "--knob", "K", "--values", "64", "--K", "128"], "--K and --knob K", "cannot be given together"),
    ([*SW, "--knob", "K", "--values", "64", "--seeds", "0"], "--seeds", "integer from 1 to 256"),
    ([*SW, "--knob", "K", "--values", "64", "--out", UNDER_FILE], "--out", "nothing can be created under it"),
    # testbed stage1, stage2, fusion, encoder (the multimodal protocol)
    ([*S1, "--K", "100"], "--K/--L", "must be a multiple of L=16"),
    ([*S1, "--N", "2"], "--N/--B", "the conflict set needs two context pairs"),
    ([*S1, "--seeds", "0"], "--seeds", "integer from 1 to 256"),
    ([*S1, "--K", "1048576", "--D", "4096"], "--K, --D or --seeds", "class means"),
    (["testbed", "stage1", "--quick", "--out", "{tmp}"], "--out", "it is a folder; give a file name"),
    (["testbed", "stage1", "--quick", "--out", UNDER_FILE], "--out", "nothing can be created under it"),
    (S2, "--from", "no stage-1 checkpoint at"),
    (["testbed", "stage2", "--quick", "--from", "{file}"], "--from", "is not a stage-1 checkpoint of mmicl"),
    ([*S2, "--K2", "0"], "--K2", "integer from 1 to 1048576"),
    ([*S2, "--pB", "2"], "--pB", "[0, 1]"),
    ([*S2, "--layout", "sideways"], "--layout", "is not one of"),
    ([*S2, "--encoder-steps", "-1"], "--encoder-steps", "integer from 0 to"),
    ([*S2, "--lr", "0"], "--lr", "finite number > 0"),
    ([*S2, "--out", "{file}"], "--out", "it is a file, not a folder"),
    ([*FU, "--K2", "24"], "--K2", "must be a multiple of L=16"),
    ([*FU, "--eps2", "nan"], "--eps2", "got 'nan'"),
    ([*FU, "--N", "2"], "--N/--B", "the conflict set needs two context pairs"),
    ([*FU, "--K", "100"], "--K/--L", "must be a multiple of L=16"),
    ([*FU, "--K2", "1048576", "--D2", "4096"], "--K, --D, --K2, --D2 or --seeds", "class means"),
    ([*EN, "--steps-list", ""], "--steps-list", "give at least one value of pretraining steps"),
    ([*EN, "--steps-list", "a,3"], "--steps-list", "integer from 0 to"),
    ([*EN, "--steps-list", "5,5"], "--steps-list", "given more than once"),
    ([*EN, "--K2", "24"], "--K2", "must be a multiple of L=16"),
]


class HeavyWorkStarted(AssertionError):
    pass


@pytest.fixture
def tripwires(monkeypatch):
    """Replace every entry point that starts real work: a bad input must be refused before them.

    Every command module is imported first, and a tripwire replaces the entry point under each name
    that binds it in any loaded mmicl module (``from … import train`` binds it where it is used), so
    that a command reaches the tripwire and no module keeps one after the test."""
    import importlib
    import pkgutil
    import sys

    import mmicl.commands
    import mmicl.numerics.mc_figures as figures
    import mmicl.proofs.claims  # noqa: F401  (claims.testbed binds run_arms)
    from mmicl.numerics import flows, lsa_training, training
    from mmicl.numerics.testbed import experiments, multimodal_experiments, multimodal_train
    from mmicl.proofs.claim import Claim

    for info in pkgutil.iter_modules(mmicl.commands.__path__):
        importlib.import_module(f"mmicl.commands.{info.name}")

    def trip(*args, **kwargs):
        raise HeavyWorkStarted("heavy work started before the input was checked")

    for module, name in ((training, "train"), (training, "estimate_risk"), (flows, "gradient_flow_one"),
                         (flows, "gradient_flow_two"), (lsa_training, "comparison"), (experiments, "run_arms"),
                         (figures, "make_figures"), (multimodal_experiments, "run_stage1"),
                         (multimodal_experiments, "run_stage2"), (multimodal_experiments, "run_fusion"),
                         (multimodal_train, "train_encoder")):
        real = getattr(module, name)
        for loaded in [m for n, m in list(sys.modules.items()) if n.startswith("mmicl") and m is not None]:
            for attr, value in list(vars(loaded).items()):
                if value is real:
                    monkeypatch.setattr(loaded, attr, trip)
    monkeypatch.setattr(Claim, "run", trip)


@pytest.fixture
def places(tmp_path):
    file = tmp_path / "a_file"
    file.write_text("not a folder\n")
    return {"file": str(file), "tmp": str(tmp_path)}


def _fill(argv: list[str], places: dict) -> list[str]:
    return [a.format(**places) if "{" in a else a for a in argv]


@pytest.mark.parametrize("argv, option, fragment", BAD, ids=[" ".join(a)[:90] for a, _, _ in BAD])
def test_bad_input_is_a_one_line_usage_error(argv, option, fragment, tripwires, places):
    r = CliRunner().invoke(main, _fill(argv, places))
    out = r.output
    assert "Traceback" not in out
    assert r.exit_code == 2, (r.exit_code, out, r.exception)
    assert not isinstance(r.exception, HeavyWorkStarted)
    error = [line for line in out.splitlines() if line.startswith("Error:")]
    assert len(error) == 1, out
    after = out.split("Error:", 1)[1].strip().splitlines()
    # one line; only a LAW that does not parse adds below it the text with a caret under the place
    # (two lines) and the grammar
    assert len(after) == 1 or after[1].startswith("The LAW grammar") or (
        after[2].strip() == "^" and after[3].startswith("The LAW grammar")), out
    line = error[0]
    assert option in line, f"the message does not name {option}: {line}"
    assert fragment in line, f"{fragment!r} is not in: {line}"


@pytest.mark.parametrize("argv", [TR, [*TB, "--out", "{tmp}/tb"], ["verify", "--claim", "thm6.2", "--quick",
                                                                    "--out", "{tmp}/v"]],
                         ids=["train", "testbed train", "verify"])
def test_the_tripwires_fire_on_good_input(argv, tripwires, places):
    """The control for the table: a good input reaches the heavy work, so the tripwires are live."""
    r = CliRunner().invoke(main, _fill(argv, places))
    assert isinstance(r.exception, HeavyWorkStarted), (r.exit_code, r.output)


def test_the_table_covers_every_command():
    commands = {a[0] if a[0] != "testbed" else " ".join(a[:2]) for a, _, _ in BAD}
    assert commands >= {"verify", "alpha", "flow2", "lsa", "train", "train-figures", "testbed train", "testbed sweep",
                        "testbed stage1", "testbed stage2", "testbed fusion", "testbed encoder"}


def test_devices_absent_here_are_refused(tripwires, places):
    torch = pytest.importorskip("torch")
    if torch.cuda.is_available():
        pytest.skip("a CUDA device is present")
    for argv in (["verify", "--claim", "thm6.2", "--device", "cuda"], [*TR, "--device", "cuda"],
                 [*TB, "--device", "cuda"]):
        r = CliRunner().invoke(main, argv)
        assert r.exit_code == 2 and "Traceback" not in r.output, r.output
        assert "Invalid value for '--device': cuda needs a CUDA GPU" in r.output


def test_good_inputs_at_the_edges_are_accepted(places):
    """The limits are inclusive and do not refuse ordinary values."""
    r = CliRunner().invoke(main, ["alpha", "--law", L, "--T", "1", "--alpha0", "-10", "--json"])
    assert r.exit_code == 0, r.output
    r = CliRunner().invoke(main, ["flow2", "--law", L, "--T", "2", "--alpha0", "0.1", "--beta0", "-0.1", "--json"])
    assert r.exit_code == 0, r.output
    r = CliRunner().invoke(main, ["lsa", "--law", "s=uniform(0.5,1e6); zeta=const(1e4)", "--n", "1", "--json"])
    assert r.exit_code == 0, r.output


def test_the_python_api_refuses_the_same_seeds_and_devices(tmp_path):
    from mmicl.numerics.validate import InputError
    from mmicl.proofs.claim import RunConfig
    from mmicl.proofs.verify import verify

    for bad in ({"seed": -1}, {"seed": 2**70}, {"seed": 1.5}, {"device": "tpu"}, {"out": ""}):
        with pytest.raises(InputError):
            RunConfig(**{"out": tmp_path, **bad})
    with pytest.raises(ValueError):
        verify("thm6.2", seed=-1, out=tmp_path)


def test_an_unexpected_library_error_is_not_turned_into_a_usage_error(monkeypatch):
    """Only input errors become usage errors: a plain ValueError from inside is a bug and stays one."""
    from mmicl.numerics import lca

    def broken(*args, **kwargs):
        raise ValueError("a bug deep inside")

    monkeypatch.setattr(lca, "alpha_star", broken)
    r = CliRunner().invoke(main, ["alpha", "--law", L, "--T", "1"])
    assert r.exit_code == 1 and isinstance(r.exception, ValueError) and "a bug deep inside" in str(r.exception)


def test_no_module_kept_a_tripwire():
    """Runs after the table: a module imported while a tripwire was in place must not have bound it."""
    import sys

    kept = [f"{name}.{attr}" for name, module in list(sys.modules.items()) if name.startswith("mmicl")
            for attr, value in list(vars(module).items())
            if getattr(value, "__qualname__", "") == "tripwires.<locals>.trip"]
    assert not kept, kept


@pytest.mark.train
def test_a_checkpoint_of_another_depth_is_refused_not_resumed(tmp_path):
    """A checkpoint written at T = 5 and asked for at T = 10 would give T = 5's α as trained at 10
    (the other settings, and VariantLCA's depth: tests/numerics/test_training.py)."""
    ckpt = str(tmp_path / "c.pt")
    first = CliRunner().invoke(main, [*TR, "--T", "5", "--checkpoint", ckpt])
    assert first.exit_code == 0, first.output
    r = CliRunner().invoke(main, [*TR, "--T", "10", "--checkpoint", ckpt])
    assert r.exit_code == 2 and "belongs to another run" in r.output and "model T 5 (this run: 10)" in r.output, r.output
