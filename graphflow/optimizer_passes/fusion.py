"""Fusion: several ops become one, so a run makes fewer kernel calls and fewer passes over memory.

1. Remapping (TF's `_FusedMatMul`): `matmul(a, b)` followed by `+ bias` (`Add` with a bias that
   broadcasts without growing the product, or `BiasAdd` in NHWC) and optionally by an activation
   (`fused_ops.MATMUL_ACTIVATIONS`) becomes one `FusedMatMul`, when the intermediate results have no
   other reader. Likewise (TF's `_FusedConv2D`) `conv2d(x, f)` followed by a per-channel bias
   (`BiasAdd` in the convolution's data format, or in NHWC an `Add` of a 1-D bias of the channel
   count) and optionally by an activation (`fused_ops.CONV_ACTIVATIONS`) becomes one `FusedConv2D`.
   The ReLU gradient after a max pooling's gradient (`where(x > 0, max_pool_grad(x, max_pool(x), g),
   0)`, the backward pass of `max_pool(relu(...))`) becomes one `FusedMaxPoolGradReluMask`
   (`_fuse_max_pool_grad_relu_mask`), when the MaxPoolGrad result has no other reader.
2. Parameter gradients of a biased convolution: `Conv2DBackpropFilter(x, sizes, dy)` and the bias
   gradient read from the same dy (`Sum` over every axis but the channel axis, or `BiasAddGrad`)
   become one two-output `Conv2DBackpropFilterBias` (`fusion_conv_gradients.py`). When that dy
   is a ReLU gradient `where(y > 0, g, 0)` read by nothing else (the first layer of a network:
   its input gradient is not needed), the mask joins too: `Conv2DBackpropFilterBiasReluMask(x,
   sizes, g, y)` (`_fuse_filter_bias_relu_mask`). Otherwise (a hidden layer) the input gradient
   of the same dy joins: `Conv2DBackpropInputFilter` (`fusion_conv_gradients.py`).
3. Elementwise fusion (`fusion_elementwise.py`): maximal groups of elementwise ops
   (`OpDef.elementwise` and listed in `fused_ops.ELEMENTWISE_INSTRUCTIONS`) become one
   `FusedElementwise` op. A group grows from its root (the one member whose value leaves the group)
   towards its inputs; an op joins when every reader of its output is already in the group, its
   static output shape equals the root's, and it has no control edges and is not fetched. So
   values never leave the group except through the root, which also means fusing cannot create a
   cycle. Groups hold at most `MAX_GROUP_OPS` ops, and at least two, or one of at least
   `SINGLE_OP_MIN_ELEMENTS` elements. An input a `BroadcastTo` of the group's shape produced is read
   unbroadcast (`_unbroadcast_inputs`). A Sum or Mean over the leading axes of a group's value,
   its only reader, then joins it: `FusedElementwiseSum` (`fuse_sums`).

The fused op takes the root's name, device and output Tensor (so fetches and readers are unchanged),
the root's source line, and records the members in attrs (`members`, `member_types`,
`member_sources`).

The FusedElementwise program (attr `program`, plain JSON) has the format of
`graphflow/ops/elementwise_program.py`, whose validator the FusedElementwise OpDef runs; its
instructions are the fusible op types of the elementwise table (`fused_ops.ELEMENTWISE_INSTRUCTIONS`),
each meaning exactly what that op means in the graph. The pass only fuses ops whose static shapes
equal the output's.
"""

import numpy as np

from graphflow.ops import fused_ops, registry
from graphflow.optimizer_passes.fusion_batch_norm import split_training_batch_norms
from graphflow.optimizer_passes.fusion_conv_gradients import (
    conv_attrs,
    fuse_filter_bias_gradients,
    fuse_input_filter_gradients,
)
from graphflow.optimizer_passes.fusion_elementwise import fuse_elementwise, fuse_sums
from graphflow.optimizer_passes.rewrite import (
    Editor,
    move_control_outputs,
    move_output,
    plain,
    replace_root,
)
from graphflow.optimizer_passes.stats import PassStats, Timer

NAME = "fusion"

# False leaves convolutions unfused (their bias + activation then join elementwise groups):
# `benchmarks/bench_conv_fusion.py` compares both plans.
FUSE_CONV = True
# False leaves a convolution's filter and bias gradients as two ops (the tests compare both plans).
FUSE_CONV_GRADIENTS = True
# False leaves a hidden layer's input gradient and its Conv2DBackpropFilterBias as two ops (the tests
# compare both plans).
FUSE_INPUT_FILTER_GRADIENTS = True
# False leaves a Sum or Mean of a FusedElementwise's value as two ops (the tests compare both plans).
FUSE_SUMS = True
# False leaves the ReLU gradient after MaxPoolGrad unfused (tests compare both plans).
FUSE_POOL_RELU_MASK = True
# False leaves the ReLU gradient before Conv2DBackpropFilterBias unfused (tests compare both plans).
FUSE_FILTER_RELU_MASK = True
# False leaves a training FusedBatchNorm whole instead of its statistics op and elementwise y
# (`fusion_batch_norm.py`; the tests compare both plans).
SPLIT_BATCH_NORM = True
# False leaves the ReLU gradient before a split batch norm's FusedBatchNormGrad unfused (the tests
# compare both plans).
FUSE_BATCH_NORM_RELU_MASK = True


def run(graph, preserve):
    stats = PassStats(NAME)
    with Timer(stats, graph):
        matmuls = _fuse_matmul_bias_activation(graph, preserve)
        convs = _fuse_conv_bias_activation(graph, preserve) if FUSE_CONV else 0
        pool_masks = (_fuse_max_pool_grad_relu_mask(graph, preserve) if FUSE_POOL_RELU_MASK
                      else 0)
        grads = fuse_filter_bias_gradients(graph, preserve) if FUSE_CONV_GRADIENTS else 0
        filter_masks = (_fuse_filter_bias_relu_mask(graph, preserve)
                        if FUSE_CONV_GRADIENTS and FUSE_FILTER_RELU_MASK else 0)
        input_filter = (fuse_input_filter_gradients(graph, preserve)
                        if FUSE_CONV_GRADIENTS and FUSE_INPUT_FILTER_GRADIENTS else 0)
        batch_norms = split_training_batch_norms(graph, preserve) if SPLIT_BATCH_NORM else 0
        norm_masks = (_fuse_batch_norm_grad_relu_mask(graph, preserve)
                      if SPLIT_BATCH_NORM and FUSE_BATCH_NORM_RELU_MASK else 0)
        groups, fused_ops_count = fuse_elementwise(graph, preserve)
        sums = fuse_sums(graph, preserve) if FUSE_SUMS else 0
        stats.rewrites = (matmuls + convs + pool_masks + grads + filter_masks + input_filter
                          + batch_norms + norm_masks + groups + sums)
        stats.details.update(fused_matmuls=matmuls, fused_convs=convs,
                             fused_pool_relu_masks=pool_masks,
                             fused_conv_gradients=grads, fused_filter_relu_masks=filter_masks,
                             fused_input_filter_gradients=input_filter,
                             split_batch_norms=batch_norms,
                             fused_batch_norm_relu_masks=norm_masks,
                             elementwise_groups=groups,
                             elementwise_ops_fused=fused_ops_count, fused_sums=sums)
    return stats


def _reads_shape_only(op):
    """`op` reads only the shape (and dtype) of its input, never its values (OpDef
    `reads_shape_only`). The gradient of a broadcasting `Add` reads `Shape(matmul(...))`; it can
    read the shape of the fused result instead."""
    return registry.lookup(op.type).reads_shape_only


def _sole_value_reader(t):
    """The one op reading `t`'s values, when all its other readers only read its shape."""
    readers = [c for c in dict.fromkeys(t._consumers) if not _reads_shape_only(c)]
    if len(readers) != 1 or t._consumers.count(readers[0]) != 1:
        return None
    return readers[0]


def _move_shape_readers(old, new):
    """Shape readers of `old` read `new` (same shape and dtype, guaranteed by the caller)."""
    for c in [c for c in dict.fromkeys(old._consumers) if _reads_shape_only(c)]:
        c.inputs = tuple(new if t is old else t for t in c.inputs)
        n = old._consumers.count(c)
        old._consumers = [x for x in old._consumers if x is not c]
        new._consumers.extend([c] * n)


# ------------------------------------------------------------------ product + bias + activation
def _fuse_matmul_bias_activation(graph, preserve):
    return _fuse_bias_activation(graph, preserve, _MATMUL)


def _fuse_conv_bias_activation(graph, preserve):
    return _fuse_bias_activation(graph, preserve, _CONV)


def _fuse_bias_activation(graph, preserve, rule):
    """One product op (`rule.is_product`) whose only value reader adds a bias (`rule.bias`), and
    optionally the activation reading that sum, become one `rule.fused_type` op."""
    editor = Editor(graph, preserve)
    count = 0
    for mm in graph.get_operations():
        if not rule.is_product(mm) or not plain(mm, preserve):
            continue
        product = mm.outputs[0]
        add = _sole_value_reader(product)
        if (add is None or add.control_inputs or add in preserve or add.device != mm.device
                or len(add.outputs) != 1):
            continue
        bias = rule.bias(add, product, mm)
        if bias is None:
            continue
        members = [mm, add]
        root = add
        act = _sole_value_reader(add.outputs[0])
        if (act is not None and rule.is_activation(act) and act.device == mm.device
                and not act.control_inputs and act not in preserve and plain(add, preserve)):
            members.append(act)
            root = act
            _move_shape_readers(add.outputs[0], act.outputs[0])
        _move_shape_readers(product, root.outputs[0])
        attrs = {**rule.attrs(mm),
                 "activation": root.type if root is not add else "",
                 "activation_attrs": dict(root.attrs) if root is not add else {},
                 **fused_ops._provenance(members)}
        replace_root(editor, root, rule.fused_type, [mm.inputs[0], mm.inputs[1], bias], attrs)
        count += 1
    editor.commit()
    return count


def _matmul_attrs(mm):
    return {"transpose_a": bool(mm.attrs.get("transpose_a", False)),
            "transpose_b": bool(mm.attrs.get("transpose_b", False))}


def _conv_bias_operand(add, product, conv):
    """The per-channel bias of `add` (a 1-D [out channels] tensor of the product's dtype): BiasAdd
    in the convolution's data format, or an NHWC Add of a 1-D bias of exactly the channel count."""
    fmt = conv.attrs.get("data_format") or "NHWC"
    dims = product.shape.dims
    if dims is None or len(dims) != 4:
        return None
    channels = dims[3] if fmt == "NHWC" else dims[1]
    if fused_ops.is_bias_add(add):
        bias = add.inputs[1]
        if add.inputs[0] is not product or (add.attrs.get("data_format") or "NHWC") != fmt:
            return None
    elif fused_ops.is_add(add) and fmt == "NHWC":
        a, b = add.inputs
        bias = b if a is product else a if b is product else None
        if bias is None or bias is product:
            return None
    else:
        return None
    bd = bias.shape.dims
    if bd is None or len(bd) != 1 or bias.dtype != product.dtype:
        return None
    if fused_ops.is_add(add) and (channels is None or bd[0] != channels):
        return None  # (a bias of 1 value would broadcast: not a per-channel bias)
    return bias


class _Rule:
    def __init__(self, fused_type, is_product, bias, is_activation, attrs):
        self.fused_type, self.is_product, self.bias = fused_type, is_product, bias
        self.is_activation, self.attrs = is_activation, attrs


def _bias_operand(add, product, mm=None):
    if fused_ops.is_bias_add(add):
        fmt = add.attrs.get("data_format") or "NHWC"
        channels_last = not fmt.startswith("NC") or product.shape.ndims == 2
        if add.inputs[0] is product and channels_last:
            return add.inputs[1]
        return None
    if not fused_ops.is_add(add):
        return None
    a, b = add.inputs
    bias = b if a is product else a if b is product else None
    if bias is None or bias is product:
        return None
    bd, pd = bias.shape.dims, product.shape.dims
    if bd is None or pd is None or len(bd) > len(pd) or bias.dtype != product.dtype:
        return None
    for p, q in zip(pd[len(pd) - len(bd):], bd):
        if q != 1 and (p is None or q is None or p != q):
            return None
    return bias


_MATMUL = _Rule("FusedMatMul", fused_ops.is_matmul, _bias_operand, fused_ops.is_matmul_activation,
                _matmul_attrs)
_CONV = _Rule("FusedConv2D", fused_ops.is_conv2d, _conv_bias_operand, fused_ops.is_conv_activation,
              conv_attrs)


# ------------------------------------------------------------------ filter gradient + ReLU mask
# Conv2DBackpropFilterBias(x, sizes, where(y > 0, g, 0))
#   = Conv2DBackpropFilterBiasReluMask(x, sizes, g, y)
# The same values: the kernel masks each block of g as the filter gradient reads it. Only when the
# Select's result has no other reader (the first layer of a network: no input gradient), nothing
# replaced is fetched or fenced by control edges, the Select writes +0.0 and y has g's shape.
def _fuse_filter_bias_relu_mask(graph, preserve):
    editor = Editor(graph, preserve)
    count = 0
    for grads in graph.get_operations():
        match = _filter_bias_relu_mask(grads, preserve)
        if match is None:
            continue
        select, g, y, members = match
        dw, db = grads.outputs
        attrs = {k: v for k, v in grads.attrs.items() if not k.startswith("member")}
        attrs.update(fused_ops.provenance_with(grads, after=members))
        x, sizes, _ = grads.inputs
        fused = editor.add_op("Conv2DBackpropFilterBiasReluMask", [x, sizes, g, y], attrs,
                              [(dw.dtype, dw.shape), (db.dtype, db.shape)], anchor=grads,
                              name=grads.name, source=grads.source, device=grads.device)
        move_output(dw, fused, 0)
        move_output(db, fused, 1)
        move_control_outputs(grads, fused)
        count += 1
    editor.commit()
    return count


def _filter_bias_relu_mask(grads, preserve):
    """(the Select, g, y, the members it replaces) when `grads` is a Conv2DBackpropFilterBias whose
    dy is `where(y > 0, g, 0)` read by nothing else; else None."""
    if not fused_ops.is_conv2d_backprop_filter_bias(grads) or grads.control_inputs:
        return None
    dy = grads.inputs[2]
    select = dy.op
    relu = _relu_gradient(select)
    if relu is None or not plain(select, preserve) or dy._consumers != [grads]:
        return None
    y, g, greater = relu
    if (not y.shape.is_fully_defined() or y.shape != g.shape or g.shape != dy.shape
            or y.dtype != g.dtype or len({grads.device, select.device, greater.device}) != 1):
        return None
    return select, g, y, _with_greater([select], greater, select, preserve)


def _relu_gradient(select):
    """(y, g, the Greater) when `select` is the ReLU gradient `where(y > 0, g, 0)`: a Select of
    `Greater(y, 0)` that writes +0.0, neither with control inputs (an order a fused op would
    drop); else None."""
    if not fused_ops.is_select(select) or select.control_inputs:
        return None
    cond, g, zero = select.inputs
    greater = cond.op
    if (not fused_ops.is_greater(greater) or greater.control_inputs
            or not _is_zero(greater.inputs[1], signed=False) or not _is_zero(zero, signed=True)):
        return None
    return greater.inputs[0], g, greater


def _with_greater(members, greater, select, preserve):
    """`members` with the ReLU gradient's Greater before the Select when only the Select reads it
    (then it goes too)."""
    if plain(greater, preserve) and greater.outputs[0]._consumers == [select]:
        at = members.index(select)
        return members[:at] + [greater] + members[at:]
    return members


# ------------------------------------------------------------------ batch norm gradient + ReLU mask
# FusedBatchNormGrad(where(relu(y) > 0, g, 0), x, ...) with y = (x - m) * a + o, the split forward
#   = FusedBatchNormGradReluMask(g, x, ..., m, a, o)
# relu(y) > 0 is y > 0 (NaN: false either way), and the op recomputes y from x with the forward's
# ops in their order: the same mask, so the same bits; the masked gradient is never written out.
# Only when the Select's value has no other reader, the Select is not fetched, neither it nor its
# Greater has control inputs, the affine's m, a, o are per-channel vectors, and y's x is the batch
# norm gradient's x. The gradient's own control
# inputs (a TF1 step's UPDATE_OPS, which `control_edges.py` leaves on it: it reads the scale
# variable) go to the fused op: the Select's part then waits for them too, and only it read its
# value.
def _fuse_batch_norm_grad_relu_mask(graph, preserve):
    editor = Editor(graph, preserve)
    count = 0
    for grad in graph.get_operations():
        match = _batch_norm_grad_relu_mask(grad, preserve)
        if match is None:
            continue
        g, vectors = match
        fused = editor.add_op("FusedBatchNormGradReluMask", [g, *grad.inputs[1:], *vectors],
                              dict(grad.attrs),
                              [(t.dtype, t.shape) for t in grad.outputs], anchor=grad,
                              name=grad.name, source=grad.source, device=grad.device,
                              control_inputs=grad.control_inputs)
        for k, t in enumerate(grad.outputs):
            move_output(t, fused, k)
        move_control_outputs(grad, fused)  # the Select and Greater go with the sweep
        count += 1
    editor.commit()
    return count


def _batch_norm_grad_relu_mask(grad, preserve):
    """(g, (m, a, o)) when `grad` is a FusedBatchNormGrad of the ReLU gradient
    `where(relu(y) > 0, g, 0)`, y the split forward's `(x - m) * a + o` of grad's x; else None."""
    if not fused_ops.is_batch_norm_grad(grad):
        return None
    dz = grad.inputs[0]
    select = dz.op
    relu_grad = _relu_gradient(select)
    if relu_grad is None or not plain(select, preserve) or dz._consumers != [grad]:
        return None
    r, g, greater = relu_grad
    relu = r.op
    if not fused_ops.is_relu(relu) or relu.control_inputs:
        return None
    affine = fused_ops.affine_operands(relu.inputs[0].op)
    if affine is None or affine[0] is not grad.inputs[1]:
        return None
    channels = grad.outputs[1].shape  # [C]
    column = channels if grad.attrs["data_format"] == "NHWC" else channels.concatenate([1, 1])
    if any(v.shape != column or not v.shape.is_fully_defined() or v.dtype != dz.dtype
           for v in affine[1:]):
        return None  # (x - m) * a + o of other operands: a scalar, a whole tensor
    if (not dz.shape.is_fully_defined() or g.shape != dz.shape or g.dtype != dz.dtype
            or len({grad.device, select.device, greater.device}) != 1):
        return None
    return g, affine[1:]


# ------------------------------------------------------------------ max pool gradient + ReLU mask
# where(x > 0, max_pool_grad(x, y, g), 0) with y = max_pool(x)
#   = max_pool_grad(x, y, where(y > 0, g, 0))      (FusedMaxPoolGradReluMask(x, y, g))
# MaxPoolGrad puts each window's g on the window's argmax a, and 0 elsewhere; x[a] == y[window],
# so `x > 0` at a is `y > 0` of every window routed to a, and the positions no window reaches are
# +0.0 either way. (Where y is NaN the kernels keep the unfused pair's bits another way.)
# Only when the MaxPoolGrad result has no other reader, nothing replaced is fetched or fenced by
# control edges, y is max_pool(x) with MaxPoolGrad's window attrs, and the Select writes +0.0.
def _fuse_max_pool_grad_relu_mask(graph, preserve):
    editor = Editor(graph, preserve)
    count = 0
    for select in graph.get_operations():
        match = _max_pool_grad_relu_mask(select, preserve)
        if match is None:
            continue
        grad_op, members = match
        attrs = {**_pool_window_attrs(grad_op), **fused_ops._provenance(members)}
        replace_root(editor, select, "FusedMaxPoolGradReluMask", list(grad_op.inputs), attrs)
        count += 1
    editor.commit()
    return count


def _pool_window_attrs(op):
    a = op.attrs
    return {"ksize": list(a["ksize"]), "strides": list(a["strides"]), "padding": a["padding"],
            "data_format": a.get("data_format") or "NHWC"}


def _max_pool_grad_relu_mask(select, preserve):
    """(the MaxPoolGrad, the members replaced) when `select` is `where(x > 0, max_pool_grad(x,
    max_pool(x), g), 0)` whose MaxPoolGrad result only the Select reads; else None."""
    relu = _relu_gradient(select)
    if relu is None or select in preserve:
        return None
    masked_by, grad, greater = relu
    grad_op = grad.op
    if (not fused_ops.is_max_pool_grad(grad_op) or not plain(grad_op, preserve)
            or grad._consumers != [select]):
        return None
    x, y, _ = grad_op.inputs
    pool = y.op
    if (masked_by is not x or not fused_ops.is_max_pool(pool) or pool.inputs[0] is not x
            or _pool_window_attrs(pool) != _pool_window_attrs(grad_op)
            or len({select.device, grad_op.device, pool.device}) != 1):
        return None
    return grad_op, _with_greater([grad_op, select], greater, select, preserve)


def _is_zero(t, signed):
    """`t` is a constant single 0 (`signed`: +0.0 exactly, the value Select writes)."""
    value = registry.constant_value_of(t)
    if value is None or value.size != 1 or value.reshape(()) != 0:
        return False
    return not signed or not np.signbit(value.reshape(()))
