"""Graph -> document: what a saved graph's JSON records (signatures, variables with and without
Python Variable objects, collections) and what it refuses to write (undeclared or unsupported
attrs), with messages naming the op."""

import numpy as np
import pytest

import graphflow as tf
from graphflow.fileformat.graph_encoder import encode_graph
from graphflow.ops import registry


def test_document_records_signatures_variables_and_collections():
    x = tf.placeholder(tf.float32, [None, 2], name="x")
    w = tf.Variable([[1.0], [2.0]], name="w")
    frozen = tf.Variable(3.0, name="frozen", trainable=False)
    registry.make_op("VariableV2", (), {"shared_name": "raw", "dtype": "int32",
                                          "shape": ()}, name="raw")
    y = tf.matmul(x, w, name="y") * frozen
    tf.add_to_collection("notes", "v1")
    tf.add_to_collection("objects", object())  # not part of a saved graph
    tf.add_to_collection(tf.GraphKeys.LOSSES, y)
    train = tf.no_op(name="train")
    values = {"w": np.array([[5.0], [6.0]], np.float32), "raw": np.array(7, np.int32),
              "unrelated": np.zeros(3)}
    doc, arrays = encode_graph(tf.get_default_graph(), {"x": x}, {"y": y, "train": train}, values)
    assert doc["signatures"] == {
        "inputs": {"x": {"tensor": "x:0", "dtype": "float32", "shape": [None, 2]}},
        "outputs": {"y": {"tensor": "Mul:0", "dtype": "float32", "shape": [None, 1]},
                    "train": {"op": "train"}}}
    assert doc["variables"] == [
        {"op": "w", "initializer": "w/Assign", "trainable": True, "value": "variables/w"},
        {"op": "frozen", "initializer": "frozen/Assign", "trainable": False, "value": None},
        {"op": "raw", "initializer": None, "trainable": False, "value": "variables/raw"}]
    assert sorted(arrays) == ["variables/raw", "variables/w"]
    assert doc["collections"]["notes"] == [{"value": "v1"}]
    assert "objects" not in doc["collections"]
    assert doc["collections"]["losses"] == [{"tensor": "Mul:0"}]
    assert doc["collections"]["trainable_variables"] == [{"variable": "w"}]
    assert [op["name"] for op in doc["ops"]][:2] == ["x", "w/initial_value"]


def test_undeclared_and_unsupported_attrs_are_refused_naming_the_op(tmp_path):
    x = tf.placeholder(tf.float32, [2], name="x")
    y = tf.identity(x, name="y")
    y.op.attrs["note"] = "not declared by Identity"
    with pytest.raises(ValueError, match="'y' \\(Identity\\).*attr\\(s\\) \\['note'\\] are not "
                                         "declared in the OpDef of 'Identity'"):
        tf.save(str(tmp_path / "m.gfz"), {"x": x}, {"y": y})
    del y.op.attrs["note"]
    z = tf.nn.leaky_relu(x, alpha=0.5, name="z")
    z.op.attrs["alpha"] = lambda v: v
    with pytest.raises(TypeError, match="Cannot save attr 'alpha' of 'z' \\(LeakyRelu\\)"):
        tf.save(str(tmp_path / "m.gfz"), {"x": x}, {"z": z})
    assert not (tmp_path / "m.gfz").exists()
