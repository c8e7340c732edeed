"""The example plugins examples/mmicl-* as a user would meet them (mmicl-zfb: Zhang, Frei & Bartlett,
JMLR 2024; mmicl-mhm: Mahankali, Hashimoto & Ma, arXiv:2307.03576; mmicl-acds: Ahn, Cheng, Daneshmand &
Sra, arXiv:2306.00297; mmicl-llzmp: Lu, Letey, Zavatone-Veth, Maiti & Pehlevan, arXiv:2405.11751):

(a) their own tests pass (in a subprocess, the package on PYTHONPATH);
(b) installed into a throw-away venv (``--system-site-packages``, so it sees this mmicl), its claims
    are listed with the origin of the entry point and ``mmicl verify --quick --claim 'zfb.*'`` gives
    "holds" for each, with the derived minimiser and the flow's end point in the evidence;
(c) it imports only mmicl's public names (``mmicl``, its ``__all__``, and ``mmicl.hypotheses``).
"""
from __future__ import annotations

import ast
import json
import os
import shutil
import stat
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import pytest

import mmicl

pytestmark = pytest.mark.xdist_group("example_plugin")
"""One worker runs every test of this group (``--dist loadgroup``): they share what a fixture built once."""

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "mmicl-zfb"
SRC = EXAMPLE / "src"
ZFB = {"zfb.minimiser", "zfb.flow", "zfb.montecarlo"}
EXAMPLES = sorted(p for p in (ROOT / "examples").glob("mmicl-*") if (p / "pyproject.toml").is_file())
"""Every example plugin: each is tested, installed and scanned for private names the same way."""
MHM = {"mhm.onestep", "mhm.trained"}
ACDS = {"acds.onelayer", "acds.critical", "acds.layers"}
LLZMP = {"llzmp.asymptotics", "llzmp.simulation"}


def _env(**extra) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env.update(extra)
    return env


# ---------------------------------------------------------------- (a)
@pytest.mark.subprocess
@pytest.mark.parametrize("example", [pytest.param(p, marks=pytest.mark.xdist_group(f"example_{p.name}")) for p in EXAMPLES],
                         ids=[p.name for p in EXAMPLES])
def test_example_own_tests_pass(example):
    """Each example's own suite on a worker of its own (the closest ``xdist_group`` mark wins), in one
    process (``-n 0``: workers of its own would each import mmicl and torch again, on cores the main
    suite's workers already use)."""
    env = _env(PYTHONPATH=os.pathsep.join([str(example / "src"), *filter(None, [os.environ.get("PYTHONPATH")])]))
    out = subprocess.run([sys.executable, "-m", "pytest", "-q", "-n", "0", "-p", "no:cacheprovider", str(example / "tests")],
                         cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stdout[-4000:] + out.stderr[-2000:]
    assert " passed" in out.stdout and "failed" not in out.stdout


# ---------------------------------------------------------------- (b)
@pytest.fixture(scope="module")
def venv(tmp_path_factory) -> Path:
    """A venv with the example installed from a copy of its folder (so that the build leaves no
    build/ or *.egg-info in the checkout), and the ``mmicl`` command in its bin/.

    The venv sees the packages of the environment the tests run in (mmicl, its dependencies, pip,
    setuptools and wheel: ``site.addsitedir`` of each of its site folders, from a ``.pth`` file,
    so that their own ``.pth`` files, an editable install's among them, take effect too), whether
    that environment is a venv or the system's; nothing is downloaded."""
    import site

    base = tmp_path_factory.mktemp("examples")
    srcs = []
    for example in EXAMPLES:
        srcs.append(base / example.name)
        shutil.copytree(example, srcs[-1], ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__",
                                                                         ".pytest_cache", ".hypothesis"))
    env_dir = base / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(env_dir)], check=True, timeout=300)
    py = env_dir / "bin" / "python"
    purelib = subprocess.run([str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                             check=True, capture_output=True, text=True, timeout=60).stdout.strip()
    outer = [p for p in site.getsitepackages() if Path(p).is_dir()]
    (Path(purelib) / "_outer_environment.pth").write_text(
        "".join(f"import site; site.addsitedir({p!r})\n" for p in outer), encoding="utf-8")
    out = subprocess.run([str(py), "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation", "--no-index", *map(str, srcs)],
                         capture_output=True, text=True, env=_env(), timeout=300)
    assert out.returncode == 0, out.stdout + out.stderr
    cmd = env_dir / "bin" / "mmicl"
    if not cmd.exists():
        # The venv does not get the scripts of the packages it sees: write the `mmicl` command as
        # pip writes a console script, from mmicl's own entry point.
        (ep,) = [e for e in metadata.distribution("mmicl").entry_points if e.group == "console_scripts" and e.name == "mmicl"]
        module, func = ep.value.split(":")
        cmd.write_text(f"#!{py}\nimport sys\nfrom {module} import {func}\nsys.exit({func}())\n")
        cmd.chmod(cmd.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return env_dir


@pytest.mark.subprocess
def test_installed_plugin_is_listed_with_its_origin(venv):
    out = subprocess.run([str(venv / "bin" / "mmicl"), "claims", "--json"], capture_output=True, text=True,
                         env=_env(), cwd=venv.parent, timeout=120)
    assert out.returncode == 0, out.stderr
    rows = {r["id"]: r for r in json.loads(out.stdout)["claims"]}
    assert ZFB | MHM | ACDS | LLZMP <= set(rows)
    for ids, origin in ((ZFB, "plugin zfb (mmicl-zfb 0.1.0)"), (MHM, "plugin mhm (mmicl-mhm 0.1.0)"),
                        (ACDS, "plugin acds (mmicl-acds 0.1.0)"), (LLZMP, "plugin llzmp (mmicl-llzmp 0.1.0)")):
        for cid in ids:
            assert rows[cid]["origin"] == origin
            assert rows[cid]["default"] is False


@pytest.mark.slow
@pytest.mark.subprocess
def test_installed_mhm_plugin_verifies_its_case(venv, tmp_path):
    """The installed mmicl-mhm through the command, on a case of its own kind (a non-linear target).
    Slow: its own tests run the same command on a case from the checkout, and the listing above checks
    the installed entry point."""
    out_dir = tmp_path / "out"
    out = subprocess.run([str(venv / "bin" / "mmicl"), "verify", "--size", "smoke", "--claim", "mhm.onestep", "--case",
                          "d=2; n=6; target=sign(z)", "--out", str(out_dir)], capture_output=True, text=True,
                         env=_env(), cwd=venv.parent, timeout=300)
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    (c,) = json.loads((out_dir / "verdicts.json").read_text())["claims"]
    assert c["origin"] == "plugin mhm (mmicl-mhm 0.1.0)" and c["verdict"] in ("holds", "inconclusive"), c["verdict_reason"]


@pytest.mark.subprocess
def test_installed_plugin_verifies(venv, tmp_path):
    """The installed plugin's claims run through the ``mmicl`` command with their plugin's origin.
    At the smoke size: that they hold at the quick size is the example's own test
    (``test_example_own_tests_pass`` runs it), which need not be paid for twice."""
    out_dir = tmp_path / "out"
    out = subprocess.run([str(venv / "bin" / "mmicl"), "verify", "--size", "smoke", "--claim", "zfb.*", "--out",
                          str(out_dir)], capture_output=True, text=True, env=_env(), cwd=venv.parent, timeout=300)
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    claims = {c["id"]: c for c in json.loads((out_dir / "verdicts.json").read_text())["claims"]}
    assert set(claims) == ZFB
    for cid, c in claims.items():
        assert c["verdict"] in ("holds", "inconclusive"), (cid, c["verdict_reason"])
        assert c["origin"] == "plugin zfb (mmicl-zfb 0.1.0)"
    for cid in ("zfb.minimiser", "zfb.flow"):   # the two that decide at the smoke size (the example's own test)
        assert claims[cid]["verdict"] == "holds", (cid, claims[cid]["verdict_reason"])
    numbers = lambda cid: [ch["numbers"] for ch in claims[cid]["evidence"]["checks"]]  # noqa: E731
    assert any("gamma_star" in n and "gamma_numeric" in n for n in numbers("zfb.minimiser"))
    ends = [n for n in numbers("zfb.flow") if "flow_end_gamma" in n]
    assert ends and all("gamma_star" in n for n in ends)
    # the smoke case Λ = diag(1, 3), N = 2: Γ* = N((N + 1)Λ + tr(Λ) I)⁻¹ = diag(2/7, 2/13), and the flow ends there
    first = ends[0]
    assert first["gamma_star"][0][0] == pytest.approx(2 / 7, rel=1e-10)
    assert first["flow_end_gamma"][1][1] == pytest.approx(2 / 13, rel=1e-6)


# ---------------------------------------------------------------- (c)
ALLOWED_MODULES = {"mmicl", "mmicl.hypotheses", "mmicl.testing"}
"""mmicl's public modules besides its top level: the hypothesis builders, and the strategies and
assertions of property tests (a plugin's case type draws its cases with them)."""


def private_uses(source: str, filename: str = "<source>") -> list[str]:
    """Every use of a non-public mmicl name in ``source``: ``import mmicl.<x>`` or
    ``from mmicl.<x> import …`` with ``mmicl.<x>`` not in ``ALLOWED_MODULES``, ``from mmicl import y``
    and ``mmicl.y`` (attribute access on the imported module, under any alias) with y not in
    ``mmicl.__all__``."""
    public = set(mmicl.__all__)
    tree = ast.parse(source, filename)
    aliases: set[str] = set()
    bad: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name == "mmicl" or a.name.startswith("mmicl."):
                    if a.name not in ALLOWED_MODULES:
                        bad.append(f"{filename}:{node.lineno}: import {a.name}")
                    if a.name == "mmicl":
                        aliases.add(a.asname or "mmicl")
                    elif a.asname is None:
                        aliases.add("mmicl")  # `import mmicl.hypotheses` binds the name mmicl
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if node.module == "mmicl":
                bad += [f"{filename}:{node.lineno}: from mmicl import {a.name}" for a in node.names if a.name not in public]
            elif node.module.startswith("mmicl.") and node.module not in ALLOWED_MODULES:
                bad.append(f"{filename}:{node.lineno}: from {node.module} import …")
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in aliases:
            if node.attr not in public:
                bad.append(f"{filename}:{node.lineno}: {node.value.id}.{node.attr}")
    return bad


def test_the_checker_refuses_private_names():
    assert private_uses("import mmicl\nmmicl.claim\nmmicl.hypotheses.bounded_s\nfrom mmicl import Check\n"
                        "import mmicl.hypotheses\nfrom mmicl.hypotheses import has_signal\nimport mmicl_zfb\n") == []
    for src in ("import mmicl.proofs.registry", "from mmicl.numerics import lca", "import mmicl\nmmicl.proofs",
                "import mmicl as m\nm._API", "from mmicl import _API", "from mmicl.theory import x"):
        assert private_uses(src), src


@pytest.mark.parametrize("example", EXAMPLES, ids=[p.name for p in EXAMPLES])
def test_example_imports_only_public_names(example):
    files = sorted((example / "src").rglob("*.py")) + sorted((example / "tests").rglob("*.py"))
    assert {f.name for f in files} >= {"__init__.py", "theory.py", "numerics.py", "claims.py"}
    bad = [b for f in files for b in private_uses(f.read_text(encoding="utf-8"), str(f.relative_to(ROOT)))]
    assert bad == []
