"""Hostile and damaged graph documents: every problem is a GraphFormatError with a clear message
(wrong version, unknown op types and attrs, dangling inputs, duplicate names, cycles, declared
shapes/dtypes that disagree with the OpDefs, deep nesting), plus a fuzzer over bytes and JSON."""

import io
import json
import random
import zipfile

import numpy as np
import pytest

import graphflow as tf
from graphflow.framework.errors import GraphFormatError


def _write(path, doc, tensors=None, raw_json=None):
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("graph.json", raw_json if raw_json is not None else json.dumps(doc))
        if tensors is not None:
            zf.writestr("tensors.npz", tensors)


def _op(name, op_type, inputs=(), attrs=None, outputs=(("float32", [2]),), **extra):
    entry = {"name": name, "type": op_type, "inputs": list(inputs),
             "outputs": [list(o) for o in outputs]}
    if attrs is not None:
        entry["attrs"] = attrs
    entry.update(extra)
    return entry


def _doc(ops, **fields):
    doc = {"format": "graphflow-graph", "version": 1, "ops": ops,
           "signatures": {"inputs": {}, "outputs": {}}}
    doc.update(fields)
    return doc


X = _op("x", "Placeholder", attrs={"dtype": "float32", "shape": {"tuple": [2]}})


def _load_doc(tmp_path, doc, **kw):
    path = str(tmp_path / "g.gfz")
    _write(path, doc, **kw)
    return tf.load(path)


def test_hand_written_document_loads_and_runs(tmp_path):
    doc = _doc([_op("y", "Identity", ["x:0"]), X],  # any order: sorted topologically
               signatures={"inputs": {"x": {"tensor": "x:0", "dtype": "float32", "shape": [2]}},
                           "outputs": {"y": {"tensor": "y:0", "dtype": "float32", "shape": [2]}}})
    model = _load_doc(tmp_path, doc)
    assert [op.name for op in model.graph.get_operations()] == ["x", "y"]
    assert model.run({"x": [1.0, 2.0]})["y"].tolist() == [1.0, 2.0]


@pytest.mark.parametrize("doc, message", [
    (_doc([X], version=2), "format version 2 by a newer graphflow"),
    (_doc([X], version=0), "invalid format version 0"),
    (_doc([X], version="1"), "invalid format version '1'"),
    (dict(_doc([X]), format="tensorflow"), "not a graphflow graph"),
    (_doc([X], extra_field=1), "unknown fields \\['extra_field'\\]"),
    (_doc([_op("a", "NoSuchOp")]), "unknown op type 'NoSuchOp'"),
    (_doc([X, _op("y", "Identity", ["nope:0"])]), "refers to the op 'nope'"),
    (_doc([X, _op("y", "Identity", ["x:1"])]), "which has 1 outputs"),
    (_doc([X, _op("y", "Identity", ["x"])]), "is not a tensor name"),
    (_doc([X, _op("y", "Identity", ["x:0"], control_inputs=["ghost"])]),
     "control input 'ghost'"),
    (_doc([X, X]), "op name 'x' appears twice"),
    (_doc([X, _op("x:1", "Identity", ["x:0"])]), "invalid op name"),
    (_doc([_op("a", "Identity", ["b:0"]), _op("b", "Identity", ["a:0"])]),
     "cycle: a -> b -> a|cycle: b -> a -> b"),
    (_doc([_op("a", "Identity", ["a:0"])]), "cycle: a -> a"),
    (_doc([X, _op("n", "NoOp", outputs=(), control_inputs=["m"]),
           _op("m", "NoOp", outputs=(), control_inputs=["n"])]), "cycle"),
    (_doc([X, _op("y", "Identity", ["x:0"], attrs={"evil": 1})]),
     "attr\\(s\\) \\['evil'\\] are not attrs of op type 'Identity'"),
    (_doc([_op("x", "Placeholder", attrs={"dtype": "float99", "shape": None})]),
     "attr .dtype. must be a dtype"),
    (_doc([_op("x", "Placeholder", attrs={"dtype": "float32", "shape": {"dict": {"a": 1}}})]),
     "attr .shape. must be none.shape"),
    (_doc([_op("x", "Placeholder", attrs={"dtype": "float32", "shape": {"tuple": [2]}},
               outputs=[("float64", [2])])]), "declares float64 \\(2,\\) but the op computes"),
    (_doc([_op("x", "Placeholder", attrs={"dtype": "float32", "shape": {"tuple": [2]}},
               outputs=[("float32", [3])])]), "declares float32 \\(3,\\)"),
    (_doc([_op("x", "Placeholder", attrs={"dtype": "float32", "shape": None},
               outputs=[("float32", [2 ** 60])])]), "invalid dimension"),
    (_doc([_op("x", "Placeholder", attrs={"dtype": "float32", "shape": None},
               outputs=[("float32", [1] * 100)])]), "rank 100 exceeds"),
    (_doc([X, _op("y", "Identity", ["x:0"], outputs=[])]), "declares 0 outputs"),
    (_doc([_op("c", "Const", attrs={"value": {"tensor": {"dtype": "float32", "shape": [10 ** 12],
                                                           "values": [1.0]}}})]),
     "inline values for shape"),
    (_doc([_op("c", "Const", attrs={"value": {"tensor": {"dtype": "object", "shape": [],
                                                           "values": [1]}}})]), "unknown dtype"),
    (_doc([_op("c", "Const", attrs={"value": {"tensor": {"dtype": "float32", "shape": [2],
                                                           "values": [1.0, True]}}})]),
     "float32 tensor holds True"),
    (_doc([_op("c", "Const", attrs={"value": {"tensor": {"dtype": "uint8", "shape": [1],
                                                           "values": [300]}}})]),
     "uint8 tensor holds 300"),
    (_doc([_op("c", "Const", attrs={"value": {"tensor": {"dtype": "float32", "shape": [2],
                                                           "data": "nowhere"}}})]),
     "tensor data 'nowhere' is missing"),
    (_doc([_op("c", "Const", attrs={"value": {"pickle": "gASV"}})]), "unknown value tag"),
    (_doc([_op("c", "Const", attrs={"value": {"float": "1e999"}})]), "expected 'nan'"),
    (_doc([X, _op("y", "Identity", ["x:0"], source=["f.py", "12", "fn"])]),
     "expected \\[filename, line, function\\]"),
    (_doc([X, _op("y", "Identity", ["x:0"], device="/tpu:0")]), "Unknown device"),
    (_doc([X], variables=[{"op": "x", "initializer": None, "trainable": True, "value": None}]),
     "'x' is not a VariableV2 op"),
    (_doc([X], signatures={"inputs": {"x": {"tensor": "y:0", "dtype": "float32", "shape": [2]}}}),
     "'y:0' is not a tensor of the graph"),
    (_doc([X], signatures={"inputs": {"x": {"tensor": "x:0", "dtype": "int32", "shape": [2]}}}),
     "declared int32"),
    (_doc([X], collections={"losses": [{"tensor": "q:0"}]}), "tensor 'q:0' is not in the graph"),
    (_doc([X], collections={"losses": [{"lambda": "x"}]}), "unknown kind"),
    (_doc([X], seed="7"), "field 'seed'"),
    (_doc({"x": X}), "field 'ops': expected list"),
])
def test_bad_documents_are_rejected(tmp_path, doc, message):
    with pytest.raises(GraphFormatError, match=message):
        _load_doc(tmp_path, doc)


def _nested(depth):
    value = 1
    for _ in range(depth):
        value = {"list": [value]}
    return value


@pytest.mark.parametrize("raw, message", [
    (b"[" * 100_000 + b"]" * 100_000, "not valid JSON"),
    (b'{"format": "graphflow-graph", "format": "x"}', "key 'format' twice"),
    (b'{"format": "graphflow-graph", "version": NaN}', "non-standard constant NaN"),
    (b'{"format": "graphflow-graph", "version": 1, "ops": [' + b"\xff" + b"]}", "not UTF-8"),
    (b'{"format": "graphflow-graph", "version": 1' + b'0' * 5000 + b"}", "not valid JSON"),
    (json.dumps(_doc([_op("c", "Const", attrs={"value": _nested(40)})])).encode(),
     "nested deeper than 32"),
    (b"[1, 2]", "must hold a JSON object"),
], ids=["deep", "duplicate-key", "nan", "not-utf8", "huge-int", "deep-attr", "not-object"])
def test_malformed_json_is_rejected(tmp_path, raw, message):
    with pytest.raises(GraphFormatError, match=message):
        _load_doc(tmp_path, None, raw_json=raw)


def test_stored_tensor_must_match_its_declaration(tmp_path):
    buf = io.BytesIO()
    np.savez(buf, **{"t": np.zeros([3], np.float64)})
    doc = _doc([_op("c", "Const", attrs={"value": {"tensor": {"dtype": "float32", "shape": [3],
                                                                "data": "t"}}},
                    outputs=[("float32", [3])])])
    with pytest.raises(GraphFormatError, match="'t' is float64\\[3\\] but the graph declares"):
        _load_doc(tmp_path, doc, tensors=buf.getvalue())


def test_variable_value_must_fit_the_variable(tmp_path):
    buf = io.BytesIO()
    np.savez(buf, **{"v": np.zeros([5], np.float32)})
    var = _op("v", "VariableV2", attrs={"shared_name": "v", "dtype": "float32",
                                        "shape": {"tuple": [2]}})
    doc = _doc([var], variables=[{"op": "v", "initializer": None, "trainable": True,
                                  "value": "v"}])
    with pytest.raises(GraphFormatError, match="stored value is float32\\[5\\]"):
        _load_doc(tmp_path, doc, tensors=buf.getvalue())


# ---------------------------------------------------------------------------- fuzzing
def _valid_file(tmp_path):
    x = tf.placeholder(tf.float32, [None, 3], name="x")
    w = tf.Variable(np.arange(6, dtype=np.float32).reshape(3, 2), name="w")
    big = tf.constant(np.linspace(0, 1, 40, dtype=np.float32).reshape(20, 2), name="big")
    with tf.name_scope("head"):
        y = tf.nn.softmax(tf.matmul(x, w) + tf.reduce_sum(big, axis=0))
    sess = tf.Session()
    sess.run(tf.global_variables_initializer())
    path = str(tmp_path / "valid.gfz")
    tf.save(path, {"x": x}, {"y": y}, session=sess)
    return path


def _loads_or_format_error(path):
    """Loading a damaged file may succeed (harmless damage) or raise GraphFormatError; nothing
    else is allowed to escape."""
    try:
        tf.load(path).close()
        return "ok"
    except GraphFormatError:
        return "error"


def test_random_byte_flips_only_raise_graph_format_errors(tmp_path):
    original = open(_valid_file(tmp_path), "rb").read()
    rng = random.Random(1)
    path = str(tmp_path / "flipped.gfz")
    results = []
    for trial in range(300):
        data = bytearray(original)
        for _ in range(rng.choice([1, 1, 2, 8])):
            data[rng.randrange(len(data))] ^= 1 << rng.randrange(8)
        if trial % 10 == 0:
            data = data[:rng.randrange(len(data))]  # truncated
        with open(path, "wb") as f:
            f.write(data)
        results.append(_loads_or_format_error(path))
    assert results.count("error") > 200  # checksums catch nearly every flip


def _mutate(value, rng, depth=0):
    """A random structural mutation somewhere inside a JSON value."""
    replacements = [None, True, -1, 0, 2 ** 70, 1.5, "", "x:0", "float32", [], {}, [None],
                    {"tuple": [3]}, {"tensor": {}}, {"list": "x"}]
    if isinstance(value, dict) and value and rng.random() < 0.85:
        key = rng.choice(sorted(value))
        if rng.random() < 0.15:
            del value[key]
        else:
            value[key] = _mutate(value[key], rng, depth + 1)
        return value
    if isinstance(value, list) and value and rng.random() < 0.85:
        i = rng.randrange(len(value))
        action = rng.random()
        if action < 0.1:
            value.pop(i)
        elif action < 0.2:
            value.insert(i, rng.choice(value))
        elif action < 0.25:
            value[i], value[-1] = value[-1], value[i]
        else:
            value[i] = _mutate(value[i], rng, depth + 1)
        return value
    return rng.choice(replacements)


def test_json_mutations_only_raise_graph_format_errors(tmp_path):
    source = _valid_file(tmp_path)
    with zipfile.ZipFile(source) as zf:
        doc_text = zf.read("graph.json")
        tensors = zf.read("tensors.npz")
    rng = random.Random(2)
    path = str(tmp_path / "mutated.gfz")
    outcomes = {"ok": 0, "error": 0}
    for _ in range(400):
        doc = json.loads(doc_text)
        for _ in range(rng.choice([1, 1, 2, 3])):
            doc = _mutate(doc, rng)
        _write(path, None, tensors=tensors, raw_json=json.dumps(doc))
        outcomes[_loads_or_format_error(path)] += 1
    assert outcomes["error"] > 100 and outcomes["ok"] > 10, outcomes


def test_loaded_source_locations_are_plain_text_and_never_opened(tmp_path, monkeypatch):
    import linecache
    secret = tmp_path / "secret.txt"
    secret.write_text("TOP SECRET LINE\n")
    opened = []
    real_getline = linecache.getline
    monkeypatch.setattr(linecache, "getline",
                        lambda f, *a, **k: opened.append(f) or real_getline(f, *a, **k))
    doc = _doc([X, _op("y", "Cast", ["x:0"], attrs={"DstT": "int32"},
                        outputs=(("int32", [2]),), source=[str(secret), 1, "f"])],
               signatures={"inputs": {"x": {"tensor": "x:0", "dtype": "float32", "shape": [2]}},
                           "outputs": {"y": {"tensor": "y:0", "dtype": "int32", "shape": [2]}}})
    model = _load_doc(tmp_path, doc)
    op = model.graph.get_operation_by_name("y")
    text = str(op.source)
    assert text == f"{secret}:1" and "TOP SECRET" not in text
    with pytest.raises(Exception) as info:
        model.run({"x": [[1.0]]})  # a bad feed: its error names the op and its location
    assert "TOP SECRET" not in str(info.value)
    assert str(secret) not in opened
