"""Every op case whose ops all have a TensorFlow form exports (or raises ExportError, TensorFlow's
op lacking the dtype), and the GraphDef imports back into graphflow with the same values: the
exporter and importer checked over the whole op table without TensorFlow (the live test in
test_tf_live.py also runs each GraphDef in TensorFlow)."""

import pathlib
import sys

import numpy as np

import graphflow as tf
from graphflow.interop.tensorflow import import_graph_def, op_table
from graphflow.interop.tensorflow.exporter import ExportError

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2]))
from op_cases import all_cases  # noqa: E402

RANDOM_OPS = frozenset(("RandomStandardNormal", "RandomUniform", "RandomUniformInt",
                        "TruncatedNormal", "RandomShuffle", "Multinomial", "RandomGamma",
                        "RandomPoisson", "RandomPoissonV2", "ParameterizedTruncatedNormal",
                        "LogUniformCandidateSampler", "UniformCandidateSampler"))


def _build(case):
    graph = tf.Graph()
    with graph.as_default():
        placeholders = [tf.placeholder(tf.as_dtype(x.dtype), x.shape, name=f"in{j}")
                        for j, x in enumerate(case.inputs)]
        out = case.build(*placeholders)
        outs = list(out) if isinstance(out, (list, tuple)) else [out]
        outs = [tf.identity(t, name=f"out{j}") for j, t in enumerate(outs)]
    return graph, placeholders, outs


def test_op_cases_export_and_import_back():
    checked, refused, problems = 0, 0, []
    for case in all_cases():
        try:
            graph, placeholders, outs = _build(case)
        except Exception:  # noqa: BLE001 - a case graphflow refuses to build is its own test's
            continue
        ops = graph.get_operations()
        if any(op_table.for_export(op.type) is None for op in ops):
            continue
        feeds = dict(zip(placeholders, case.inputs))
        with graph.as_default(), tf.Session() as sess:
            try:
                want = sess.run(outs, feeds)
            except Exception:  # noqa: BLE001 - cases that expect a run-time error
                continue
        try:
            graph_def = graph.as_graph_def()
        except ExportError:
            refused += 1
            continue
        except Exception as exc:  # noqa: BLE001 - collected: an exporter bug
            problems.append(f"{case.name}: export raised {type(exc).__name__}: {exc}")
            continue
        random = any(op.type in RANDOM_OPS for op in ops)
        try:
            with tf.Graph().as_default(), tf.Session() as sess:
                # allow_io: the cases include ReadFile and WriteFile, on the test's own files
                import_graph_def(graph_def, name="", allow_io=True)
                got = sess.run([f"out{j}:0" for j in range(len(outs))],
                               {f"in{j}:0": x for j, x in enumerate(case.inputs)})
            for g, w in zip(got, want):
                g, w = np.asarray(g), np.asarray(w)
                assert g.shape == w.shape and g.dtype == w.dtype, (g.shape, w.shape)
                if not random:
                    if w.dtype.kind in "OSU":
                        assert g.tolist() == w.tolist()
                    else:
                        np.testing.assert_allclose(g, w, rtol=1e-6, atol=1e-6)
            checked += 1
        except Exception as exc:  # noqa: BLE001 - collected and reported together
            problems.append(f"{case.name}: {type(exc).__name__}: {str(exc)[:300]}")
    assert not problems, f"{len(problems)} op cases fail (checked {checked}):\n" + \
        "\n".join(problems)
    assert checked > 400, (checked, refused)
