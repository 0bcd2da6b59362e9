"""GraphDefs made by TensorFlow (tests/fixtures/tensorflow/graphs, by make_graphs.py) import into
graphflow and compute TensorFlow's outputs on the recorded inputs, TF1 dataflow control flow
(Switch/Merge conds, Enter/Exit frames, TensorArrays of dynamic_rnn) raised into If/While."""

import pathlib

import numpy as np
import pytest

import graphflow as tf
from graphflow.framework.errors import GraphFormatError

GRAPHS = pathlib.Path(__file__).resolve().parents[2] / "fixtures" / "tensorflow" / "graphs"


def run_fixture(path, name=""):
    from graphflow.interop.tensorflow.graph_io import load_graph_def
    data = np.load(GRAPHS / (path.split(".")[0] + ".npz"))
    feeds = {k[3:]: data[k] for k in data.files if k.startswith("in/")}
    expected = {k[4:]: data[k] for k in data.files if k.startswith("out/")}
    with tf.Graph().as_default():
        load_graph_def(GRAPHS / path, name=name)
        prefix = f"{name}/" if name else ""
        with tf.Session() as sess:
            got = sess.run([prefix + k for k in expected], {prefix + k: v for k, v in feeds.items()})
    return expected, dict(zip(expected, got))


@pytest.mark.parametrize("path", ["cnn.pb", "cnn.pbtxt", "control_v2.pb", "control_v1.pb",
                                  "nested_v1.pb", "invariant_v1.pb", "rnn_v1.pb"])
def test_fixture_matches_tensorflow(path):
    expected, got = run_fixture(path)
    for key, value in expected.items():
        np.testing.assert_allclose(got[key], value, atol=1e-5, err_msg=key)


def test_fixture_under_a_name_scope():
    expected, got = run_fixture("cnn.pb", name="model")
    np.testing.assert_allclose(got["probs:0"], expected["probs:0"], atol=1e-5)


def test_v1_control_flow_becomes_functional_ops():
    from graphflow.interop.tensorflow.graph_io import load_graph_def
    with tf.Graph().as_default() as g:
        load_graph_def(GRAPHS / "nested_v1.pb", name="")
        types = {op.type for op in g.get_operations()}
        assert "While" in types
        assert not types & {"Switch", "Merge", "Enter", "Exit", "NextIteration", "LoopCond"}
        # the names the graph's readers use still read: Exit and Merge names become Identities
        assert g.get_tensor_by_name("outer/Exit_1:0").op.type == "Identity"


def test_unrecognised_v1_control_flow_is_one_clear_error():
    from graphflow.interop.tensorflow import import_graph_def
    graph_def = tf.GraphDef.FromString((GRAPHS / "control_v1.pb").read_bytes())
    for node in graph_def.node:
        if node.name == "loop/Exit":
            node.input[0] = "loop/Switch:1"  # an Exit reading the body side of its Switch
    with tf.Graph().as_default():
        with pytest.raises(GraphFormatError, match="bad.pb: .*cannot raise into If/While.*loop/Exit"):
            import_graph_def(graph_def, source="bad.pb")


def test_fixtures_are_small_and_recorded_by_tensorflow():
    total = sum(p.stat().st_size for p in GRAPHS.iterdir())
    assert total < 300_000
    assert str(np.load(GRAPHS / "cnn.npz")["tensorflow"]).startswith("2.")


def test_gfile_read_and_parse():
    graph_def = tf.GraphDef()
    with tf.gfile.GFile(str(GRAPHS / "cnn.pb"), "rb") as f:
        graph_def.ParseFromString(f.read())
    assert any(n.op == "Conv2D" for n in graph_def.node)
    with tf.Graph().as_default():
        probs, x = tf.import_graph_def(graph_def, return_elements=["probs:0", "x:0"])
        assert probs.name == "import/probs:0" and x.op.type == "Placeholder"
