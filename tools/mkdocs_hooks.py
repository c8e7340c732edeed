"""MkDocs hooks of mmicl's documentation site (``mkdocs.yml``: ``hooks: [mkdocs_hooks.py]``).

Three jobs, so that the site is built from the files the repository already keeps and never drifts
from them:

1. **The README as pages.** README.md stays the front page on the repository host; the site splits
   it at its ``##`` headings into the pages named in ``README_PAGES`` (a section not named there
   goes to the home page, so a new README section is never lost). Links are rewritten for the site:
   ``docs/X.md`` becomes the page ``X.md``, ``#anchor`` points to the page that now holds that
   heading, and a link to another repository file becomes its path as code (the site holds only
   the pages). In the pages of docs/, a link to ``../README.md`` (with or without ``#anchor``) goes
   to the README page holding it, and a link to another file outside docs/ likewise becomes its
   path as code.

2. **The API reference** (``reference.md``), generated from ``mmicl._API`` (public name →
   module, attribute): one section per public name, grouped by the comments of ``_API``, each an
   mkdocstrings block (``::: path``) at the place the object is *defined*. mkdocstrings reads
   modules statically (griffe) and cannot follow ``mmicl.__getattr__``'s lazy re-exports, so each
   name's definition is found here: the attribute named in ``_API``, followed through imports
   (griffe aliases) and through a package's own lazy ``_API`` map (``mmicl.proofs.certificates``).
   A public name whose object has no docstring is a warning, which fails ``mkdocs build --strict``.

3. **The package mapping for griffe.** pyproject.toml maps ``mmicl.theory``, ``mmicl.numerics``
   and ``mmicl.proofs`` to the folders theory/, numerics/ and proofs/ at the top of the repository.
   The editable install implements that with an import hook (setuptools' ``MAPPING``), which griffe
   reads only for top-level packages: it finds ``mmicl/`` and then looks for
   ``mmicl/numerics/``, which does not exist. So the hook lays out the installed tree in a
   temporary folder, ``<tmp>/mmicl/`` with symbolic links to the files of mmicl/ and to the three
   mapped folders (read from ``[tool.setuptools.package-dir]``, so it follows pyproject.toml), and
   gives that folder to the python handler as its only search path (``paths``). Griffe then reads
   the sources statically, imports nothing, and names every object by its installed path
   (``mmicl.numerics.lca.alpha_T``). Importing the package instead (griffe's dynamic inspection)
   would work too, but it loads torch and SymPy and loses the source-level view.

4. **The tutorials** (``docs/tutorials/NN_*.py``, jupytext "percent" scripts, so that they diff
   as text). Each is executed here, once per build, with nbclient in a fresh kernel in an empty
   temporary folder (``execute_tutorial``), and the executed notebook, outputs and figures
   included, is what mkdocs-jupyter renders (its own ``execute`` stays off). Executing here rather
   than with mkdocs-jupyter's ``execute: true`` lets the test suite execute each tutorial once for
   both of its uses: ``tests/docs/test_tutorials.py`` fails on any error in a cell, and the site build
   of ``tests/docs/test_docs_site.py`` is handed the same executed notebooks through the environment
   variable ``MMICL_DOCS_TUTORIALS`` (a folder of ``<stem>.ipynb``; a notebook there is used only
   if it records the SHA-256 of the current source, else the tutorial is executed again). A cell
   that raises fails the build. Links in the tutorials' Markdown cells to pages of docs/
   (``../limits.md#anchor``) are rewritten to the site's URLs; a link to a missing page is a
   warning, which fails ``--strict``.

``tests/docs/test_docs_site.py`` builds the site with ``--strict`` and uses ``public_objects`` and
``public_groups`` from here.
"""
from __future__ import annotations

import ast
import atexit
import hashlib
import logging
import os
import posixpath
import re
import shutil
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
log = logging.getLogger("mkdocs.hooks.mmicl")

# README.md's "## " sections, by the start of their heading -> the site page that holds them (their
# titles in the nav are set in mkdocs.yml). The text before the first "## " heading (the title and
# the introduction) opens the home page; a section not named here is added to the home page.
README_PAGES: dict[str, str] = {
    "Two commands": "index.md",
    "The Python API": "index.md",
    "What it checks": "guide/claims.md",
    "The other commands": "guide/commands.md",
    "Where mmicl keeps state": "guide/state.md",
    "The LAW language": "guide/law_language.md",
    "Conventions": "guide/conventions.md",
    "Layout": "guide/layout.md",
    "Contributing": "guide/contributing.md",
}
HOME = "index.md"
REFERENCE = "reference.md"

_FENCE = re.compile(r"^(```|~~~).*?^\1[^\n]*$", re.M | re.S)
_INLINE_CODE = re.compile(r"`[^`\n]*`")
_LINK = re.compile(r"(?<!!)\[((?:[^\[\]]|\[[^\]]*\])*)\]\(([^()\s]+)\)")
_HEADING = re.compile(r"^(#{1,6})\s+(.+?)\s*#*\s*$", re.M)
_SCHEME = re.compile(r"^[a-z][a-z0-9+.-]*:", re.I)


# --------------------------------------------------------------------------------------------
# the package tree griffe reads


def package_dirs() -> dict[str, Path]:
    """``[tool.setuptools.package-dir]`` of pyproject.toml: package name -> source folder."""
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib
    data = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    return {pkg: ROOT / folder for pkg, folder in data["tool"]["setuptools"]["package-dir"].items()}


def stage_package(dest: Path) -> Path:
    """Lay out the installed ``mmicl`` tree under ``dest`` with symbolic links; returns ``dest``."""
    mapping = package_dirs()
    for pkg in sorted(mapping, key=lambda p: p.count(".")):
        target = dest.joinpath(*pkg.split("."))
        if pkg.count(".") == 0:
            target.mkdir(parents=True)
            children = {p.split(".")[1] for p in mapping if p.startswith(pkg + ".") and p.count(".") == 1}
            for item in sorted(mapping[pkg].iterdir()):
                if item.name not in children and item.name != "__pycache__":
                    (target / item.name).symlink_to(item, target_is_directory=item.is_dir())
        else:
            target.symlink_to(mapping[pkg], target_is_directory=True)
    return dest


def load_package(search_path: Path):
    """The ``mmicl`` package as griffe reads it statically from a staged tree."""
    import griffe

    loader = griffe.GriffeLoader(search_paths=[str(search_path)])
    package = loader.load("mmicl", try_relative_path=False)  # not the mmicl/ of the working directory
    loader.resolve_aliases(implicit=False, external=False)
    return package


# --------------------------------------------------------------------------------------------
# the public names


def public_groups() -> list[tuple[str, list[str]]]:
    """``mmicl._API``'s names in source order, grouped by the ``# comment`` lines between them.

    Raises ``RuntimeError`` unless the names read this way are exactly those of ``mmicl._API``.
    """
    import mmicl  # cheap: names load on first use

    source = (ROOT / "mmicl" / "__init__.py").read_text(encoding="utf-8")
    body = source[source.index("_API:"):]
    body = body[: body.index("\n}\n")]
    groups: list[tuple[str, list[str]]] = [("the package", ["__version__"])]
    for line in body.splitlines()[1:]:
        comment = re.match(r"^\s*#\s*(.+?)\s*$", line)
        name = re.match(r'^\s*"(\w+)"\s*:', line)
        if comment:
            groups.append((comment.group(1), []))
        elif name:
            groups[-1][1].append(name.group(1))
    read = [n for _, names in groups for n in names]
    if read != list(mmicl.__all__):
        raise RuntimeError(f"mmicl/__init__.py's _API, read line by line, gives {read}, not mmicl.__all__")
    return [(title, names) for title, names in groups if names]


def _definition(package, module: str, attr: str | None):
    """The griffe object defined for ``module.attr`` (``attr`` None: the module itself)."""
    obj = package
    for part in module.split(".")[1:]:
        obj = obj.members[part]
    if attr is None:
        return obj
    if attr not in obj.members and "_API" in obj.members:  # a package's own lazy re-exports
        lazy = ast.literal_eval(str(obj.members["_API"].value))
        if attr in lazy:
            sub, name = lazy[attr]
            sub = sub if sub.startswith("mmicl.") else f"{obj.path}.{sub}"
            return _definition(package, sub, name)
    target = obj.members[attr]
    while target.is_alias:
        target = target.final_target
    if target.is_attribute and target.docstring is None and re.fullmatch(r"[A-Za-z_][\w.]*", str(target.value)):
        # ``Variant = tv.Variant``: a second name for an object defined elsewhere
        head, *rest = str(target.value).split(".")
        if head in obj.members:
            found = obj.members[head]
            for part in rest:
                while found.is_alias:
                    found = found.final_target
                found = found.members[part]
            while found.is_alias:
                found = found.final_target
            return found
    return target


def public_objects(package) -> dict[str, object]:
    """Public name -> the griffe object that defines it (``__version__`` included)."""
    import mmicl

    api = {"__version__": ("mmicl.numerics.provenance", "__version__"), **mmicl._API}
    objects = {}
    for name in mmicl.__all__:
        try:
            objects[name] = _definition(package, *api[name])
        except Exception as error:  # KeyError, or griffe failing to resolve an alias
            raise RuntimeError(f"mmicl.{name}: no definition of {api[name]} found in the sources ({error!r})") from error
    return objects


def missing_docstrings(objects: dict[str, object], prefix: str = "mmicl.") -> list[str]:
    """The public names whose definition has no docstring (for an attribute: none after it)."""
    return [f"{prefix}{name} ({obj.path})" for name, obj in objects.items()
            if obj.docstring is None or not obj.docstring.value.strip()]


MODULE_SECTIONS = (
    ("mmicl.testing", "Property tests: `mmicl.testing`",
     "Hypothesis strategies yielding task laws and their facts, and the helpers that run and assert a "
     "claim, for a repository of property tests (`import mmicl.testing as mt`)."),
    ("mmicl.pytest_plugin", "The pytest plugin: `mmicl.pytest_plugin`",
     "Loaded by its `pytest11` entry point once mmicl is installed: the fixtures `mmicl_baseline` and "
     "`mmicl_size`, and the options `--mmicl-size`, `--mmicl-profile`, `--mmicl-update-baseline`, "
     "`--mmicl-require-baseline` (its pytest hooks are not listed)."),
)
"""Modules a user imports by their own path, each documented name by name (their ``__all__``,
less pytest's hooks) after the names of ``mmicl`` itself."""


def module_names(module: str) -> list[str]:
    """The documented names of ``module``: its ``__all__``, less pytest hooks (``pytest_*``)."""
    import importlib

    return [n for n in importlib.import_module(module).__all__ if not n.startswith("pytest_")]


def module_objects(package) -> dict[str, object]:
    """``module.NAME`` -> the griffe object of each name of ``MODULE_SECTIONS``' modules."""
    objects = {}
    for module, _, _ in MODULE_SECTIONS:
        for name in module_names(module):
            objects[f"{module}.{name}"] = _definition(package, module, name)
    return objects


def reference_markdown(objects: dict[str, object], modules: dict[str, object] | None = None) -> str:
    """The API reference page: a section per public name, at the place it is defined; then a
    section per module of ``MODULE_SECTIONS``, a part per name."""
    lines = [
        "# API reference",
        "",
        "Every public name of `mmicl`, the package's `__all__`. Each is used as `mmicl.NAME` (names",
        "load on first use, so `import mmicl` stays cheap) and documented below where it is defined;",
        "the heading gives that place, the name under which you import it from `mmicl` is above it.",
        "This page is generated from `mmicl._API` by `mkdocs_hooks.py` when the site is built.",
        "",
    ]
    for title, names in public_groups():
        lines += [f"## {title[0].upper()}{title[1:]}", ""]
        for name in names:
            lines += _entry("mmicl", name, objects[name])
    for module, title, about in MODULE_SECTIONS if modules is not None else ():
        lines += [f"## {title}", "", about, ""]
        for name in module_names(module):
            lines += _entry(module, name, modules[f"{module}.{name}"])
    return "\n".join(lines)


def _entry(module: str, name: str, obj) -> list[str]:
    """The reference's part for ``module.name``, defined at ``obj``: an anchor under the imported
    name (where it differs from the place of definition, whose anchor mkdocstrings makes), a line
    naming both, and the mkdocstrings block."""
    kind = "module" if obj.is_module else obj.kind.value
    anchor = [f'<a id="{module}.{name}"></a>', ""] if obj.path != f"{module}.{name}" else []
    return [*anchor, f"**`{module}.{name}`** ({kind} `{obj.path}`)", "", f"::: {obj.path}", "    options:",
            "      heading_level: 3", f'      toc_label: "{name}"', ""]


# --------------------------------------------------------------------------------------------
# the README as pages, and links for the site


def _slug(heading: str) -> str:
    """The anchor of a heading, as GitHub and the site (``pymdownx.slugs``, lower case) make it."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)
    text = text.replace("`", "")
    return re.sub(r"[^\w\- ]", "", text.strip().lower()).replace(" ", "-")


def _anchors(markdown: str) -> set[str]:
    seen: dict[str, int] = {}
    out = set()
    for _, heading in _HEADING.findall(_FENCE.sub("", markdown)):
        base = _slug(heading)
        k = seen.get(base, 0)
        seen[base] = k + 1
        out.add(base if k == 0 else f"{base}-{k}")
    return out


def _readme_page(heading: str) -> str:
    return next((page for start, page in README_PAGES.items() if heading.startswith(start)), HOME)


def _promote(markdown: str) -> str:
    """``###``… headings outside fenced code one level up (``##``…); the anchors stay the same."""
    fences = [m.span() for m in _FENCE.finditer(markdown)]

    def up(m: re.Match) -> str:
        return m.group(0) if any(a <= m.start() < b for a, b in fences) else m.group(0)[1:]

    return re.sub(r"^#{3,6} ", up, markdown, flags=re.M)


def split_readme(text: str) -> dict[str, str]:
    """README.md cut at its ``## `` headings (outside code) into the pages of ``README_PAGES``."""
    masked = _FENCE.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)
    starts = [m.start() for m in re.finditer(r"^## ", masked, re.M)]
    pieces = [text[: starts[0]] if starts else text]
    pieces += [text[a:b] for a, b in zip(starts, [*starts[1:], len(text)])]
    pages: dict[str, list[str]] = {HOME: [pieces[0]]}
    for piece in pieces[1:]:
        heading = piece.splitlines()[0][3:].strip()
        page = _readme_page(heading)
        if page == HOME:
            pages[HOME].append(piece)
        else:  # the section's heading becomes the page's title, its sub-headings move up a level
            pages.setdefault(page, []).append(_promote("# " + piece[3:]))
    missing = [h for h in README_PAGES if not any(p.splitlines()[0][3:].strip().startswith(h) for p in pieces[1:])]
    if missing:
        log.warning("README.md has no section %s (named in mkdocs_hooks.README_PAGES)", missing)
    return {page: "".join(parts) for page, parts in pages.items()}


def _rewrite_links(markdown: str, page: str, source: Path, readme_anchors: dict[str, str]) -> str:
    """Links of the page ``page`` (its text from the repository file ``source``) made to work on the
    site: see the module's docstring."""
    docs = ROOT / "docs"

    def to_page(dest: str, fragment: str) -> str:
        rel = posixpath.relpath(dest, posixpath.dirname(page) or ".")
        return rel + (f"#{fragment}" if fragment else "")

    def fix(match: re.Match) -> str:
        text, target = match.group(1), match.group(2)
        if _SCHEME.match(target):
            return match.group(0)
        file_part, _, fragment = target.partition("#")
        if not file_part:  # an anchor in the same repository file
            if source.name == "README.md" and source.parent == ROOT and fragment in readme_anchors:
                return f"[{text}]({to_page(readme_anchors[fragment], fragment)})"
            return match.group(0)
        path = (source.parent / file_part).resolve()
        if path == ROOT / "README.md":
            dest = readme_anchors.get(fragment, HOME) if fragment else HOME
            return f"[{text}]({to_page(dest, fragment)})"
        if docs in path.parents and path.suffix == ".md":
            return f"[{text}]({to_page(path.relative_to(docs).as_posix(), fragment)})"
        # a file of the repository that is not a page of the site: its path, as code
        rel = path.relative_to(ROOT).as_posix() + ("/" if path.is_dir() else "")
        label = text.strip("`")
        return f"{label} (`{rel}` in the repository)" if label != rel.rstrip("/") else f"`{rel}`"

    # rewrite outside fenced code and inline code only
    out, last = [], 0
    protected = [m.span() for m in _FENCE.finditer(markdown)]
    protected += [m.span() for m in _INLINE_CODE.finditer(markdown)
                  if not any(a <= m.start() < b for a, b in protected)]
    for m in _LINK.finditer(markdown):
        if any(a <= m.start() < b for a, b in protected):
            continue
        out += [markdown[last: m.start()], fix(m)]
        last = m.end()
    out.append(markdown[last:])
    return "".join(out)


# --------------------------------------------------------------------------------------------
# the tutorials

TUTORIALS_DIR = ROOT / "docs" / "tutorials"
TUTORIALS_ENV = "MMICL_DOCS_TUTORIALS"
TUTORIAL_TIMEOUT = 300
"""Seconds a cell may run (each tutorial runs in well under a minute in total)."""


def tutorial_sources() -> list[Path]:
    """The tutorials, in their order: ``docs/tutorials/NN_*.py``."""
    return sorted(TUTORIALS_DIR.glob("[0-9][0-9]_*.py"))


def source_hash(source: Path) -> str:
    return hashlib.sha256(Path(source).read_bytes()).hexdigest()


def execute_tutorial(source: Path, timeout: int = TUTORIAL_TIMEOUT):
    """The tutorial ``source`` (a jupytext percent script) executed as a notebook: a fresh python3
    kernel (this interpreter's), an empty temporary working folder, figures inline, one thread for
    torch and the BLAS. Returns the executed ``nbformat`` notebook, with the source's SHA-256 in
    ``metadata.mmicl.source_sha256``; raises nbclient's ``CellExecutionError`` (the cell, the
    exception and its traceback) at the first cell that raises."""
    import jupytext
    from nbclient import NotebookClient

    nb = jupytext.read(source)
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    env = {**os.environ, "MPLBACKEND": "module://matplotlib_inline.backend_inline",
           "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"}
    with tempfile.TemporaryDirectory(prefix="mmicl-tutorial-") as cwd:
        NotebookClient(nb, timeout=timeout, kernel_name="python3",
                       resources={"metadata": {"path": cwd}}).execute(env=env)
    nb.metadata["mmicl"] = {"source_sha256": source_hash(source)}
    return nb


_executed: dict[str, Path] = {}  # source SHA-256 -> its executed notebook, in this process
_executed_folder: list[Path] = []


def executed_notebook(source: Path) -> Path:
    """The executed notebook of ``source`` as an .ipynb file (``<stem>.ipynb`` in one temporary
    folder per process, removed at exit): executed at the first call, reused while the source is
    unchanged. That folder is what ``MMICL_DOCS_TUTORIALS`` takes."""
    import nbformat

    digest = source_hash(source)
    if digest not in _executed:
        nb = execute_tutorial(source)
        if not _executed_folder:
            folder = Path(tempfile.mkdtemp(prefix="mmicl-executed-tutorials-"))
            atexit.register(shutil.rmtree, folder, True)
            _executed_folder.append(folder)
        path = _executed_folder[0] / f"{Path(source).stem}.ipynb"
        nbformat.write(nb, path)
        _executed[digest] = path
    return _executed[digest]


def _given_notebook(source: Path) -> Path | None:
    """The notebook of ``source`` in the folder ``MMICL_DOCS_TUTORIALS`` names, if it was executed
    from the current source."""
    import nbformat

    folder = os.environ.get(TUTORIALS_ENV)
    path = Path(folder) / f"{source.stem}.ipynb" if folder else None
    if path is None or not path.is_file():
        return None
    recorded = nbformat.read(path, as_version=4).metadata.get("mmicl", {}).get("source_sha256")
    return path if recorded == source_hash(source) else None


def _page_url(src_uri: str, use_directory_urls: bool) -> str:
    stem = posixpath.splitext(src_uri)[0]
    return f"{stem}/" if use_directory_urls else f"{stem}.html"


def _shows_nothing(output) -> bool:
    if output.get("output_type") != "display_data":
        return False
    data = output.get("data", {})
    html = re.sub(r"<[^>]*>", "", data.get("text/html", "")).strip()
    return set(data) <= {"text/plain", "text/html"} and not data.get("text/plain", "").strip() and not html


def notebook_for_site(notebook: Path, src_uri: str, files, config, out: Path) -> Path:
    """``notebook`` with the links of its Markdown cells to pages of docs/ rewritten to the site's
    URLs (relative to the page of ``src_uri``), written to ``out``."""
    import nbformat

    nb = nbformat.read(notebook, as_version=4)
    page_url = _page_url(src_uri, config["use_directory_urls"])
    base = page_url if page_url.endswith("/") else posixpath.dirname(page_url)

    def fix(match: re.Match) -> str:
        text, target = match.group(1), match.group(2)
        file_part, _, fragment = target.partition("#")
        if _SCHEME.match(target) or not file_part.endswith(".md"):
            return match.group(0)
        dest = posixpath.normpath(posixpath.join(posixpath.dirname(src_uri), file_part))
        found = files.get_file_from_path(dest)
        if found is None:
            log.warning("%s: a link to %s, which is not a page of the site", src_uri, target)
            return match.group(0)
        url = posixpath.relpath(found.url or ".", base or ".") + ("/" if found.url.endswith("/") else "")
        return f"[{text}]({url}{'#' + fragment if fragment else ''})"

    for cell in nb.cells:
        if cell.cell_type == "markdown":
            cell.source = _LINK.sub(fix, cell.source)
        elif cell.cell_type == "code":  # drop outputs that show nothing (a finished rich progress bar)
            cell.outputs = [o for o in cell.outputs if not _shows_nothing(o)]
    out.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, out)
    return out


def add_tutorials(files, config) -> None:
    """Execute each tutorial (or take its notebook from ``MMICL_DOCS_TUTORIALS``) and prepare its
    site copy; ``on_nav`` then points the tutorial's page at it."""
    docs = Path(config["docs_dir"])
    for source in tutorial_sources():
        src_uri = source.relative_to(docs).as_posix()
        notebook = _given_notebook(source) or executed_notebook(source)
        site_copy = notebook_for_site(notebook, src_uri, files, config,
                                      Path(_state["tmp"]) / "tutorials" / f"{source.stem}.ipynb")
        _state.setdefault("tutorials", {})[src_uri] = site_copy


def point_tutorials_at_notebooks(files) -> None:
    """The tutorials' pages (mkdocs-jupyter's ``NotebookFile``, made in its ``on_files`` from the
    ``.py`` sources) read their executed notebooks instead: ``abs_src_path`` is what mkdocs-jupyter
    renders. The ``src_uri`` stays the script's, so the nav and the URLs name the ``.py``. (A
    generated file cannot be used instead: mkdocs-jupyter's wrapper recomputes ``abs_src_path``
    from ``src_dir``, which a generated file does not have.)"""
    for src_uri, site_copy in _state.get("tutorials", {}).items():
        page_file = files.get_file_from_path(src_uri)
        if page_file is None or not page_file.is_documentation_page():
            log.warning("%s is not a page: is the mkdocs-jupyter plugin configured (mkdocs.yml)?", src_uri)
            continue
        page_file.abs_src_path = str(site_copy)


# --------------------------------------------------------------------------------------------
# the hooks

_state: dict[str, object] = {}


def _first(function):
    """Run this hook before the plugins' (mkdocstrings reads its handler's ``paths`` in its own)."""
    from mkdocs.plugins import event_priority

    return event_priority(100)(function)


@_first
def on_config(config, **kwargs):
    tmp = Path(tempfile.mkdtemp(prefix="mmicl-docs-"))
    _state["tmp"] = tmp
    stage_package(tmp / "src")
    python = config.plugins["mkdocstrings"].config.handlers.setdefault("python", {})
    python["paths"] = [str(tmp / "src")]  # see the module's docstring, point 3
    return config


def on_files(files, config, **kwargs):
    from mkdocs.structure.files import File

    pages = split_readme((ROOT / "README.md").read_text(encoding="utf-8"))
    anchors = {a: page for page, text in pages.items() for a in _anchors(text)}
    _state["readme_anchors"] = anchors
    for page, text in pages.items():
        text = _rewrite_links(text, page, ROOT / "README.md", anchors)
        text = f"<!-- generated from README.md by mkdocs_hooks.py: edit README.md -->\n{text}"
        files.append(File.generated(config, page, content=text))
        _state.setdefault("generated", set()).add(page)

    package = load_package(Path(_state["tmp"]) / "src")
    objects, modules = public_objects(package), module_objects(package)
    for missing in missing_docstrings(objects) + missing_docstrings(modules, prefix=""):
        log.warning("public name without a docstring: %s", missing)
    files.append(File.generated(config, REFERENCE, content=reference_markdown(objects, modules)))
    add_tutorials(files, config)
    return files


def on_nav(nav, config, files, **kwargs):
    point_tutorials_at_notebooks(files)
    return nav


def on_page_markdown(markdown, page, config, files, **kwargs):
    if (page.file.src_uri in _state.get("generated", ()) or page.file.src_uri in _state.get("tutorials", ())
            or page.file.abs_src_path is None):
        return markdown  # the tutorials' links are rewritten in notebook_for_site
    return _rewrite_links(markdown, page.file.src_uri, Path(page.file.abs_src_path),
                          _state.get("readme_anchors", {}))


def on_shutdown(**kwargs):
    tmp = _state.pop("tmp", None)
    if tmp is not None and os.path.isdir(tmp):
        shutil.rmtree(tmp, ignore_errors=True)
