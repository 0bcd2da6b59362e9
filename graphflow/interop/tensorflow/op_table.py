"""The op mapping table: one declarative record per TensorFlow op type that is not simply
graphflow's op of the same name.

The cheap default (no record): a TensorFlow op and a graphflow op of the same name, the same
inputs in the same order, attrs of the same names; TensorFlow's type attrs (`T`, `N`, `Tidx`, ...)
are filled from the tensors on export and dropped on import. A record (`OpMapping`) says what
differs:

    OpMapping("Sum", attrs={"keepdims": "keep_dims"}, attr_inputs={1: "axis"})

`attrs` renames graphflow attrs to TensorFlow's; `attr_inputs` lists TensorFlow inputs graphflow
keeps as attrs (exported as Const nodes, read back from constant inputs); `refs` lists the
graphflow attrs that name, by `shared_name`, the variables TensorFlow passes as its first (ref)
inputs; `tf_attrs` are TensorFlow attrs written with these values (and, on import, required to
hold them or their default); `export`/`import_` name a function of `export_rules.py` /
`import_rules.py` for the few ops that need more than the table (variables, control flow,
composites such as DepthwiseConv2dNative). `gf` differs from `tf` for ops TensorFlow and
graphflow name differently (`AddV2` imports as graphflow's `Add`).

Ops that exist only in graphflow (fused ops, gradient helpers, MPI, ...) have no TensorFlow form:
`UNEXPORTABLE` says why, and the exporter lists every such op of a graph in one error.
"""

import dataclasses

from graphflow.interop.tensorflow.signatures import signature
from graphflow.ops import registry


@dataclasses.dataclass(frozen=True)
class OpMapping:
    tf: str
    gf: str = ""
    attrs: dict = dataclasses.field(default_factory=dict)        # graphflow name -> TF name
    attr_inputs: dict = dataclasses.field(default_factory=dict)  # TF input position -> gf attr
    refs: tuple = ()                                             # gf attrs naming ref inputs
    tf_attrs: dict = dataclasses.field(default_factory=dict)     # TF attr -> fixed value
    gf_attrs: dict = dataclasses.field(default_factory=dict)     # gf attr -> value on import
    export: str = ""   # export rule name (export_rules.RULES), "" for the table's generic writer
    import_: str = ""  # import rule name (import_rules.RULES), "" for the generic builder
    exports: bool = True   # graphflow op `gf` is written as TF op `tf`
    imports: bool = True   # TF op `tf` is read as graphflow op `gf`

    def __post_init__(self):
        if not self.gf:
            object.__setattr__(self, "gf", self.tf)


_ACT_GRAD = "tf_activation_grad"
_TF_GRADIENT_HELPERS = [
    *[(t, "Select", _ACT_GRAD) for t in ("ReluGrad", "Relu6Grad", "LeakyReluGrad", "EluGrad",
                                          "SeluGrad")],
    *[(t, "Mul", _ACT_GRAD) for t in ("TanhGrad", "SigmoidGrad", "RsqrtGrad", "ReciprocalGrad",
                                       "InvGrad")],
    *[(t, "RealDiv", _ACT_GRAD) for t in ("SoftplusGrad", "SoftsignGrad", "SqrtGrad")],
    ("ShapeN", "Shape", "tf_shape_n"), ("ConcatOffset", "Add", "tf_concat_offset"),
    ("FusedBatchNormGradV2", "FusedBatchNormGrad", "tf_fused_batch_norm_grad"),
    ("FusedBatchNormGradV3", "FusedBatchNormGrad", "tf_fused_batch_norm_grad"),
    # sparse optimizer updates (import_sparse_apply.py)
    *[(t, "ScatterUpdate", "tf_sparse_apply") for t in ("SparseApplyMomentum",
                                                         "SparseApplyAdagrad", "SparseApplyRMSProp")],
]
_REDUCE = dict(attrs={"keepdims": "keep_dims"}, attr_inputs={1: "axis"}, export="reduce")
_VAR = ("shared_name",)

RECORDS = [
    # constants, inputs, identity
    OpMapping("Const", export="const", import_="const"),
    OpMapping("Placeholder", export="placeholder"),
    OpMapping("Snapshot", gf="Identity", exports=False),
    OpMapping("PreventGradient", gf="Identity", exports=False, import_="drop_message"),
    OpMapping("StopGradient"),
    # arithmetic spelled differently
    OpMapping("AddV2", gf="Add", exports=False),
    OpMapping("BatchMatMulV2", gf="MatMul", attrs={"transpose_a": "adj_x", "transpose_b": "adj_y"},
              export="batch_matmul", exports=False),
    OpMapping("BatchMatMul", gf="MatMul", attrs={"transpose_a": "adj_x", "transpose_b": "adj_y"},
              exports=False),
    OpMapping("BatchMatMulV3", gf="MatMul", attrs={"transpose_a": "adj_x", "transpose_b": "adj_y"},
              exports=False, import_="batch_matmul_v3"),
    OpMapping("MatMul", export="matmul"),
    OpMapping("SelectV2", gf="Select", exports=False, import_="select_v2"),
    OpMapping("Div", gf="RealDiv", exports=False, import_="div"),
    OpMapping("RealDiv", export="real_div"),
    OpMapping("Select", export="select", import_="select"),
    OpMapping("BiasAddV1", gf="BiasAdd", exports=False),
    # reductions: axes are an input in TF, an attr in graphflow
    *[OpMapping(t, **_REDUCE) for t in ("Sum", "Mean", "Prod", "Max", "Min", "All", "Any")],
    OpMapping("ArgMax", attr_inputs={1: "axis"}),
    OpMapping("ArgMin", attr_inputs={1: "axis"}),
    OpMapping("Cumsum", attr_inputs={1: "axis"}),
    OpMapping("Cumprod", attr_inputs={1: "axis"}),
    # shapes and layouts
    OpMapping("Transpose", attr_inputs={1: "perm"}, export="transpose"),
    OpMapping("ConcatV2", attr_inputs={-1: "axis"}),
    OpMapping("ExpandDims", attr_inputs={1: "axis"}),
    OpMapping("Squeeze", attrs={"axis": "squeeze_dims"}),
    OpMapping("ReverseV2", attr_inputs={1: "axis"}),
    OpMapping("GatherV2", attr_inputs={2: "axis"}),
    OpMapping("OneHot", attr_inputs={1: "depth"}),
    OpMapping("MatrixBandPart", attr_inputs={1: "num_lower", 2: "num_upper"}),
    OpMapping("Split", export="split", import_="split"),
    OpMapping("SplitV", gf="Split", exports=False, import_="split_v"),
    OpMapping("Pad", export="pad", import_="pad"),
    OpMapping("PadV2", gf="Pad", exports=False),
    OpMapping("Softmax", export="softmax_axis", gf_attrs={"axis": -1}),
    OpMapping("LogSoftmax", export="softmax_axis", gf_attrs={"axis": -1}),
    OpMapping("SoftmaxCrossEntropyWithLogits", export="softmax_xent",
              gf_attrs={"axis": -1, "labels_stop_gradient": False}),
    # nn ops graphflow builds from its public functions
    OpMapping("DepthwiseConv2dNative", gf="Conv2D", exports=False, import_="depthwise"),
    OpMapping("FusedBatchNormV3", gf="FusedBatchNorm", exports=False, import_="fused_batch_norm"),
    OpMapping("FusedBatchNormV2", gf="FusedBatchNorm", exports=False, import_="fused_batch_norm"),
    OpMapping("FusedBatchNorm", import_="fused_batch_norm"),
    OpMapping("FusedBatchNormGrad", export="fused_batch_norm_grad"),
    # summaries: graphflow keeps the tag as an attr, TensorFlow as a string input
    OpMapping("ScalarSummary", export="tagged_summary", import_="tagged_summary"),
    OpMapping("HistogramSummary", export="tagged_summary", import_="tagged_summary"),
    # variables: graphflow names them by shared_name, TF passes refs
    OpMapping("VariableV2", export="variable", import_="variable"),
    OpMapping("Variable", gf="VariableV2", exports=False, import_="variable"),
    OpMapping("ReadVariableOp", export="read_variable", import_="read_variable"),
    OpMapping("VarHandleOp", gf="VariableV2", exports=False, import_="variable"),
    OpMapping("AssignVariableOp", gf="Assign", exports=False, import_="assign_variable"),
    OpMapping("AssignAddVariableOp", gf="AssignAdd", exports=False, import_="assign_variable"),
    OpMapping("AssignSubVariableOp", gf="AssignSub", exports=False, import_="assign_variable"),
    OpMapping("VarIsInitializedOp", gf="IsVariableInitialized", exports=False,
              import_="assign_variable"),
    *[OpMapping(t, refs=_VAR, export="refs", import_="refs") for t in (
        "Assign", "AssignAdd", "AssignSub", "ScatterAdd", "ScatterSub", "ScatterUpdate",
        "ApplyGradientDescent", "IsVariableInitialized", "CountUpTo")],
    OpMapping("ApplyAdam", refs=("shared_name", "m_name", "v_name"), export="refs", import_="refs"),
    OpMapping("ApplyMomentum", refs=("shared_name", "accum_name"), export="refs", import_="refs"),
    OpMapping("ApplyAdagrad", refs=("shared_name", "accum_name"), export="refs", import_="refs"),
    OpMapping("ApplyAdadelta", refs=("shared_name", "accum_name", "accum_update_name"),
              export="refs", import_="refs"),
    OpMapping("ApplyRMSProp", refs=("shared_name", "ms_name", "mom_name"), export="refs",
              import_="refs"),
    OpMapping("ApplyCenteredRMSProp", refs=("shared_name", "mg_name", "ms_name", "mom_name"),
              export="refs", import_="refs"),
    # functional control flow (TensorFlow 2's If/While with a FunctionDefLibrary)
    OpMapping("If", export="if", import_="if"),
    OpMapping("StatelessIf", gf="If", exports=False, import_="if"),
    OpMapping("While", export="while", import_="while"),
    OpMapping("StatelessWhile", gf="While", exports=False, import_="while"),
    OpMapping("PartitionedCall", gf="Identity", exports=False, import_="call"),
    OpMapping("StatefulPartitionedCall", gf="Identity", exports=False, import_="call"),
    OpMapping("IdentityN", import_="identity_n"),
    # TensorFlow's TensorArrays (handle + flow) read into graphflow's (the flow is the array)
    OpMapping("TensorArrayV3", exports=False, import_="tensor_array"),
    OpMapping("TensorArrayWriteV3", exports=False, import_="tensor_array_write"),
    OpMapping("TensorArrayScatterV3", exports=False, import_="tensor_array_scatter"),
    OpMapping("TensorArrayReadV3", exports=False, import_="tensor_array_read"),
    OpMapping("TensorArrayGatherV3", exports=False, import_="tensor_array_gather"),
    OpMapping("TensorArraySizeV3", exports=False, import_="tensor_array_size"),
    # TensorFlow's gradient helpers in training graphs, built from graphflow ops
    # (import_gradient_ops.py; BroadcastGradientArgs is a graphflow op of that name)
    *[OpMapping(t, gf=gf, exports=False, import_=how) for t, gf, how in _TF_GRADIENT_HELPERS],
]

# graphflow's own op types TensorFlow has no op for, and why (the export error quotes it)
_FUSED = "a graphflow fusion of several ops (export the user's graph, not an optimized plan's copy)"
_GRAD = "a graphflow gradient helper with no TensorFlow op"
UNEXPORTABLE = {
    **dict.fromkeys(("FusedConv2D", "FusedMatMul", "FusedElementwise", "FusedElementwiseSum",
                     "Conv2DBackpropFilterBias", "Conv2DBackpropFilterBiasReluMask",
                     "Conv2DBackpropInputFilter", "FusedBatchNormGradReluMask",
                     "FusedMaxPoolGradReluMask", "FusedBatchNormStats"), _FUSED),
    **dict.fromkeys(("WhileGrad",
                     "TensorArrayAddGradients", "TensorArrayGradGather", "TensorArrayGradOfConcat",
                     "TensorArrayGradOfGather", "TensorArrayGradOfRead", "TensorArrayGradOfStack",
                     "TensorArrayGradRead", "TensorArrayGradStack", "TensorArrayZeroGradient"),
                    _GRAD),
    **dict.fromkeys(("MpiAllgather", "MpiAllgatherGrad", "MpiAllreduce", "MpiAllreduceStart",
                     "MpiAllreduceWait", "MpiBroadcast"), "graphflow's MPI collectives"),
    "IteratorGetNext": "reads a graphflow tf.data pipeline (Python objects)",
    "MakeIterator": "reads a graphflow tf.data pipeline (Python objects)",
    "TensorArrayStack": "graphflow's TensorArray form (TensorFlow's takes a resource handle)",
    "TensorArrayUnstack": "graphflow's TensorArray form (TensorFlow's takes a resource handle)",
}
# graphflow ops whose TensorFlow namesake takes resource handles or differs in meaning
_SUMMARIES = ("ScalarSummary", "HistogramSummary", "MergeSummary")  # written as TensorFlow's
for _t in registry.registered_types():
    if _t.startswith(("TensorArray", "Queue", "FIFOQueue", "PaddingFIFOQueue", "RandomShuffleQueue",
                      "Reader", "TextLineReader", "TFRecordReader", "WholeFileReader",
                      "FixedLengthRecordReader")) or _t.endswith("Summary") and _t not in _SUMMARIES:
        UNEXPORTABLE.setdefault(_t, "a session resource (queue, reader, TensorArray) or summary "
                                    "that graphflow keeps in Python objects")
UNEXPORTABLE.update({t: "graphflow's attrs do not match TensorFlow's op of that name" for t in (
    "Assert", "Print", "PrintV2", "DecodeCSV", "ParseExample", "ParseSingleExample",
    "StringSplit", "StringSplitV2", "Bincount")})

# graphflow ops TensorFlow has no op for, written as several TensorFlow ops (export_lowerings.py):
# graphflow op -> (the TensorFlow op that gives the result its name, export rule, what it becomes)
LOWERINGS = {
    "SumToShape": ("Reshape", "sum_to_shape", "Sum over the broadcast axes, then Reshape"),
    "ReducedShape": ("DynamicStitch", "reduced_shape", "Range, FloorMod, Fill, DynamicStitch"),
    "GatherGrad": ("UnsortedSegmentSum", "gather_grad", "UnsortedSegmentSum (axis 0)"),
    "SigmoidCrossEntropyWithLogits": ("AddV2", "sigmoid_xent",
                                      "Relu(x) - x*z + Log1p(Exp(-Abs(x)))"),
    "LogicalXor": ("NotEqual", "logical_xor", "NotEqual"),
}
for _t in LOWERINGS:
    UNEXPORTABLE.pop(_t, None)
_LOWERED = {gf: OpMapping(tf, gf=gf, export=rule, imports=False)
            for gf, (tf, rule, _) in LOWERINGS.items()}

_BY_TF = {r.tf: r for r in RECORDS if r.imports}
_BY_GF = {r.gf: r for r in RECORDS if r.exports}


def for_import(tf_type):
    """The record reading TF op `tf_type`, or None when graphflow has no such op."""
    record = _BY_TF.get(tf_type)
    if record is not None:
        return record
    if signature(tf_type) is not None and registry.find(tf_type) is not None \
            and tf_type not in UNEXPORTABLE:
        return OpMapping(tf_type)
    return None


def for_export(gf_type):
    """The record writing graphflow op `gf_type`, or None (then `why_unexportable` says why)."""
    if gf_type in UNEXPORTABLE:
        return None
    record = _LOWERED.get(gf_type) or _BY_GF.get(gf_type)
    if record is not None:
        return record
    if signature(gf_type) is not None:
        return OpMapping(gf_type)
    return None


def why_unexportable(gf_type):
    return UNEXPORTABLE.get(gf_type, "TensorFlow has no op of this type")


def table():
    """[(tf op, graphflow op, imports, exports)] over every mapping, sorted by TF op type."""
    rows = {}
    for tf_type in sorted(set(_BY_TF) | {t for t in registry.registered_types()
                                         if signature(t) is not None}):
        record = for_import(tf_type)
        if record is not None:
            rows[tf_type] = [tf_type, record.gf, True, False]
    for gf_type in registry.registered_types():
        record = for_export(gf_type)
        if record is not None and gf_type not in LOWERINGS:
            row = rows.setdefault(record.tf, [record.tf, gf_type, False, False])
            row[3] = True
    return [tuple(row) for _, row in sorted(rows.items())]
