"""Import rules for TensorFlow's sparse optimizer updates (the ops `Optimizer.minimize` writes for
the gradient of an embedding lookup), built from graphflow ops: the rows `indices` names are
gathered from the variable and its slots, updated with TensorFlow's kernel arithmetic, and
written back with ScatterUpdate (the slots first, then the variable, whose op carries the node's
name and runs after the slots' writes):

    SparseApplyMomentum: accum = accum * momentum + grad
                         var -= accum * lr   (nesterov: var -= grad * lr + accum * momentum * lr)
    SparseApplyAdagrad:  accum += grad * grad (update_slots); var -= grad * lr * rsqrt(accum)
    SparseApplyRMSProp:  ms = ms * rho + grad * grad * (1 - rho)
                         mom = mom * momentum + rsqrt(ms + epsilon) * lr * grad;  var -= mom

TensorFlow's optimizers sum the gradients of repeated indices before these ops
(`_apply_sparse_duplicate_indices`), so each row is updated once; with repeated indices the last
write of a row wins here, where TensorFlow's kernel would apply the updates one after another.
"""

from graphflow.interop.tensorflow.import_core import rule
from graphflow.ops.registry import make_op

# TF input positions: (inputs, ref inputs, the scalar inputs, grad, indices)
_LAYOUT = {
    "SparseApplyMomentum": (6, 2, {"lr": 2, "momentum": 5}, 3, 4),
    "SparseApplyAdagrad": (5, 2, {"lr": 2}, 3, 4),
    "SparseApplyRMSProp": (9, 3, {"lr": 3, "rho": 4, "momentum": 5, "epsilon": 6}, 7, 8),
}


def _public():
    import graphflow as tf  # noqa: PLC0415
    return tf


def _variable(ctx, node, tensor):
    found = ctx.variables.get(tensor)
    if found is None or found.get("resource"):
        raise ctx.error(node, f"input {tensor.name} is not a (ref) variable")
    return {k: found[k] for k in ("shared_name", "dtype", "shape")}


def _write(var, indices, rows, name):
    return make_op("ScatterUpdate", [indices, rows], var, name=name).outputs[0]


@rule("tf_sparse_apply")
def _sparse_apply(ctx, node, inputs, record):
    attrs = ctx.attrs(node)
    n_inputs, n_refs, scalar_at, grad_at, indices_at = _LAYOUT[node.op]
    if len(inputs) != n_inputs:
        raise ctx.error(node, f"has {len(inputs)} inputs, TensorFlow's {node.op} takes "
                              f"{n_inputs}")
    refs = [_variable(ctx, node, t) for t in inputs[:n_refs]]
    grad, indices = inputs[grad_at], inputs[indices_at]
    scalars = {k: inputs[i] for k, i in scalar_at.items()}
    for t in [grad] + list(scalars.values()):
        if t.dtype.name != refs[0]["dtype"] or not t.dtype.is_floating:
            raise ctx.error(node, f"input {t.name} of dtype {t.dtype.name}: expected the "
                                  f"variable's floating dtype {refs[0]['dtype']}")
    for k, t in scalars.items():
        if t.shape.ndims not in (None, 0):
            raise ctx.error(node, f"'{k}' must be a scalar, got shape {t.shape}")
    if not indices.dtype.is_integer or indices.shape.ndims not in (None, 1):
        raise ctx.error(node, f"indices {indices.name} must be a 1-D integer vector")
    tf = _public()
    lr = scalars["lr"]
    name = ctx.op_name(node)
    with ctx.graph.name_scope(name):
        slots = [tf.gather(t, indices) for t in inputs[1:n_refs]]
        var_rows = tf.gather(inputs[0], indices)
        if node.op == "SparseApplyMomentum":
            (accum,) = slots
            m = scalars["momentum"]
            accum = accum * m + grad
            step = grad * lr + accum * m * lr if attrs.get("use_nesterov") else accum * lr
            new_slots = [accum]
        elif node.op == "SparseApplyAdagrad":
            (accum,) = slots
            if attrs.get("update_slots", True):
                accum = accum + grad * grad
            step = grad * lr * tf.rsqrt(accum)
            new_slots = [accum]
        else:
            ms, mom = slots
            one = tf.ones_like(scalars["rho"])
            ms = ms * scalars["rho"] + grad * grad * (one - scalars["rho"])
            mom = mom * scalars["momentum"] + tf.rsqrt(ms + scalars["epsilon"]) * lr * grad
            step = mom
            new_slots = [ms, mom]
        writes = [_write(ref, indices, rows, f"{name}update_slot_{i}")
                  for i, (ref, rows) in enumerate(zip(refs[1:], new_slots))]
        new_rows = var_rows - step
    with ctx.graph.control_dependencies([w.op for w in writes]):
        return [_write(refs[0], indices, new_rows, name)]
