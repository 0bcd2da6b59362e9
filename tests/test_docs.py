"""Docs cannot rot: every ```python block of every docs/**/*.md file runs, in order (one namespace
per file), in an empty temporary directory with a fresh default graph. Tracebacks point at the
Markdown file's own line numbers.

Pictures too: an SVG that a page shows (`![...](name.svg)`) and its code writes (into the temporary
directory) is compared with the committed copy next to the page — same nodes, edges, clusters and
labels. When the drawing changed the test fails and names the fresh SVG and what differs; the source
tree is never written (copy the fresh file over the committed one to accept the new picture).
"""

import re
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

import graphflow as tf
from tests.tooling import skip_unless_program

DOCS = Path(__file__).resolve().parent.parent / "docs"
_FENCE = re.compile(r"^(\s*)```\s*([A-Za-z0-9_+-]*)\s*$")
_SVG_REF = re.compile(r"!\[[^\]]*\]\(([^)\s]+\.svg)\)")


def python_blocks(text):
    """[(first line number, code)] of the ```python fenced blocks of a Markdown text."""
    blocks = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        m = _FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        indent, lang = m.group(1), m.group(2).lower()
        start = i + 1
        i += 1
        while i < len(lines) and not re.match(r"^\s*```\s*$", lines[i]):
            i += 1
        if i == len(lines):
            raise ValueError(f"unclosed code block starting at line {start}")
        if lang in ("python", "py", "python3"):
            body = [line[len(indent):] if line.startswith(indent) else line
                    for line in lines[start:i]]
            blocks.append((start + 1, "\n".join(body) + "\n"))
        i += 1
    return blocks


PAGES = sorted(p for p in DOCS.rglob("*.md") if python_blocks(p.read_text(encoding="utf-8")))


def test_the_docs_are_found():
    assert DOCS / "tutorials" / "inspecting-graphs.md" in PAGES
    assert python_blocks("x\n```python\na = 1\n```\n```bash\nls\n```\n  ```python\n  b = 2\n  ```\n") \
        == [(3, "a = 1\n"), (9, "b = 2\n")]


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


@pytest.mark.parametrize("page", PAGES, ids=[str(p.relative_to(DOCS)) for p in PAGES])
def test_doc_code_runs(page, tmp_path, monkeypatch):
    text = page.read_text(encoding="utf-8")
    if "render_svg" in text:
        skip_unless_program("dot", "the page draws its graph with Graphviz", shutil.which("dot"))
    monkeypatch.chdir(tmp_path)
    namespace = {"__name__": "__docs__"}
    for line, code in python_blocks(text):
        # Pad so that line numbers in tracebacks are the Markdown file's.
        exec(compile("\n" * (line - 1) + code, str(page), "exec"), namespace)
    stale = []
    for ref in _SVG_REF.findall(text):
        produced = tmp_path / ref
        if not produced.exists():
            continue  # a picture made some other way; nothing to compare
        committed = page.parent / ref
        fresh = _svg_signature(produced.read_text(encoding="utf-8"))
        if not committed.exists():
            stale.append(f"{committed.relative_to(DOCS.parent)} is missing (fresh: {produced})")
            continue
        old = _svg_signature(committed.read_text(encoding="utf-8"))
        if old != fresh:
            gone = sorted(set(old[0] + old[1]) - set(fresh[0] + fresh[1]), key=str)[:5]
            new = sorted(set(fresh[0] + fresh[1]) - set(old[0] + old[1]), key=str)[:5]
            stale.append(f"{committed.relative_to(DOCS.parent)} differs from the fresh {produced} "
                         f"(only committed: {gone}; only fresh: {new})")
    tf.reset_default_graph()
    assert not stale, f"pictures are out of date: {stale}; copy the fresh SVGs over them"
