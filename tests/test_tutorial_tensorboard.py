"""docs/tutorials/tensorboard-and-profiling.md: its code runs (as every page in tests/test_docs.py)
and leaves what the page promises: an event log TensorBoard reads, the picture the page shows (the
committed copy is what this code draws) and a Trace Event JSON file."""

import json
import struct

import pytest

from tests.test_docs import DOCS, python_blocks

PAGE = DOCS / "tutorials" / "tensorboard-and-profiling.md"
PICTURE = "tensorboard-and-profiling.png"

pytest.importorskip("tensorboard", reason="the page writes TensorBoard summaries")
pytest.importorskip("matplotlib", reason="the page plots the event file with matplotlib")


def _png_size(data):
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", data[16:24])


def test_page_code_writes_the_log_the_picture_and_the_trace(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    text = PAGE.read_text(encoding="utf-8")
    assert "![" in text and f"({PICTURE})" in text
    namespace = {"__name__": "__docs__"}
    for line, code in python_blocks(text):
        exec(compile("\n" * (line - 1) + code, str(PAGE), "exec"), namespace)
    out = capsys.readouterr()
    assert "values: [1 2 4] sum: 7" in out.err
    assert "assertion failed: [need positive values]" in out.out
    assert list((tmp_path / "logs" / "run1").glob("events.out.tfevents.*"))
    drawn = (tmp_path / PICTURE).read_bytes()
    assert _png_size(drawn) == _png_size((PAGE.parent / PICTURE).read_bytes())
    events = json.loads((tmp_path / "timeline.json").read_text())["traceEvents"]
    ops = {(e["name"], e["args"]["name"]) for e in events if e["ph"] == "X"}
    # the plan as it ran: matmul + bias + relu fused into one op named after the last of them
    assert {("FusedMatMul", "hidden/Relu"), ("ApplyAdam", "Adam/update_hidden/kernel/ApplyAdam"),
            ("VariableV2", "hidden/kernel")} <= ops
