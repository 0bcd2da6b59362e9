"""Live two-way checks against real TensorFlow (skip unless GRAPHFLOW_TF_PYTHON names a Python
with TensorFlow): graphflow exports -> TensorFlow imports and runs -> the same values (1e-6);
TensorFlow exports (make_graphs.py, MobileNet included) -> graphflow imports -> the same; and every
op case TensorFlow has: graphflow -> GraphDef -> TensorFlow runs it -> GraphDef back into graphflow.
"""

import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest

import graphflow as tf
from tests.tf_reference import tf_python

HERE = pathlib.Path(__file__).resolve().parent
MAKE_GRAPHS = HERE.parents[1] / "fixtures" / "tensorflow" / "make_graphs.py"

pytestmark = pytest.mark.skipif(tf_python() is None, reason="TensorFlow is not installed (set "
                                "GRAPHFLOW_TF_PYTHON to compare with it)")

_RUNNER = """
import sys, glob, os, numpy as np
import tensorflow.compat.v1 as tf
tf.disable_v2_behavior()
for pb in sorted(glob.glob(os.path.join(sys.argv[1], "*.pb"))):
    data = np.load(pb[:-3] + ".npz", allow_pickle=True)  # the test's own files (string arrays)
    gd = tf.GraphDef(); gd.ParseFromString(open(pb, "rb").read())
    outs = [str(x) for x in data["fetches"]]
    try:
        with tf.Graph().as_default():
            tf.import_graph_def(gd, name="")
            with tf.Session() as s:
                if "init" in [n.name for n in gd.node]:
                    s.run("init")
                got = s.run(outs, {k[3:]: data[k] for k in data.files if k.startswith("in/")})
        np.savez(pb[:-3] + ".tf.npz", *got)
    except Exception as e:
        open(pb[:-3] + ".err", "w").write((type(e).__name__ + ": " + str(e))[:2000])
"""


def run_in_tf(directory):
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["TF_CPP_MIN_LOG_LEVEL"] = "3"
    subprocess.run([tf_python(), "-c", _RUNNER, str(directory)], check=True, env=env,
                   capture_output=True, timeout=1200)


def _write_case(directory, key, graph, fetches, feeds):
    from graphflow.interop.tensorflow import export_graph_def
    (directory / f"{key}.pb").write_bytes(export_graph_def(graph).SerializeToString())
    np.savez(directory / f"{key}.npz", fetches=np.array(fetches),
             **{f"in/{k}": v for k, v in feeds.items()})


def test_graphflow_exports_run_in_tensorflow(tmp_path):
    expected = {}
    for key, sign in (("cnn", 1.0), ("control", -1.0)):
        g = tf.Graph()
        with g.as_default():
            x = tf.placeholder(tf.float32, [None, 6, 6, 2], name="x")
            w = tf.Variable(np.random.RandomState(0).randn(3, 3, 2, 4).astype(np.float32), name="w")
            h = tf.nn.relu(tf.nn.conv2d(x, w, [1, 1, 1, 1], "SAME"))
            h = tf.reduce_mean(h, axis=[1, 2])
            if key == "control":
                h = tf.cond(tf.reduce_sum(h) > 0, lambda h=h: h * 2.0, lambda h=h: h - 1.0)
                h = tf.while_loop(lambda i, a: i < 4, lambda i, a: (i + 1, a * 0.5 + 1.0),
                                  [tf.constant(0), h], maximum_iterations=3)[1]
            out = tf.identity(tf.nn.softmax(h), name="out")
            tf.global_variables_initializer()
            feeds = {"x:0": sign * np.random.RandomState(1).rand(2, 6, 6, 2).astype(np.float32)}
            with tf.Session() as sess:
                sess.run("init")
                expected[key] = sess.run(out, feeds)
        _write_case(tmp_path, key, g, ["out:0"], feeds)
    run_in_tf(tmp_path)
    for key, value in expected.items():
        assert not (tmp_path / f"{key}.err").exists(), (tmp_path / f"{key}.err").read_text()
        np.testing.assert_allclose(np.load(tmp_path / f"{key}.tf.npz")["arr_0"], value, atol=1e-6)


def test_tensorflow_exports_import_into_graphflow(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env.update(TF_CPP_MIN_LOG_LEVEL="3", GRAPHFLOW_TF_FIXTURES=str(tmp_path))
    subprocess.run([tf_python(), str(MAKE_GRAPHS)], check=True, env=env, capture_output=True,
                   timeout=1200)
    import time

    from graphflow.interop.tensorflow.graph_io import load_graph_def
    checked, seconds = [], {}
    for pb in sorted(tmp_path.glob("*.pb")):
        start = time.perf_counter()
        data = np.load(pb.with_suffix(".npz"))
        feeds = {k[3:]: data[k] for k in data.files if k.startswith("in/")}
        expected = {k[4:]: data[k] for k in data.files if k.startswith("out/")}
        with tf.Graph().as_default():
            load_graph_def(pb, name="")
            with tf.Session() as sess:
                got = sess.run(list(expected), feeds)
        for (key, value), g in zip(expected.items(), got):
            np.testing.assert_allclose(g, value, atol=1e-5, err_msg=f"{pb.name} {key}")
        checked.append(pb.stem)
        seconds[pb.stem] = round(time.perf_counter() - start, 1)
    print("imported and matched TensorFlow (seconds):", seconds)
    assert {"cnn", "control_v2", "control_v1", "nested_v1", "invariant_v1", "rnn_v1"} <= \
        set(checked)
    assert {"mobilenet", "resnet50"} <= set(checked) or not (tmp_path / "mobilenet.pb").exists()
    assert seconds.get("resnet50", 0) < 60, seconds


RANDOM = frozenset(("RandomStandardNormal", "RandomUniform", "RandomUniformInt", "TruncatedNormal",
                    "RandomShuffle", "Multinomial", "LogUniformCandidateSampler",
                    "UniformCandidateSampler", "RandomGamma", "RandomPoisson",
                    "RandomPoissonV2", "ParameterizedTruncatedNormal",
                    "SampleDistortedBoundingBoxV2"))


def _same(got, want, rtol, atol, random):
    """Values equal to the tolerances; for random ops only the shape and dtype."""
    got, want = np.asarray(got), np.asarray(want)
    if random or got.dtype.kind in "OSU":
        assert got.shape == want.shape and (random or got.tolist() == want.tolist()), \
            f"{got!r} != {want!r}"
        return
    np.testing.assert_allclose(got, want, rtol=rtol, atol=atol)


def op_case_round_trip(directory):
    """Export every op case whose ops all have a TensorFlow form; returns ({key: case},
    {key: graphflow outputs}, skipped counts)."""
    sys.path.insert(0, str(HERE.parents[1]))
    from op_cases import all_cases

    from graphflow.interop.tensorflow import op_table
    from graphflow.interop.tensorflow.exporter import ExportError
    cases, outputs = {}, {}
    skipped = {"no TF form": 0, "TF lacks the dtype": 0, "failed in graphflow": 0}
    for i, case in enumerate(all_cases()):
        g = tf.Graph()
        try:
            with g.as_default():
                phs = [tf.placeholder(tf.as_dtype(x.dtype), x.shape, name=f"in{j}")
                       for j, x in enumerate(case.inputs)]
                out = case.build(*phs)
                outs = list(out) if isinstance(out, (list, tuple)) else [out]
                outs = [tf.identity(t, name=f"out{j}") for j, t in enumerate(outs)]
                if any(op_table.for_export(op.type) is None for op in g.get_operations()):
                    skipped["no TF form"] += 1
                    continue
                feeds = {f"in{j}:0": x for j, x in enumerate(case.inputs)}
                with tf.Session() as sess:
                    outputs[f"c{i}"] = sess.run(outs, {p: x for p, x in zip(phs, case.inputs)})
            _write_case(directory, f"c{i}", g, [t.name for t in outs], feeds)
            case.random = any(op.type in RANDOM for op in g.get_operations())
            cases[f"c{i}"] = case
        except ExportError:  # TensorFlow declares no kernel for the dtype (MaxPool3D on float64)
            skipped["TF lacks the dtype"] += 1
        except Exception:  # noqa: BLE001 - counted: the case's own build or export failed
            skipped["failed in graphflow"] += 1
    return cases, outputs, skipped


def test_op_cases_round_trip_through_tensorflow(tmp_path):
    from graphflow.interop.tensorflow import import_graph_def
    cases, outputs, skipped = op_case_round_trip(tmp_path)
    run_in_tf(tmp_path)
    passed, failed = [], []
    for key, case in cases.items():
        err = tmp_path / f"{key}.err"
        try:
            assert not err.exists(), err.read_text() if err.exists() else ""
            tf_values = np.load(tmp_path / f"{key}.tf.npz", allow_pickle=True)
            for j, value in enumerate(outputs[key]):
                _same(tf_values[f"arr_{j}"], value, case.rtol * 10, max(case.atol, 1e-5),
                      case.random)
            graph_def = tf.GraphDef.FromString((tmp_path / f"{key}.pb").read_bytes())
            with tf.Graph().as_default():
                # allow_io: the op cases include ReadFile, WriteFile and the readers, which
                # really read and write the test's own files
                import_graph_def(graph_def, name="", allow_io=True)
                with tf.Session() as sess:
                    back = sess.run([f"out{j}:0" for j in range(len(outputs[key]))],
                                    {f"in{j}:0": x for j, x in enumerate(case.inputs)})
            for b, value in zip(back, outputs[key]):
                _same(b, value, 1e-6, 1e-6, case.random)
            passed.append(case.name)
        except Exception as exc:  # noqa: BLE001 - collected and reported below
            failed.append((case.name, str(exc).splitlines()[0][:200] if str(exc) else repr(exc)))
    report = (f"op cases: {len(passed)} pass the round trip through TensorFlow, {len(failed)} fail, "
              f"{skipped}")
    print(report)
    for name, why in failed:
        print("  FAIL", name, why)
    assert len(passed) >= 420, report  # 425 of 461 exported cases with TensorFlow 2.21
