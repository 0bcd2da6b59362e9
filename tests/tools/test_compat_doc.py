"""docs/compat.md is what `python -m graphflow.tools.compat_doc` prints from the code today."""

import os
import subprocess
import sys

from graphflow.tools import compat_doc

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_docs_compat_md_is_up_to_date():
    with open(os.path.join(ROOT, compat_doc.DOC_PATH), encoding="utf-8") as f:
        current = f.read()
    assert current == compat_doc.render(), (
        "docs/compat.md is out of date: run `python -m graphflow.tools.compat_doc` and commit it")


def test_every_section_lists_resolvable_names():
    sections = dict(compat_doc.collect())
    assert {"tf", "tf.nn", "tf.layers", "tf.train", "tf.strings"} <= set(sections)
    names = {name for name, _ in sections["tf.layers"]}
    assert "dense" in names and "np" not in names and "numbers" not in names
    assert ("float32", "constant") in sections["tf"] and ("Session", "class") in sections["tf"]
    assert not any(name in compat_doc.INTERNAL_PACKAGES for name, _ in sections["tf"])


def test_check_mode_reports_a_stale_file(tmp_path):
    stale = tmp_path / "compat.md"
    stale.write_text("old\n")
    cmd = [sys.executable, "-m", "graphflow.tools.compat_doc", "--check", "--output", str(stale)]
    result = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
    assert result.returncode == 1 and "run `python -m graphflow.tools.compat_doc`" in result.stderr
    assert compat_doc.main(["--output", str(stale)]) == 0
    assert compat_doc.main(["--check", "--output", str(stale)]) == 0
    assert stale.read_text() == compat_doc.render()
