"""Docs cannot rot: every ```python and ```bash (```shell, ```sh) block of README.md and of every
docs/**/*.md file runs, in the page's order, in one empty temporary directory per page: the python
blocks in one namespace with a fresh default graph (tracebacks point at the Markdown file's own line
numbers), the shell blocks with bash (`set -eo pipefail`; a failure names the Markdown line), where
`python` is this interpreter and `graphflow` this checkout's command.

Shell commands are written to run from the checkout's root after the README's first line, so the
page's directory links the checkout's `examples/` and `benchmarks/` when its commands use them, and
gets a copy of the `models/` that the README's first line makes when they use that: its job
(`python examples/train_digits.py --out models`, without the line's virtualenv part) runs once per
session. The examples train one epoch per model (GRAPHFLOW_EXAMPLES_EPOCHS=1).

A block's fence can carry markers after the language (Markdown shows none of them):
`needs=dot,mpirun` (skip it where a program is missing; CI's GRAPHFLOW_REQUIRE_TOOLS makes that a
failure), `serves=6006` (its last command is a server: pass once the port listens, then stop it),
`slow` (only where the tests marked slow run: CI) and `skip=installs|downloads|gpu-machine` (never
run: it makes a virtualenv or installs packages, needs the network, or needs a GPU machine). The
markers are parsed in tests/doc_blocks.py; blocks skipped for a missing program or a busy port are
reported as warnings.

Pictures too: an SVG that a page shows (`![...](name.svg)`) and its code writes (into the temporary
directory) is compared with the committed copy next to the page — same nodes, edges, clusters and
labels. When the drawing changed the test fails and names the fresh SVG and what differs; the source
tree is never written (copy the fresh file over the committed one to accept the new picture).
"""

import re
import shutil
import subprocess
import warnings
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

import graphflow as tf
from tests import doc_blocks
from tests.doc_blocks import PYTHONS, SHELLS, code_blocks, python_blocks  # noqa: F401
from tests.tooling import required, skip_unless_program

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
README = ROOT / "README.md"
_SVG_REF = re.compile(r"!\[[^\]]*\]\(([^)\s]+\.svg)\)")
_VENV_PREFIX = re.compile(r"^python3 -m venv (\S+) && \. \1/bin/activate && pip install [^&]+&& ")
SHELL_TIMEOUT = 600


def _runnable(page):
    return any(b.lang in SHELLS + PYTHONS for b in code_blocks(page.read_text(encoding="utf-8")))


PAGES = [README] + sorted(p for p in DOCS.rglob("*.md") if _runnable(p))


def test_the_docs_are_found():
    assert DOCS / "tutorials" / "inspecting-graphs.md" in PAGES
    assert python_blocks("x\n```python\na = 1\n```\n```bash\nls\n```\n  ```python\n  b = 2\n  ```\n") \
        == [(3, "a = 1\n"), (9, "b = 2\n")]
    (block,) = code_blocks("```bash needs=dot,mpirun serves=6006 slow\nls\n```\n")
    assert (block.lang, block.needs, block.serves, block.slow, block.code) == \
        ("bash", ("dot", "mpirun"), 6006, True, "ls\n")
    with pytest.raises(ValueError, match="unknown code block marker 'sloww'"):
        code_blocks("```bash sloww\nls\n```\n")


def _svg_signature(svg_text):
    """What a drawing shows, independent of layout: titles of nodes/edges/clusters and labels."""
    root = ET.fromstring(svg_text)
    ns = "{http://www.w3.org/2000/svg}"
    titles, labels = [], []
    for g in root.iter(f"{ns}g"):
        title = g.find(f"{ns}title")
        if title is not None and g.get("class") in ("node", "edge", "cluster"):
            titles.append((g.get("class"), title.text))
    for text in root.iter(f"{ns}text"):
        labels.append(text.text)
    return sorted(titles), sorted(filter(None, labels))


@pytest.fixture(scope="session")
def readme_models(tmp_path_factory):
    """`models/` as the README's first line leaves it (its job run without the virtualenv part)."""
    first = code_blocks(README.read_text(encoding="utf-8"))[0].code.splitlines()[0]
    job = _VENV_PREFIX.sub("", first)
    assert job != first and "--out models" in job, first
    where = tmp_path_factory.mktemp("readme-first-line")
    (where / "examples").symlink_to(ROOT / "examples")
    env = doc_blocks.shell_environment(str(where / "bin"), ROOT)
    done = subprocess.run(["bash", "-c", job], cwd=where, env=env, capture_output=True, text=True,
                          timeout=SHELL_TIMEOUT)
    assert done.returncode == 0, f"README.md's first line: {job}\n{done.stdout[-2000:]}{done.stderr[-2000:]}"
    return where / "models"


def _why_not(block, run_slow):
    """Why a shell block does not run here (None: it runs)."""
    if block.skip:
        return f"skip={block.skip}: {doc_blocks.SKIP_REASONS[block.skip]}"
    if block.slow and not run_slow:
        return "slow"
    missing = doc_blocks.missing_programs(block, required)
    return f"`{'`, `'.join(missing)}` not on PATH" if missing else None


def _run_shell_block(page, block, tmp_path, env, request):
    code = block.code
    for name in ("examples", "benchmarks"):
        if f"{name}/" in code and not (tmp_path / name).exists():
            (tmp_path / name).symlink_to(ROOT / name)
    if "models/" in code and not (tmp_path / "models").exists():
        shutil.copytree(request.getfixturevalue("readme_models"), tmp_path / "models")
    where = f"{page.relative_to(ROOT)}:{block.line}"
    if block.serves:
        with doc_blocks.PortLock(block.serves) as free:
            if not free:
                warnings.warn(f"{where}: not run, port {block.serves} is in use", stacklevel=1)
                return
            problem = doc_blocks.run_shell(block, tmp_path, env, SHELL_TIMEOUT)
    else:
        problem = doc_blocks.run_shell(block, tmp_path, env, SHELL_TIMEOUT)
    assert problem is None, f"{where}: the ```{block.lang} block {problem}"


@pytest.mark.parametrize("page", PAGES, ids=[str(p.relative_to(ROOT)) for p in PAGES])
def test_doc_code_runs(page, tmp_path, monkeypatch, request, run_slow):
    text = page.read_text(encoding="utf-8")
    if "render_svg" in text:
        skip_unless_program("dot", "the page draws its graph with Graphviz", shutil.which("dot"))
    work = tmp_path / "page"
    work.mkdir()
    monkeypatch.chdir(work)
    namespace = {"__name__": "__docs__"}
    env = None
    for block in code_blocks(text, str(page)):
        if block.lang in PYTHONS:
            # Pad so that line numbers in tracebacks are the Markdown file's.
            exec(compile("\n" * (block.line - 1) + block.code, str(page), "exec"), namespace)
        elif block.lang in SHELLS:
            why = _why_not(block, run_slow)
            if why is None:
                env = env or doc_blocks.shell_environment(str(tmp_path / "bin"), ROOT)
                _run_shell_block(page, block, work, env, request)
            elif "PATH" in why:
                warnings.warn(f"{page.relative_to(ROOT)}:{block.line}: not run, {why}", stacklevel=1)
    stale = []
    for ref in _SVG_REF.findall(text):
        produced = work / ref
        if not produced.exists():
            continue  # a picture made some other way; nothing to compare
        committed = page.parent / ref
        fresh = _svg_signature(produced.read_text(encoding="utf-8"))
        if not committed.exists():
            stale.append(f"{committed.relative_to(ROOT)} is missing (fresh: {produced})")
            continue
        old = _svg_signature(committed.read_text(encoding="utf-8"))
        if old != fresh:
            gone = sorted(set(old[0] + old[1]) - set(fresh[0] + fresh[1]), key=str)[:5]
            new = sorted(set(fresh[0] + fresh[1]) - set(old[0] + old[1]), key=str)[:5]
            stale.append(f"{committed.relative_to(ROOT)} differs from the fresh {produced} "
                         f"(only committed: {gone}; only fresh: {new})")
    tf.reset_default_graph()
    assert not stale, f"pictures are out of date: {stale}; copy the fresh SVGs over them"
