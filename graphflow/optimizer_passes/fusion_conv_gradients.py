"""The fusion pass's rules for a convolution's gradients (`fusion.py` runs them, in this order):

1. `fuse_filter_bias_gradients`: the filter gradient and the bias gradient read from the same dy
   become one two-output `Conv2DBackpropFilterBias`.
2. `fuse_input_filter_gradients`: a hidden layer's input gradient and its Conv2DBackpropFilterBias
   (or Conv2DBackpropFilter, a convolution without bias), which read the same dy and neither of
   which reads the other, become one `Conv2DBackpropInputFilter`, so that one kernel shares the
   cores between the two gradients' work instead of running each on all cores in turn.

Both keep every output Tensor (readers, fetches) and control edge; the fused op takes the name of
the first op it replaces in the schedule's order (the input gradient's for rule 2) and records the
members in attrs, as every fused op does (`fused_ops._provenance`).
"""

from graphflow.ops import fused_ops
from graphflow.optimizer_passes.rewrite import Editor, move_control_outputs, move_output


def conv_attrs(conv):
    """The convolution attrs of `conv` (Conv2D or one of its gradients), defaults filled in."""
    a = conv.attrs
    return {"strides": a["strides"], "padding": a["padding"],
            "data_format": a.get("data_format") or "NHWC",
            "dilations": a.get("dilations") or [1, 1, 1, 1]}


def fuse_filter_bias_gradients(graph, preserve):
    """For y = conv2d(x, w) + b (b broadcast over every axis but the channels), with dy = dL/dy:

        dL/dw = Conv2DBackpropFilter(x, shape(w), dy)
        dL/db[c] = sum over n, h, w of dy[n, h, w, c]      (NHWC; NCHW: dy[n, c, h, w])

    Both read every element of dy; `Conv2DBackpropFilterBias` computes the two in one op (on the
    CPU each block of images' dy is summed right after the filter gradient's primitive read it, on
    the same thread: `kernels/cpu/onednn/dnnl_conv_ops.py`). Each filter gradient is paired with one
    bias reduction of the same dy (`_bias_gradient_of`); both outputs keep their Tensors (readers,
    fetches), the fused op takes the filter gradient's name. The filter gradient keeps its bits,
    the bias gradient is the same sum in another order where oneDNN runs (float32 rounding)."""
    editor = Editor(graph, preserve)
    claimed = set()  # bias reductions already paired (one dy may feed several filter gradients)
    count = 0
    for dw_op in graph.get_operations():
        if not fused_ops.is_conv2d_backprop_filter(dw_op):
            continue
        found = _bias_gradient_of(dw_op, preserve, claimed)
        if found is None:
            continue
        db_op, reduction = found
        claimed.add(db_op)
        attrs = {**conv_attrs(dw_op), "bias_reduction": reduction,
                 **fused_ops._provenance([dw_op, db_op])}
        _replace_pair(editor, "Conv2DBackpropFilterBias", dw_op.inputs, attrs, dw_op, db_op,
                      [dw_op.outputs[0], db_op.outputs[0]])
        count += 1
    editor.commit()
    return count


def _replace_pair(editor, op_type, inputs, attrs, first, second, outputs, control_inputs=()):
    """Put one `op_type` op in place of the ops `first` and `second`: it takes first's name, source
    line and device, sits where the earlier of the two was scheduled (before the readers of
    either), and `outputs` (their output Tensors, in the fused op's order) and both ops' control
    outputs move to it; it has `control_inputs`."""
    anchor = min(first, second, key=lambda op: op._id)
    fused = editor.add_op(op_type, inputs, attrs, [(t.dtype, t.shape) for t in outputs],
                          anchor=anchor, name=first.name, source=first.source, device=first.device,
                          control_inputs=control_inputs)
    for index, t in enumerate(outputs):
        move_output(t, fused, index)
    move_control_outputs(first, fused)
    move_control_outputs(second, fused)


def _bias_gradient_of(dw_op, preserve, claimed):
    """(op, its `bias_reduction`) for an unclaimed op reading dw_op's out_backprop dy that sums dy
    over exactly its non-channel axes (`fused_ops.bias_gradient_reduction`), on dw_op's device,
    neither op with control inputs nor fetched as an op (their output Tensors may be fetched); None
    if there is none. (An NCHW `Add` of a [C, 1, 1] bias gives Sum(Sum(dy, 0), [1, 2], keepdims):
    not matched.)"""
    if dw_op.control_inputs or dw_op in preserve:
        return None
    dy = dw_op.inputs[2]
    fmt = dw_op.attrs.get("data_format") or "NHWC"
    for op in dict.fromkeys(dy._consumers):
        if op in claimed or op.control_inputs or op in preserve or op.device != dw_op.device:
            continue
        reduction = fused_ops.bias_gradient_reduction(op, dy, fmt)
        if reduction is not None and op.outputs[0].dtype == dw_op.outputs[0].dtype:
            return op, reduction
    return None


# Conv2DBackpropInput(input_sizes, f, dy) and Conv2DBackpropFilterBias(x, filter_sizes, dy)
#   = Conv2DBackpropInputFilter(input_sizes, f, dy, x, filter_sizes)      (outputs dx, df, db)
# Conv2DBackpropInput(input_sizes, f, dy) and Conv2DBackpropFilter(x, filter_sizes, dy)
#   = Conv2DBackpropInputFilter(..., bias_reduction="")                    (outputs dx, df)
# The same values: the fused op's kernels compute each gradient as its own op's kernel does
# (`kernels/cpu/reference/fused_conv_kernels.py` says how on the CPU). Only for the same dy Tensor, device,
# dtype and convolution attrs, neither op fetched as an op, and neither an ancestor of the other
# (one op cannot run both if one's inputs need the other's outputs). The filter gradient has no
# control inputs; the input gradient's (it reads the filter variable, so a control block around
# `minimize` leaves them on it, see `control_edges.py`) go to the fused op when none of them
# needs the filter gradient: the filter gradient then waits for them too, which is allowed.
def fuse_input_filter_gradients(graph, preserve):
    editor = Editor(graph, preserve)
    claimed = set()  # input gradients already paired
    count = 0
    for grads in graph.get_operations():
        biased = fused_ops.is_conv2d_backprop_filter_bias(grads)
        if (not (biased or fused_ops.is_conv2d_backprop_filter(grads)) or grads.control_inputs
                or grads in preserve):
            continue
        dx_op = _input_gradient_of(grads, preserve, claimed)
        if dx_op is None:
            continue
        claimed.add(dx_op)
        if biased:
            attrs = {k: v for k, v in grads.attrs.items() if not k.startswith("member")}
            attrs.update(fused_ops.provenance_with(grads, before=[dx_op]))
        else:
            attrs = {**conv_attrs(grads), "bias_reduction": "",
                     **fused_ops._provenance([dx_op, grads])}
        input_sizes, f, dy = dx_op.inputs
        x, filter_sizes, _ = grads.inputs
        _replace_pair(editor, "Conv2DBackpropInputFilter", [input_sizes, f, dy, x, filter_sizes],
                      attrs, dx_op, grads, [dx_op.outputs[0], *grads.outputs],
                      control_inputs=dx_op.control_inputs)
        count += 1
    editor.commit()
    return count


def _input_gradient_of(grads, preserve, claimed):
    """The unclaimed Conv2DBackpropInput of the same dy, device, dtype and convolution attrs as the
    filter gradient `grads` that one op may run with it; None if there is none."""
    dy = grads.inputs[2]
    attrs = conv_attrs(grads)
    for op in dict.fromkeys(dy._consumers):
        if (op in claimed or not fused_ops.is_conv2d_backprop_input(op) or op.inputs[2] is not dy
                or op in preserve or op.device != grads.device
                or op.outputs[0].dtype != grads.outputs[0].dtype or conv_attrs(op) != attrs
                or any(_is_ancestor(grads, c) for c in op.control_inputs)):
            continue
        if not _is_ancestor(op, grads) and not _is_ancestor(grads, op):
            return op
    return None


def _is_ancestor(op, of):
    """Whether `op`'s outputs reach `of` (through inputs or control edges). Iterative; it visits
    only ops scheduled after `op` (an ancestor is always scheduled before its descendants), so
    the two gradients of one layer, built side by side, cost a few steps."""
    if op._id >= of._id:
        return False
    stack, seen = [of], set()
    while stack:
        node = stack.pop()
        for parent in [t.op for t in node.inputs] + list(node.control_inputs):
            if parent is op:
                return True
            if parent._id > op._id and parent not in seen:
                seen.add(parent)
                stack.append(parent)
    return False
