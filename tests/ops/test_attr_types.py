"""Typed attrs (`graphflow/ops/attr_types.py`): every OpDef declares the type of each attr, and the
Python op constructors, the encoder and the graph-file loader check attrs with the same code."""

import json
import zipfile

import numpy as np
import pytest

import graphflow as tf
from graphflow.framework.errors import GraphFormatError
from graphflow.ops import registry
from graphflow.ops.attr_types import AttrType, AttrTypeError, check_attrs, parse_attr_spec
from tests.op_cases import all_cases


def test_every_op_built_by_the_op_cases_holds_only_declared_typed_attrs():
    """Each op case builds its graph through the public API; every op in it (including gradient
    ops) must hold only attrs its OpDef declares, each passing the declared type."""
    checked = set()
    for case in all_cases():
        graph = tf.Graph()
        with graph.as_default():
            inputs = [tf.placeholder(tf.as_dtype(x.dtype), x.shape) for x in case.inputs]
            outputs = case.build(*inputs)
            outputs = list(outputs) if isinstance(outputs, (list, tuple)) else [outputs]
            floats = [t for t in inputs if t.dtype.is_floating]
            if case.grad and floats:
                ys = [o for o in outputs if o.dtype.is_floating]
                if ys:
                    tf.gradients(ys, floats)
        for op in graph.get_operations():
            op_def = registry.lookup(op.type)
            assert set(op.attrs) <= set(op_def.attr_types), (op.type, sorted(op.attrs))
            check_attrs(op_def.attr_types, op.attrs)
            checked.add(op.type)
    assert len(checked) > 60


def test_every_registered_op_def_declares_types_for_its_attrs():
    for op_type in registry.registered_types():
        op_def = registry.lookup(op_type)
        assert isinstance(op_def.attr_types, dict)
        for name, attr_type in op_def.attr_types.items():
            assert isinstance(attr_type, AttrType), (op_type, name)
        assert op_def.attr_names == tuple(op_def.attr_types)


def test_untyped_attr_names_are_refused_when_an_op_is_defined():
    with pytest.raises(TypeError, match="attr_names= is replaced by typed declarations"):
        registry.define("NeverRegistered", lambda inputs, attrs: [], attr_names=("axis",))
    with pytest.raises(ValueError, match="unknown attr type 'integer'"):
        registry.OpDef("NeverRegistered", lambda inputs, attrs: [], attrs="axis:integer")
    with pytest.raises(ValueError, match="is not 'name:type'"):
        registry.OpDef("NeverRegistered", lambda inputs, attrs: [], attrs="axis")


@pytest.mark.parametrize("spec, good, bad", [
    ("bool", [True, False, np.bool_(True)], [0, 1, "false", None, [True]]),
    ("int", [0, -3, 2**63 - 1, np.int64(5)], [True, 1.0, "1", 2**63, [1]]),
    ("int>=1", [1, 7], [0, -1]),
    ("float", [0.5, 2, np.float32(1)], [True, "0.5", None]),
    ("string", ["SAME"], [1, b"x", None]),
    ("enum(SAME,VALID)", ["SAME", "VALID"], ["same", 1]),
    ("dtype", ["float32", tf.int64], ["float99", 3, None]),
    ("shape", [(), [None, 3], tf.TensorShape([2])], [None, [-1], [2**63], [1.5], "3"]),
    ("none|list(int)", [None, [], (1, 2)], [1, ["a"], [True]]),
    ("none|int|list(int)", [None, 0, [0, 1]], ["0", [[0]]]),
    ("tensor", [np.zeros(2, np.float32)], [[1.0], np.array(["a"])]),
    ("dict", [{}, {"a": 1}], [{1: 2}, [1]]),
])
def test_attr_type_language(spec, good, bad):
    types = parse_attr_spec(f"a:{spec}")
    for value in good:
        check_attrs(types, {"a": value})
    for value in bad:
        with pytest.raises(AttrTypeError, match="attr 'a'"):
            check_attrs(types, {"a": value})


def test_python_constructors_refuse_badly_typed_attrs_naming_op_and_attr():
    a = tf.placeholder(tf.float32, [2, 2])
    with pytest.raises(TypeError, match="MatMul op 'mm'.*test_attr_types.py.*attr 'transpose_b' "
                                        "must be a bool, found str 'false'"):
        registry.make_op("MatMul", (a, a), {"transpose_a": False, "transpose_b": "false"},
                         name="mm")
    with pytest.raises(TypeError, match="attr 'keepdims' must be a bool"):
        registry.make_op("Sum", (a,), {"axis": 0, "keepdims": "no"})
    with pytest.raises(TypeError, match="attr 'extra' is not an attr of this op type"):
        registry.make_op("Identity", (a,), {"extra": 1})


def _saved_doc(tmp_path, build):
    graph = tf.Graph()
    with graph.as_default():
        inputs, outputs = build()
        path = str(tmp_path / "ok.gfz")
        tf.save(path, inputs, outputs)
    with zipfile.ZipFile(path) as zf:
        return json.loads(zf.read("graph.json")), zf.read("tensors.npz")


def _load_edited(tmp_path, doc, tensors):
    path = str(tmp_path / "edited.gfz")
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("graph.json", json.dumps(doc))
        zf.writestr("tensors.npz", tensors)
    return tf.load(path)


def _matmul_sum():
    a = tf.placeholder(tf.float32, [2, 2], name="a")
    m = tf.matmul(a, a, transpose_b=True, name="m")
    s = tf.reduce_sum(m, axis=1, keepdims=False, name="s")
    c = tf.concat([s, s], axis=0, name="c")
    return {"a": a}, {"c": c}


@pytest.mark.parametrize("op_name, attr, value, message", [
    ("m", "transpose_b", "false", "attr 'transpose_b' must be a bool, found str 'false'"),
    ("m", "transpose_a", 0, "attr 'transpose_a' must be a bool, found int 0"),
    ("s", "keepdims", "no", "attr 'keepdims' must be a bool"),
    ("s", "axis", {"list": [{"list": [1]}]}, "attr .axis. must be none\\|int\\|list\\(int\\)"),
    ("c", "axis", {"list": [0]}, "attr 'axis' must be an int, found list"),
    ("c", "axis", {"dict": {"a": 1}}, "attr 'axis' must be an int, found dict"),
    ("a", "dtype", "float99", "attr 'dtype' must be a dtype name"),
    ("a", "shape", {"tuple": [2, -2]}, "attr 'shape' must be none\\|shape"),
])
def test_loader_refuses_badly_typed_attrs_naming_op_and_attr(tmp_path, op_name, attr, value,
                                                             message):
    doc, tensors = _saved_doc(tmp_path, _matmul_sum)
    assert _load_edited(tmp_path, doc, tensors).run(
        {"a": np.eye(2, dtype=np.float32)})["c"].tolist() == [1, 1, 1, 1]
    entry = next(op for op in doc["ops"] if op["name"] == op_name)
    entry["attrs"][attr] = value
    with pytest.raises(GraphFormatError, match=f"op '{op_name}' \\(\\w+\\): {message}"):
        _load_edited(tmp_path, doc, tensors)


def test_saving_a_badly_typed_attr_is_refused_before_writing(tmp_path):
    a = tf.placeholder(tf.float32, [2, 2], name="a")
    m = tf.matmul(a, a, name="m")
    m.op.attrs["transpose_b"] = "false"
    with pytest.raises(TypeError, match="Cannot save attr 'transpose_b' of 'm' \\(MatMul\\)"):
        tf.save(str(tmp_path / "m.gfz"), {"a": a}, {"m": m})
    assert not (tmp_path / "m.gfz").exists()
