"""graphflow -> ONNX -> graphflow for every op case in tests/op_cases: the case's graph is exported
(the full ONNX checker runs), imported back, and both graphs run on the case's inputs with equal
outputs; the exported model also runs in onnxruntime with the same outputs.

Nothing is skipped silently. A case whose graph holds an op with no ONNX form fails the export
with a clear error, and the test checks exactly that: every op the exporter names must say so on
its record (`onnx={"none": reason}`, `registry.OpDef`), and the error must quote that reason; a
case listed in `NOT_EXPORTABLE_CASES` (an op that exports, refused for that case's attributes)
must still be refused, so a listed case that starts to export fails here and the list cannot go
stale. That every op type states an ONNX form or a reason is `test_export_facts.py`'s check.
The same holds for `ORT_MISSING_KERNELS`: onnxruntime kernels its CPU provider lacks, checked
by `test_onnxruntime_still_lacks_the_listed_kernels`.
"""

import numpy as np
import onnx
import onnxruntime as ort
import pytest

import graphflow as tf
from graphflow.interop import onnx as gf_onnx
from graphflow.interop.onnx import export_facts, exporter
from graphflow.ops import registry
from tests.op_cases import all_cases

CASES = all_cases()

# case name -> why its op (which exports in general) is refused for this case's attributes
NOT_EXPORTABLE_CASES = {
    **{f"{op}[strings x {other}]": "Equal of strings needs opset 19; the round trip exports at 17 "
       "(tests/interop/onnx/test_export.py exports it at 19)"
       for op in ("Equal", "NotEqual") for other in ("strings", "scalar string")},
    "GatherV2[[2, 4, 3]x[2, 5]]": "Gather with batch_dims: ONNX Gather has no batch dims",
    "StridedSlice[[2, 3, 4]]": "a StridedSlice with an ellipsis is not mapped",
    "MirrorPad[[3, 2]]": "SYMMETRIC mirror padding: ONNX Pad has reflect and edge modes only",
    "Einsum[broadcast ellipsis]": "ONNX Einsum needs every '...' to stand for the same number of "
                                  "dims (no broadcasting between operands)",
    **{f"{kind}[axes fed {axes},keepdims=False]": "a reduction over axes read at run time without "
       "keepdims has an unknown rank, and ONNX graph outputs need one"
       for kind in ("Sum", "Mean", "Max", "Min", "Prod") for axes in ([0, 2],)},
    "Roll[int32, fed shift]": "Roll exports as Slice + Concat for constant shifts only",
    "All[axes fed]": "a reduction over axes read at run time without keepdims has an unknown "
                     "rank, and ONNX graph outputs need one",
}

# cases exported at a newer opset than the default, and why
OPSET_FOR_CASE = {
    f"{kind}[axes fed {axes},keepdims=True]": 18  # ReduceMean/Max/Min/Prod take axes as an input
    for kind in ("Mean", "Max", "Min", "Prod")   # (read at run time) from opset 18 on
    for axes in (-1, [2, 0, -1])
}

# ONNX op type -> why onnxruntime's CPU provider cannot run it here (op cases are mostly float64)
_NO_F64 = "onnxruntime's CPU provider has no float64 kernel for it"
ORT_MISSING_KERNELS = {"Conv": _NO_F64, "AveragePool": _NO_F64, "Tan": _NO_F64, "Erf": _NO_F64,
                       "Elu": _NO_F64, "Selu": _NO_F64, "Softplus": _NO_F64, "Softsign": _NO_F64,
                       "Det": _NO_F64, "Acos": _NO_F64, "Asin": _NO_F64, "Atan": _NO_F64,
                       "Acosh": _NO_F64, "Asinh": _NO_F64, "Atanh": _NO_F64, "Cosh": _NO_F64,
                       "Sinh": _NO_F64,
                       "Resize": "onnxruntime's Resize has no float64 nearest kernel",
                       "OneHot": "onnxruntime has no OneHot kernel for float64 values",
                       "Unique": "onnxruntime's Unique has no int32 kernel", "LRN": _NO_F64}

# outputs compared with these (rtol, atol) per dtype; other dtypes exactly. Composite exports
# (e.g. log(1 + x) for Log1p, the cross entropies) round differently in the last bits, and ONNX
# keeps float attributes (LeakyRelu's alpha, Selu's constants, epsilons) as float32, which bounds
# float64 agreement near 3e-8 relative.
TOLERANCE = {np.float16: (1e-3, 1e-3), np.float32: (1e-5, 1e-6), np.float64: (1e-7, 1e-9)}
ORT_TOLERANCE = {np.float16: (1e-3, 1e-3), np.float32: (1e-4, 1e-5), np.float64: (1e-7, 1e-9)}


def _outputs(out):
    return list(out) if isinstance(out, (list, tuple)) else [out]


def _build(case):
    graph = tf.Graph()
    with graph.as_default():
        placeholders = [tf.placeholder(tf.as_dtype(x.dtype), shape=x.shape, name=f"in{i}")
                        for i, x in enumerate(case.inputs)]
        outs = _outputs(case.build(*placeholders))
    inputs = {f"in{i}": p for i, p in enumerate(placeholders)}
    feeds = {f"in{i}": x for i, x in enumerate(case.inputs)}
    return graph, inputs, {f"out{i}": t for i, t in enumerate(outs)}, feeds


def _compare(got, want, tolerance, what):
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype, f"{what}: dtype {got.dtype}, graphflow gave {want.dtype}"
    assert got.shape == want.shape, f"{what}: shape {got.shape}, graphflow gave {want.shape}"
    if want.dtype.type in tolerance:
        rtol, atol = tolerance[want.dtype.type]
        np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, err_msg=what)
    else:
        np.testing.assert_array_equal(got, want, err_msg=what)


def _missing_ops(graph, outputs):
    from graphflow.framework.graph import needed_ops
    with graph.as_default():
        return {op.type for op in exporter._without_converter(
            needed_ops([t.op for t in outputs.values()]))}


def _states_no_onnx(op_type):
    fact = registry.lookup(op_type).onnx
    return isinstance(fact, dict) and set(fact) == {"none"} and export_facts.why_not(op_type) == fact["none"]


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_round_trip(case):
    graph, inputs, outputs, feeds = _build(case)
    missing = _missing_ops(graph, outputs)
    if missing or case.name in NOT_EXPORTABLE_CASES:
        stated = {t for t in missing if _states_no_onnx(t)}
        assert missing == stated, (
            f"ops without an ONNX export whose record does not say why: {sorted(missing - stated)}")
        with graph.as_default(), pytest.raises(gf_onnx.ExportError) as info:
            gf_onnx.build_model(outputs, inputs=inputs)
        for op_type in missing:  # the error names every such op, and why its record says it has none
            assert f"({op_type})" in str(info.value)
            assert registry.lookup(op_type).onnx["none"] in str(info.value)
        return
    with graph.as_default():
        model = gf_onnx.build_model(outputs, inputs=inputs,
                                    opset=OPSET_FOR_CASE.get(case.name, exporter.DEFAULT_OPSET))
        with tf.Session() as sess:
            want = dict(zip(outputs, sess.run(list(outputs.values()),
                                              {inputs[k]: v for k, v in feeds.items()})))
    onnx.checker.check_model(model, full_check=True)
    imported = gf_onnx.import_model(model)
    try:
        got = imported.run(feeds)
    finally:
        imported.close()
    for name in outputs:
        _compare(got[name], want[name], TOLERANCE, f"{case.name} {name} after the round trip")
    _check_onnxruntime(case, model, feeds, want)


def _check_onnxruntime(case, model, feeds, want):
    try:
        runner = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
        got = runner.run(list(want), {k: v for k, v in feeds.items()
                                      if k in {i.name for i in runner.get_inputs()}})
    except Exception as exc:  # noqa: BLE001 (only a listed missing kernel is accepted)
        text = str(exc)
        if "NOT_IMPLEMENTED" not in text:
            raise
        kernel = text.split("implementation for ")[1].split("(")[0]
        assert kernel in ORT_MISSING_KERNELS, f"onnxruntime lacks {kernel}, which is not listed"
        return
    for name, value in zip(want, got):
        _compare(value, want[name], ORT_TOLERANCE, f"{case.name} {name} in onnxruntime")


def _one_node_model(op_type, inputs, attrs=None):
    helper = onnx.helper
    nodes = [helper.make_node(op_type, [n for n, _ in inputs], ["y"], **(attrs or {}))]
    infos = [helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(v.dtype), v.shape)
             for n, v in inputs]
    out = helper.make_tensor_value_info("y", onnx.TensorProto.DOUBLE, None)
    graph = helper.make_graph(nodes, "g", infos, [out])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def test_onnxruntime_still_lacks_the_listed_kernels():
    x4 = np.ones((1, 1, 4, 4))
    models = {
        "Conv": _one_node_model("Conv", [("x", x4), ("w", np.ones((1, 1, 2, 2)))]),
        "AveragePool": _one_node_model("AveragePool", [("x", x4)], {"kernel_shape": [2, 2]}),
        "Resize": _one_node_model("Resize", [("x", x4), ("roi", np.zeros(0)),
                                             ("scales", np.array([1, 1, 2, 2], np.float32))],
                                  {"mode": "nearest"}),
        "OneHot": _one_node_model("OneHot", [("i", np.array([1], np.int64)),
                                             ("d", np.array(3, np.int64)), ("v", np.array([0.0, 1.0]))]),
    }
    for op_type in ("Tan", "Erf", "Elu", "Selu", "Softplus", "Softsign", "Acos", "Asin", "Atan",
                    "Acosh", "Asinh", "Atanh", "Cosh", "Sinh"):
        models[op_type] = _one_node_model(op_type, [("x", np.ones(3))])
    models["Det"] = _one_node_model("Det", [("x", np.eye(3))])
    models["LRN"] = _one_node_model("LRN", [("x", x4)], {"size": 3})
    unique = _one_node_model("Unique", [("x", np.ones(3, np.int32))])
    unique.graph.output[0].type.tensor_type.elem_type = onnx.TensorProto.INT32
    models["Unique"] = unique
    assert set(models) == set(ORT_MISSING_KERNELS)
    for op_type, model in models.items():
        with pytest.raises(Exception, match="NOT_IMPLEMENTED") as info:
            ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
        assert op_type in str(info.value), f"onnxruntime now runs float64 {op_type}: unlist it"


def test_the_case_lists_name_existing_cases():
    names = {case.name for case in CASES}
    assert set(NOT_EXPORTABLE_CASES) <= names, set(NOT_EXPORTABLE_CASES) - names
    assert set(OPSET_FOR_CASE) <= names, set(OPSET_FOR_CASE) - names
