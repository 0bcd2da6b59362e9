"""numpy kernels for the nn ops other than convolution and pooling: softmax, log_softmax, the
cross-entropy losses, bias_add (+ its gradient) and l2_loss. All are computed stably
(max-shifted exponentials, log1p forms). With numba, the plan runs a Softmax over the last axis as
one compiled loop instead (`numba/jit_small.py`; these numpy forms stay the reference).
float16 inputs are computed in float32 and rounded to float16 once (`_in_float32`): their sums
(softmax's, the losses', l2_loss's, bias_add's gradient) accumulate in float32, as the reductions'
(`math_kernels.accumulation_dtype`)."""

import numpy as np

from graphflow.kernels.cpu import cpu_kernel


def _in_float32(fn):
    """`fn` computed in float32 for float16 arguments, each result rounded back to float16."""
    def run(*args):
        if not any(getattr(a, "dtype", None) == np.float16 for a in args):
            return fn(*args)
        result = fn(*[a.astype(np.float32) if a.dtype == np.float16 else a for a in args])
        if isinstance(result, tuple):
            return tuple(np.asarray(r).astype(np.float16) for r in result)
        return np.asarray(result).astype(np.float16)
    run.__name__ = fn.__name__
    return run


# The ndarray methods (x.max, e.sum), not np.max / np.sum: the functions' argument handling costs
# about a microsecond per call: a [1, 10] softmax 6.2 -> 3.5 us (with the in-place exp), load 4.
def _log_softmax(x, axis):
    x = np.asarray(x)
    shifted = x - x.max(axis=axis, keepdims=True)
    lse = np.log(np.exp(shifted).sum(axis=axis, keepdims=True))
    shifted -= lse
    return shifted


@cpu_kernel("Softmax")
def _softmax(node):
    axis = node.attrs.get("axis", -1)

    def softmax(x):
        x = np.asarray(x)
        e = x - x.max(axis=axis, keepdims=True)
        e = np.exp(e, out=e) if isinstance(e, np.ndarray) else np.exp(e)
        e /= e.sum(axis=axis, keepdims=True)
        return e
    return _in_float32(softmax)


@cpu_kernel("LogSoftmax")
def _log_softmax_kernel(node):
    axis = node.attrs.get("axis", -1)
    return _in_float32(lambda x: _log_softmax(x, axis))


@cpu_kernel("SoftmaxCrossEntropyWithLogits")
def _softmax_xent(node):
    axis = node.attrs.get("axis", -1)

    def softmax_cross_entropy_with_logits(features, labels):
        log_p = _log_softmax(features, axis)
        loss = -np.sum(labels * log_p, axis=axis)
        backprop = np.exp(log_p, out=log_p)
        backprop -= labels
        return np.asarray(loss, dtype=features.dtype), backprop
    return _in_float32(softmax_cross_entropy_with_logits)


@cpu_kernel("SparseSoftmaxCrossEntropyWithLogits")
def _sparse_softmax_xent(node):
    def sparse_softmax_cross_entropy_with_logits(features, labels):
        num_classes = features.shape[-1]
        if labels.shape != features.shape[:-1]:
            raise ValueError(f"labels of shape {labels.shape} must have the shape of logits "
                             f"{features.shape} without its last dimension")
        bad = (labels < 0) | (labels >= num_classes)
        if np.any(bad):
            raise ValueError(f"Received a label value of {labels[bad].flat[0]} which is outside the "
                             f"valid range of [0, {num_classes})")
        log_p = _log_softmax(features, -1)
        index = labels[..., None].astype(np.intp)
        loss = -np.take_along_axis(log_p, index, axis=-1)[..., 0]
        backprop = np.exp(log_p, out=log_p)
        np.put_along_axis(backprop, index, np.take_along_axis(backprop, index, axis=-1) - 1, axis=-1)
        return np.asarray(loss, dtype=features.dtype), backprop
    return _in_float32(sparse_softmax_cross_entropy_with_logits)


@cpu_kernel("SigmoidCrossEntropyWithLogits")
def _sigmoid_xent(node):
    def sigmoid_cross_entropy_with_logits(x, z):
        # max(x, 0) - x * z + log(1 + exp(-|x|)): no overflow for any x
        out = np.maximum(x, 0) - x * z
        out += np.log1p(np.exp(-np.abs(x)))
        return out
    return sigmoid_cross_entropy_with_logits


def _channel_axis(data_format, ndim):
    return 1 if data_format in ("NCHW", "NCW", "NCDHW", "NC...") else ndim - 1


@cpu_kernel("BiasAdd")
def _bias_add(node):
    data_format = node.attrs.get("data_format", "NHWC")

    def bias_add(value, bias):
        axis = _channel_axis(data_format, value.ndim)
        if value.shape[axis] != bias.shape[0]:
            raise ValueError(f"bias of size {bias.shape[0]} does not match the channel dimension "
                             f"{value.shape[axis]} of value {value.shape}")
        if axis == value.ndim - 1:
            return value + bias
        return value + bias.reshape((-1,) + (1,) * (value.ndim - axis - 1))
    return bias_add


@cpu_kernel("BiasAddGrad")
def _bias_add_grad(node):
    data_format = node.attrs.get("data_format", "NHWC")

    def bias_add_grad(g):
        axis = _channel_axis(data_format, g.ndim)
        others = tuple(i for i in range(g.ndim) if i != axis)
        return np.asarray(np.sum(g, axis=others, dtype=np.float32 if g.dtype == np.float16
                                 else g.dtype), dtype=g.dtype)
    return bias_add_grad


@cpu_kernel("L2Loss")
def _l2_loss(node):
    def l2_loss(t):
        flat = t.reshape(-1)
        if flat.dtype == np.float16:  # squares and their sum in float32, rounded once
            flat = flat.astype(np.float32)
        return np.asarray(np.dot(flat, flat) * 0.5, dtype=t.dtype)
    return l2_loss
