"""graphflow.interop.onnx.export_facts: the exporter's table is derived from the op records'
`onnx` facts. Every registered op type either exports (an ONNX op, or a converter that exists)
or states why not; a fact naming a missing converter, or no fact at all, is caught here and
refused by the exporter with a clear error; an op stated unexportable is refused quoting why."""

import numpy as np
import onnx
import onnxruntime as ort
import pytest

import graphflow as tf
from graphflow.interop import onnx as gf_onnx
from graphflow.interop.onnx import export_facts, exporter
from graphflow.ops import elementwise_spec, registry


def _facts():
    return {t: registry.lookup(t).onnx for t in registry.registered_types()}


def test_every_op_type_exports_or_states_why_not():
    problems = {}
    for op_type in registry.registered_types():
        try:
            fn = export_facts.converter_for(op_type)
        except export_facts.FactError as exc:
            problems[op_type] = str(exc)
            continue
        if fn is None:
            reason = export_facts.why_not(op_type)
            assert isinstance(reason, str) and len(reason) > 10, (op_type, reason)
    assert not problems, "\n".join(f"{t}: {why}" for t, why in sorted(problems.items()))


def test_every_named_converter_is_named_by_a_record():
    named = {f["converter"] for f in _facts().values() if isinstance(f, dict) and "converter" in f}
    unused = sorted(set(export_facts.named_converters()) - named)
    assert not unused, f"converters no op record names (remove them, or name them): {unused}"


def test_one_node_facts_name_onnx_ops_and_the_ops_own_attrs():
    for op_type, fact in _facts().items():
        if isinstance(fact, str):
            fact = {"op": fact}
        if not isinstance(fact, dict) or "op" not in fact or "converter" in fact:
            continue
        assert onnx.defs.has(fact["op"]), f"{op_type}: ONNX has no op {fact['op']}"
        schema = onnx.defs.get_schema(fact["op"])
        for name, onnx_name in fact.get("attrs", {}).items():
            assert name in registry.lookup(op_type).attr_types, f"{op_type} has no attr {name}"
            assert onnx_name in schema.attributes, f"ONNX {fact['op']} has no attr {onnx_name}"


def test_the_elementwise_rows_carry_the_facts_of_their_op_defs():
    for row in elementwise_spec.ROWS:
        if row.custom:  # the OpDef, written elsewhere, declares its own
            assert row.onnx is None, f"{row.op}: a custom row's ONNX fact belongs on its OpDef"
            continue
        assert row.onnx is not None, f"row {row.op} states no ONNX form"
        assert registry.lookup(row.op).onnx == row.onnx


def test_the_derived_table_is_what_the_exporter_uses():
    table = exporter.all_converters()
    for op_type, fact in _facts().items():
        exports = not (isinstance(fact, dict) and "none" in fact)
        assert (op_type in table) == exports, op_type
        if isinstance(fact, dict) and "converter" in fact:
            assert table[op_type] is export_facts.named_converters()[fact["converter"]]


@pytest.fixture
def restore_fact():
    saved = {}

    def set_fact(op_type, fact):
        op_def = registry.lookup(op_type)
        saved.setdefault(op_type, op_def.onnx)
        op_def.onnx = fact
    yield set_fact
    for op_type, fact in saved.items():
        registry.lookup(op_type).onnx = fact


@pytest.mark.parametrize("fact, message", [
    ({"converter": "no_such_converter"}, "names the converter 'no_such_converter', which"),
    (None, "declares no ONNX fact"),
    ({"none": ""}, "malformed ONNX fact"),
    ({"op": "Relu", "extra": 1}, "malformed ONNX fact"),
])
def test_a_bad_fact_is_caught_and_refused_clearly(restore_fact, fact, message):
    restore_fact("Relu", fact)
    with pytest.raises(export_facts.FactError, match=message):
        export_facts.converter_for("Relu")
    assert message in export_facts.why_not("Relu")
    x = tf.placeholder(tf.float32, [3], name="x")
    y = tf.nn.relu(x, name="act")
    with pytest.raises(gf_onnx.ExportError, match=r"'act' \(Relu\).*" + message.split("'")[0]):
        gf_onnx.build_model({"y": y}, inputs={"x": x})


@pytest.mark.parametrize("build, op_type", [
    (lambda x: x + tf.random_uniform([3]), "RandomUniform"),
    (lambda x: tf.lgamma(x), "Lgamma"),
    (lambda x: tf.cumprod(x), "Cumprod"),
    (lambda x: tf.matrix_inverse(x[:, None] + tf.eye(3)), "MatrixInverse"),
])
def test_an_op_stated_unexportable_is_refused_quoting_its_reason(build, op_type):
    x = tf.placeholder(tf.float32, [3], name="x")
    y = build(x)
    with pytest.raises(gf_onnx.ExportError) as info:
        gf_onnx.build_model({"y": y}, inputs={"x": x})
    reason = registry.lookup(op_type).onnx["none"]
    assert f"({op_type})" in str(info.value) and reason in str(info.value)
    assert "test_export_facts.py" in str(info.value)  # the user's line


def test_one_node_facts_with_attrs_export_and_run(rng):
    x = tf.placeholder(tf.float32, [2, 3, 4], name="x")
    outs = {"softmax": tf.nn.softmax(x, axis=1), "log_softmax": tf.nn.log_softmax(x),
            "transpose": tf.transpose(x, [2, 0, 1]), "default_perm": tf.transpose(x),
            "concat": tf.concat([x, x], axis=-1), "det": tf.matrix_determinant(x[:, :, :3]),
            "range": tf.range(0, 5, 2)}
    model = gf_onnx.build_model(outs, inputs={"x": x})
    onnx.checker.check_model(model, full_check=True)
    feeds = rng.standard_normal((2, 3, 4)).astype(np.float32)
    runner = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    got = runner.run(list(outs), {"x": feeds})
    want = tf.Session().run(list(outs.values()), {x: feeds})
    for name, g, w in zip(outs, got, want):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6, err_msg=name)
