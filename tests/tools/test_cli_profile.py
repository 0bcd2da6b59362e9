"""`graphflow profile FILE --input ...`: traced runs of a saved graph, the top ops by time, and a
Chrome trace file; errors in one line."""

import io
import json
import subprocess
import sys

import numpy as np
import pytest

import graphflow as tf
from graphflow.tools import cli, cli_profile


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
    assert lines[0] == f"{model_path}: 3 traced run(s) after 1 warm-up, 4 ops"
    assert lines[1].startswith("op time per run (3 runs): median ")
    assert "the per-op medians add up to" in lines[1]
    assert lines[2].startswith("per op, over its 3 calls (one per run): median and mean us")
    assert lines[3].split()[:8] == ["median", "us", "mean", "us", "total", "ms", "share", "calls"]
    assert lines[3].split()[-2:] == ["kernel", "node"]  # the implementation the plan chose
    rows = [line.split() for line in lines[4:-1] if not line.startswith("note:")]
    assert lines[-1].startswith("wrote the last run's Chrome trace")
    assert len(rows) == 2  # --top 2, largest total first (which op wins is up to the machine)
    assert float(rows[0][2]) >= float(rows[1][2]) and [r[4] for r in rows] == ["3", "3"]
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


class _Node:
    def __init__(self, name, micros):
        self.op, self.node_name, self.kernel, self.all_end_rel_micros = "MatMul", name, "blas", micros


class _Run:
    def __init__(self, *nodes):
        self.nodes = nodes

    def node_stats(self):
        return self.nodes


def test_profile_prints_medians_beside_means_and_names_skewed_ops():
    """On a busy machine one slow call makes an op's mean 5x its median; the run median and the
    per-op medians agree, and the note says why the mean differs."""
    runs = [_Run(_Node("conv", 800), _Node("dense", 100)) for _ in range(4)]
    runs.append(_Run(_Node("conv", 20_000), _Node("dense", 100)))
    out = io.StringIO()
    cli_profile.report("m.gfz", runs, 10, out)
    lines = out.getvalue().splitlines()
    assert lines[0] == "m.gfz: 5 traced run(s) after 1 warm-up, 2 ops"
    assert lines[1] == ("op time per run (5 runs): median 0.900 ms, min 0.900, max 20.100; the "
                        "per-op medians add up to 0.900 ms")
    assert lines[2].startswith("per op, over its 5 calls (one per run)")
    assert lines[4].split() == ["800.0", "4640.0", "23.200", "97.9%", "5", "MatMul", "blas",
                                "conv"]
    assert lines[5].split()[:2] == ["100.0", "100.0"]
    assert lines[-1].startswith("note: the mean of conv is over 2x the median: a few slow calls")
    ragged = [_Run(_Node("a", 5), _Node("a", 7)), _Run(_Node("a", 6))]
    out = io.StringIO()
    cli_profile.report("m.gfz", ragged, 10, out)
    assert "per op, over its calls ('calls')" in out.getvalue()
