"""`graphflow profile FILE --input ...`: traced runs of a saved graph, the top ops by time, and a
Chrome trace file; errors in one line."""

import io
import json
import subprocess
import sys

import numpy as np
import pytest

import graphflow as tf
from graphflow.tools import cli


@pytest.fixture
def model_path(tmp_path):
    x = tf.placeholder(tf.float32, [None, 64], name="x")
    w = tf.Variable(np.full([64, 256], 0.01, np.float32), name="w")
    hidden = tf.nn.relu(tf.matmul(x, w, name="big_matmul"), name="relu")
    out = tf.reduce_sum(hidden, axis=1, name="out")
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        path = tmp_path / "model.gfz"
        tf.save(str(path), {"x": x}, {"out": out}, session=sess)
    np.save(tmp_path / "x.npy", np.ones([512, 64], np.float32))
    return path


def test_profile_prints_the_top_ops_and_writes_a_trace(model_path, tmp_path):
    trace = tmp_path / "trace.json"
    done = subprocess.run([sys.executable, "-m", "graphflow.tools.cli", "profile", str(model_path),
                           "--input", f"x={tmp_path / 'x.npy'}", "--runs", "3", "--top", "2",
                           "--trace", str(trace)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert "3 traced run(s) after 1 warm-up" in lines[0]
    assert lines[1].split()[:4] == ["total", "ms", "share", "calls"]
    assert lines[1].split()[-2:] == ["kernel", "node"]  # the implementation the plan chose
    rows = [line.split() for line in lines[2:-1]]
    assert lines[-1].startswith("wrote the last run's Chrome trace")
    assert len(rows) == 2  # --top 2, largest total first (which op wins is up to the machine)
    assert float(rows[0][0]) >= float(rows[1][0]) and [r[2] for r in rows] == ["3", "3"]
    # (a large ReLU alone runs as a fused program of one instruction: the plan is made for the
    # fed input's shape)
    ops = {("MatMul", "big_matmul"), ("Relu", "relu"), ("FusedElementwise", "relu"), ("Sum", "out"),
           ("VariableV2", "w")}
    assert {(r[-3], r[-1]) for r in rows} <= ops
    events = json.loads(trace.read_text())["traceEvents"]
    assert {e["args"]["name"] for e in events if e["ph"] == "X"} == {"w", "big_matmul", "relu",
                                                                      "out"}


def test_profile_errors_are_one_line(model_path, capsys):
    assert cli.main(["profile", str(model_path)], out=io.StringIO()) == 2
    assert "missing --input for ['x']" in capsys.readouterr().err
    assert cli.main(["profile", str(model_path), "--input", "x=[[1]]"], out=io.StringIO()) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "shape" in err
