"""The `graphflow` command, run as real subprocesses: inspect (tables, DOT, SVG), run (npy/npz/JSON
inputs, printed or saved outputs), optimize, and clear one-line errors with non-zero exit codes."""

import io
import os
import pathlib
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET

import numpy as np
import pytest

import graphflow as tf
from graphflow.tools import cli
from tests.tooling import needs_program


def _cli(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "graphflow.tools.cli", *map(str, args)], cwd=cwd,
                          capture_output=True, text=True, timeout=120)


@pytest.fixture
def model_path(tmp_path):
    x = tf.placeholder(tf.float32, [None, 3], name="x")
    with tf.name_scope("dense"):
        w = tf.Variable(np.arange(12, dtype=np.float32).reshape(3, 4) / 10, name="w")
        b = tf.Variable(np.full([4], -0.5, np.float32), name="b")
        y = tf.nn.relu(tf.matmul(x, w) + b)
    total = tf.reduce_sum(y, name="total")
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        path = tmp_path / "model.gfz"
        tf.save(str(path), {"x": x}, {"y": y, "total": total}, session=sess)
    return path


X = np.array([[1.0, 2.0, 3.0], [-1.0, 0.5, 0.0]], np.float32)


def _expected(model_path):
    """What `graphflow.load(model).run` gives for X, with the kernels the `graphflow run` command
    uses (no compiled loops: `--jit` adds them), in a fresh process: bit for bit its outputs."""
    out = pathlib.Path(str(model_path) + ".expected.npz")
    code = ("import sys, numpy as np, graphflow as tf\n"
            "x = np.array(eval(sys.argv[2]), np.float32)\n"
            "np.savez(sys.argv[3], **tf.load(sys.argv[1]).run({'x': x}))\n")
    done = subprocess.run([sys.executable, "-c", code, str(model_path), repr(X.tolist()), str(out)],
                          capture_output=True, text=True, timeout=120,
                          env=dict(os.environ, GRAPHFLOW_NO_JIT="1"))
    assert done.returncode == 0, done.stderr
    with np.load(out, allow_pickle=False) as saved:
        return {k: saved[k] for k in saved.files}


@needs_program("dot", "Graphviz draws the --svg picture")
def test_inspect_prints_signatures_variables_and_ops(model_path, tmp_path):
    result = _cli("inspect", model_path, "--dot", tmp_path / "g.dot", "--svg", tmp_path / "g.svg")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    # the file keeps what the signature needs (the 11 ops above; no init op)
    assert lines[0].endswith("graphflow graph format 1 (graphflow 0.1.0), 11 ops")
    assert "  x: float32 [?, 3]  (x:0)" in lines
    assert "  y: float32 [?, 4]  (dense/Relu:0)" in lines
    assert "variables: 2 (16 parameters, 2 with saved values)" in lines
    assert any(line.split()[:2] == ["dense/MatMul", "MatMul"] for line in lines)
    assert '"cluster_dense"' in (tmp_path / "g.dot").read_text()
    svg = ET.parse(tmp_path / "g.svg").getroot()
    assert svg.tag.endswith("svg") and "dense/MatMul" in (tmp_path / "g.svg").read_text()
    brief = _cli("inspect", model_path, "--brief")
    assert brief.returncode == 0 and "MatMul" not in brief.stdout
    assert _cli("inspect", model_path, "--max-ops", "2").stdout.rstrip().endswith(
        "... 9 more ops")


def test_inspect_lists_the_kernels_a_run_chooses(model_path):
    result = _cli("inspect", model_path, "--batch", "8")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    start = lines.index("CPU kernels a run of the outputs chooses, inputs' unknown dimensions = 8 "
                        "(op type: implementation x ops):")
    rows = [line.split() for line in lines[start + 1:] if line.startswith("  ")][:3]
    assert rows and all(len(r) == 3 and r[0].endswith(":") and r[2].startswith("x") for r in rows)
    # matmul + bias + relu run as the fusion pass's FusedMatMul
    assert any(r[0] == "FusedMatMul:" for r in rows), rows


def test_run_prints_outputs(model_path, tmp_path):
    np.save(tmp_path / "x.npy", X)
    result = _cli("run", model_path, "--input", f"x={tmp_path / 'x.npy'}")
    assert result.returncode == 0, result.stderr
    expected = _expected(model_path)
    assert f"total: float32 []\n{np.array2string(expected['total'])}\n" in result.stdout
    assert "y: float32 [2, 4]" in result.stdout


def test_the_run_command_leaves_the_compiled_loops_out_unless_asked(model_path, tmp_path):
    """One run per process: loading numba would take longer than the run (`--jit` asks for it)."""
    from graphflow.kernels import cpu as cpu_kernels
    np.save(tmp_path / "x.npy", X)
    code = ("import sys\nfrom graphflow.tools import cli\n"
            "status = cli.main()\nprint('numba loaded:', 'numba' in sys.modules, status)\n")
    env = {k: v for k, v in os.environ.items() if k != "GRAPHFLOW_NO_JIT"}
    seen = {}
    for extra in ([], ["--jit"]):
        argv = ["graphflow", "run", str(model_path), "--input", f"x={tmp_path / 'x.npy'}", *extra]
        done = subprocess.run([sys.executable, "-c", code, *argv[1:]], capture_output=True,
                              text=True, timeout=120, env=env)
        assert done.returncode == 0, done.stderr
        assert "total: float32 []" in done.stdout
        seen[bool(extra)] = done.stdout.splitlines()[-1]
    assert seen[False] == "numba loaded: False 0"
    if cpu_kernels.TABLE.feature("numba"):  # the small product's compiled loop
        assert seen[True] == "numba loaded: True 0"


def test_run_writes_outputs_from_npz_and_json_inputs(model_path, tmp_path):
    np.savez(tmp_path / "in.npz", x=X)
    out = tmp_path / "out.npz"
    result = _cli("run", model_path, "--input", f"x={tmp_path / 'in.npz'}", "--output", out)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == f"wrote 2 output(s) to {out}"
    expected = _expected(model_path)
    with np.load(out, allow_pickle=False) as saved:
        assert saved["y"].tobytes() == expected["y"].tobytes()
        assert saved["total"] == expected["total"]
    result = _cli("run", model_path, "--input", "x=[[1, 2, 3], [-1, 0.5, 0]]", "--outputs",
                  "total", "--output", out)
    assert result.returncode == 0, result.stderr
    with np.load(out, allow_pickle=False) as saved:
        assert saved.files == ["total"] and saved["total"] == expected["total"]


def test_run_text_feeds_code_points_and_prints_characters(tmp_path):
    codes = tf.placeholder(tf.int32, [None], name="codes")
    shifted = tf.add(codes, 1, name="shifted")
    path = tmp_path / "shift.gfz"
    tf.save(str(path), {"codes": codes}, {"shifted": shifted, "count": tf.size(codes)})
    result = _cli("run", path, "--text", "--input", 'codes="HAL"')
    assert result.returncode == 0, result.stderr
    assert "shifted: IBM" in result.stdout.splitlines()
    assert "count: int32 []" in result.stdout     # not a vector: printed as an array
    plain = _cli("run", path, "--input", "codes=[72, 65]")
    assert plain.returncode == 0 and "shifted: int32 [2]" in plain.stdout


@pytest.mark.parametrize("args, message", [
    (["run", "{model}"], "missing --input for ['x']"),
    (["run", "{model}", "--input", "z=[1]"], "the graph has no input 'z'; its inputs are ['x']"),
    (["run", "{model}", "--input", "x"], "expected NAME=FILE.npy"),
    (["run", "{model}", "--input", "x=nothing.npy"], "is neither a file nor a JSON value"),
    (["run", "{model}", "--input", "x=[[1, 2]]"], "cannot feed a value of shape (1, 2)"),
    (["run", "{model}", "--input", "x=[[1, 2, 3]]", "--outputs", "nope"], "unknown output(s)"),
    (["inspect", "{tmp}/absent.gfz"], "absent.gfz: no such file"),
    (["inspect", "{tmp}"], "is a directory"),
    (["inspect", "{tmp}/broken.gfz"], "not a valid zip archive"),
])
def test_bad_input_gives_one_line_errors(model_path, tmp_path, args, message):
    (tmp_path / "broken.gfz").write_bytes(model_path.read_bytes()[:100])
    args = [a.format(model=model_path, tmp=tmp_path) for a in args]
    result = _cli(*args)
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr
    assert result.stderr.startswith(f"graphflow {args[0]}: error: ")
    assert message in result.stderr


def test_usage_errors_exit_with_status_2(model_path):
    assert _cli().returncode == 2
    assert _cli("frobnicate", model_path).returncode == 2
    assert _cli("optimize", model_path).returncode == 2  # -o is required
    assert _cli("--version").stdout.strip() == f"graphflow {tf.__version__}"


def test_optimize_writes_a_smaller_graph_that_computes_the_same(model_path, tmp_path):
    out = tmp_path / "fast.gfz"
    result = _cli("optimize", model_path, "-o", out, "--report")
    assert result.returncode == 0, result.stderr
    first = result.stdout.splitlines()[0]
    # 11 ops: the file leaves out global_variables_initializer's NoOp, which no output needs
    assert first.startswith(f"{model_path}: 11 ops -> {out}: ")
    assert "pass" in result.stdout and "total" in result.stdout  # the report table
    fast = tf.load(str(out))
    assert fast.graph.num_ops() < 11
    got, want = fast.run({"x": X}), _expected(model_path)
    for name in want:
        np.testing.assert_allclose(got[name], want[name], rtol=1e-6)
    bad = _cli("optimize", model_path, "-o", out, "--passes", "no_such_pass")
    assert bad.returncode == 2 and "no_such_pass" in bad.stderr


def test_optimize_without_an_optimizer_says_so(model_path, tmp_path, monkeypatch, capsys):
    monkeypatch.delattr(tf, "optimize", raising=False)
    monkeypatch.setitem(sys.modules, "graphflow.optimizer_passes", None)  # import fails
    status = cli.main(["optimize", str(model_path), "-o", str(tmp_path / "o.gfz")], out=io.StringIO())
    assert status == 2
    assert "graph optimization is not available" in capsys.readouterr().err
    assert not (tmp_path / "o.gfz").exists()


def test_console_script_is_installed(model_path):
    script = shutil.which("graphflow")
    assert script is not None, "the `graphflow` console script is not on PATH (pip install -e .)"
    result = subprocess.run([script, "inspect", str(model_path), "--brief"], capture_output=True,
                            text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert "inputs:" in result.stdout


@pytest.mark.parametrize("args", [["inspect", "m.gfz", "--max-ops", "-1"],
                                  ["inspect", "m.gfz", "--max-ops", "lots"],
                                  ["profile", "m.gfz", "--runs", "0"],
                                  ["profile", "m.gfz", "--top", "-3"],
                                  ["export-onnx", "m.gfz", "m.onnx", "--opset", "-1"]])
def test_nonsense_numeric_options_are_usage_errors(args, capsys):
    with pytest.raises(SystemExit) as info:
        cli.main(args)
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert "must be at least" in err or "whole number" in err
