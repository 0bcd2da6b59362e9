"""graphflow -> ONNX -> graphflow for every op case in tests/op_cases: the case's graph is exported
(the full ONNX checker runs), imported back, and both graphs run on the case's inputs with equal
outputs; the exported model also runs in onnxruntime with the same outputs.

Nothing is skipped silently. A case whose graph holds an op with no ONNX form fails the export
with a clear error, and the test checks exactly that: every op the exporter names must be in
`NOT_EXPORTABLE` (with the reason), and a case listed in `NOT_EXPORTABLE_CASES` must still be
refused, so a listed op or case that starts to export fails here and the lists cannot go stale.
The same holds for `ORT_MISSING_KERNELS`: onnxruntime kernels its CPU provider lacks, checked
by `test_onnxruntime_still_lacks_the_listed_kernels`.
"""

import numpy as np
import onnx
import onnxruntime as ort
import pytest

import graphflow as tf
from graphflow.interop import onnx as gf_onnx
from graphflow.interop.onnx import exporter
from tests.op_cases import all_cases

CASES = all_cases()

_GRADIENT = "a gradient kernel: ONNX inference graphs hold no gradient ops (the ai.onnx.preview.training " \
    "domain is not implemented by runtimes)"
_TENSOR_ARRAY = "TensorArray state (a resource handle written in place) has no ONNX form; ONNX's " \
    "sequence ops are values, not indexable buffers"
_STRING = "ONNX's string support has no op for this (only StringNormalizer, RegexFullMatch, " \
    "StringConcat, StringSplit with different semantics)"
_CASE = "ONNX's only case change is StringNormalizer: a locale's rules, and 1-D or [1, C] inputs " \
    "only (TF's lower/upper change ASCII letters, any shape)"
_REGEX = "ONNX's RegexFullMatch (opset 20, RE2 syntax) is not mapped yet"
_SUMMARY = "a TensorBoard summary: serialized protobufs, no ONNX meaning"
_IO = "file or image I/O: ONNX graphs have no access to files"
_RANDOM = "random numbers: ONNX's generators draw different numbers, outputs cannot match"
_STATE = "updates a variable: ONNX graphs are pure functions of their inputs"
_NO_ONNX_SPECIAL = "ONNX has no gamma-family special functions (lgamma, digamma, polygamma)"

# op type -> why it has no ONNX export
NOT_EXPORTABLE = {
    "AsString": _STRING, "StringJoin": _STRING, "StringSplit": _STRING, "StringSplitV2": _STRING,
    "StringLength": _STRING, "StringToNumber": _STRING, "StringToHashBucketFast": _STRING,
    "StringLower": _CASE, "StringUpper": _CASE,
    "RegexFullMatch": _REGEX, "StaticRegexFullMatch": _REGEX,
    "ScalarSummary": _SUMMARY, "HistogramSummary": _SUMMARY, "ImageSummary": _SUMMARY,
    "AudioSummary": _SUMMARY, "TextSummary": _SUMMARY, "MergeSummary": _SUMMARY,
    "WriteFile": _IO, "ReadFile": _IO, "DecodePng": _IO, "DecodeBmp": _IO, "DecodeGif": _IO,
    "DecodeJpeg": _IO, "DecodeImage": _IO,
    "ParseExample": "protobuf Example parsing has no ONNX operator",
    "ParseSingleExample": "protobuf Example parsing has no ONNX operator",
    "DecodeRaw": "reinterpreting the bytes of strings as numbers has no ONNX operator",
    "DecodeCSV": "parsing CSV text has no ONNX operator",
    "RandomStandardNormal": _RANDOM, "RandomUniform": _RANDOM, "RandomUniformInt": _RANDOM,
    "TruncatedNormal": _RANDOM, "LogUniformCandidateSampler": _RANDOM,
    "UniformCandidateSampler": _RANDOM, "RandomShuffle": _RANDOM, "Multinomial": _RANDOM,
    "Assign": _STATE, "ApplyGradientDescent": _STATE, "ApplyMomentum": _STATE, "ApplyAdam": _STATE,
    "ApplyRMSProp": _STATE, "ApplyCenteredRMSProp": _STATE, "ApplyAdagrad": _STATE,
    "ApplyAdadelta": _STATE,
    "ListDiff": "value-dependent output (set difference): no ONNX op; not mapped yet",
    "DynamicPartition": "a variable number of value-dependent outputs: no ONNX op; not mapped yet",
    "DynamicStitch": "value-dependent output (ScatterND into a size read from the indices); not "
                     "mapped yet",
    "IteratorGetNext": "reads a tf.data pipeline (host-side Python iterator state)",
    "Print": "logs on the host (a side effect ONNX has no op for)",
    "PrintV2": "logs on the host (a side effect ONNX has no op for)",
    "Assert": "a run-time assertion with a message: ONNX has no failing op",
    "CheckNumerics": "a run-time check that raises with a message: ONNX has no failing op",
    "PyFunc": "calls Python code",
    "FusedElementwise": "built by graphflow's optimizer on its run plans, never in a user's graph "
                        "(export the graph before optimization)",
    "FusedMaxPoolGradReluMask": _GRADIENT,
    "FusedElementwiseSum": "built by graphflow's optimizer on its run plans, never in a user's "
                           "graph (export the graph before optimization)",
    "FusedBatchNormStats": "built by graphflow's optimizer on its run plans, never in a user's "
                           "graph (export the graph before optimization)",
    "FusedBatchNormGradReluMask": _GRADIENT,
    "SparseToDense": "value-dependent output shape with validation of the indices; not mapped yet",
    "SumToShape": "a gradient helper (reduces a broadcast gradient to a shape); not mapped yet",
    "ReducedShape": "a gradient helper (shape arithmetic of reductions); not mapped yet",
    "Conv2DBackpropInput": _GRADIENT, "Conv2DBackpropFilter": _GRADIENT,
    "Conv2DBackpropFilterBias": _GRADIENT,
    "Conv2DBackpropFilterBiasReluMask": _GRADIENT,
    "Conv2DBackpropInputFilter": _GRADIENT,
    "MaxPoolGrad": _GRADIENT, "MaxPoolGradGrad": _GRADIENT, "AvgPoolGrad": _GRADIENT,
    "Conv3DBackpropInputV2": _GRADIENT, "Conv3DBackpropFilterV2": _GRADIENT,
    "MaxPool3DGrad": _GRADIENT, "MaxPool3DGradGrad": _GRADIENT, "AvgPool3DGrad": _GRADIENT,
    "FusedBatchNormGrad": _GRADIENT, "GatherGrad": _GRADIENT, "StridedSliceGrad": _GRADIENT,
    "TileGrad": _GRADIENT, "MirrorPadGrad": _GRADIENT, "ResizeBilinearGrad": _GRADIENT,
    "ResizeNearestNeighborGrad": _GRADIENT, "WhileGrad": _GRADIENT,
    "TensorArrayGradOfRead": _GRADIENT, "TensorArrayGradOfStack": _GRADIENT,
    "TensorArrayGradOfGather": _GRADIENT, "TensorArrayGradOfConcat": _GRADIENT,
    "TensorArrayGradStack": _GRADIENT, "TensorArrayGradRead": _GRADIENT,
    "TensorArrayGradGather": _GRADIENT, "TensorArrayAddGradients": _GRADIENT,
    "TensorArrayZeroGradient": _GRADIENT,
    "TensorArrayV3": _TENSOR_ARRAY, "TensorArrayWriteV3": _TENSOR_ARRAY,
    "TensorArrayReadV3": _TENSOR_ARRAY, "TensorArrayUnstack": _TENSOR_ARRAY,
    "TensorArrayStack": _TENSOR_ARRAY, "TensorArrayScatterV3": _TENSOR_ARRAY,
    "TensorArrayGatherV3": _TENSOR_ARRAY, "TensorArrayConcatV3": _TENSOR_ARRAY,
    "TensorArraySizeV3": _TENSOR_ARRAY,
    "Cumprod": "ONNX has CumProd only from opset 24 on (graphflow exports opsets up to 17 and "
               "onnxruntime has no kernel); exp(cumsum(log x)) fails for x <= 0",
    "MatrixInverse": "ONNX's standard domain has no matrix inverse (only com.microsoft's Inverse "
                     "contrib op)",
    "Cholesky": "ONNX has no Cholesky factorization",
    "Lgamma": _NO_ONNX_SPECIAL, "Digamma": _NO_ONNX_SPECIAL, "Polygamma": _NO_ONNX_SPECIAL,
    **{t: "sorted segment ids give a number of rows read from the ids' values (ids[-1] + 1); not "
          "mapped yet" for t in ("SegmentSum", "SegmentMean", "SegmentMax", "SegmentMin")},
    **{t: "ONNX ScatterND's max/min reductions need opset 18 and run-time lowest/highest fills; "
          "not mapped yet" for t in ("UnsortedSegmentMax", "UnsortedSegmentMin")},
    "Bincount": "a length read from the values (max + 1) and a scatter-add of counts; not mapped yet",
}

# case name -> why its op (which exports in general) is refused for this case's attributes
_QUEUE = "a queue or reader: session state shared across runs and threads, which ONNX has not"
NOT_EXPORTABLE.update({op: _QUEUE for op in (
    "FIFOQueueV2", "PaddingFIFOQueueV2", "RandomShuffleQueueV2", "QueueEnqueueV2",
    "QueueEnqueueManyV2", "QueueDequeueV2", "QueueDequeueManyV2", "QueueDequeueUpToV2",
    "QueueCloseV2", "QueueSizeV2", "QueueIsClosedV2", "WholeFileReaderV2", "TextLineReaderV2",
    "FixedLengthRecordReaderV2", "TFRecordReaderV2", "ReaderReadV2", "ReaderReadUpToV2",
    "ReaderNumRecordsProducedV2", "ReaderNumWorkUnitsCompletedV2", "ReaderResetV2",
    "CountUpTo")})

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
                       "Det": _NO_F64,
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


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_round_trip(case):
    graph, inputs, outputs, feeds = _build(case)
    missing = _missing_ops(graph, outputs)
    listed = {t for t in missing if t in NOT_EXPORTABLE}
    if missing or case.name in NOT_EXPORTABLE_CASES:
        assert missing <= set(NOT_EXPORTABLE), (
            f"ops without an ONNX export that are not listed: {sorted(missing - listed)}")
        with graph.as_default(), pytest.raises(gf_onnx.ExportError) as info:
            gf_onnx.build_model(outputs, inputs=inputs)
        for op_type in missing:  # the error names every such op
            assert f"({op_type})" in str(info.value)
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
    for op_type in ("Tan", "Erf", "Elu", "Selu", "Softplus", "Softsign"):
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


def test_the_lists_name_real_op_types_and_cases():
    from graphflow.ops import registry
    unknown = [t for t in NOT_EXPORTABLE if t not in set(registry.registered_types())]
    assert not unknown, f"NOT_EXPORTABLE names op types graphflow does not have: {unknown}"
    from graphflow.interop.onnx.exporter import all_converters
    exportable = sorted(t for t in NOT_EXPORTABLE if t in all_converters())
    assert not exportable, f"listed as not exportable but now have a converter: {exportable}"
    names = {c.name for c in CASES}
    assert set(NOT_EXPORTABLE_CASES) <= names


def test_the_case_lists_name_existing_cases():
    names = {case.name for case in CASES}
    assert set(NOT_EXPORTABLE_CASES) <= names, set(NOT_EXPORTABLE_CASES) - names
    assert set(OPSET_FOR_CASE) <= names, set(OPSET_FOR_CASE) - names
