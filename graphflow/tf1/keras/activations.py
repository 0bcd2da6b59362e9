"""`tf.keras.activations`: Keras's activation functions by name (`get('relu')`), over graphflow's
elementwise ops; softmax and sigmoid remember their logits for the cross-entropy losses.
TF1 Keras's `hard_sigmoid` is `clip(0.2 * x + 0.5, 0, 1)`."""

import weakref

from graphflow.ops import math_ops, nn_ops

_LOGITS = weakref.WeakKeyDictionary()   # softmax/sigmoid output -> (kind, logits)


def logits_of(probabilities, kind):
    """The logits a Keras softmax/sigmoid activation turned into `probabilities`, else None."""
    try:
        found = _LOGITS.get(probabilities)
    except TypeError:
        return None
    return found[1] if found is not None and found[0] == kind else None


def linear(x):
    return x


def relu(x, alpha=0.0, max_value=None):
    out = math_ops.relu(x) if not alpha else math_ops.leaky_relu(x, alpha)
    if max_value is not None:
        out = math_ops.minimum(out, max_value)
    return out


def sigmoid(x):
    out = math_ops.sigmoid(x)
    _LOGITS[out] = ("sigmoid", x)
    return out


def hard_sigmoid(x):
    return math_ops.clip_by_value(0.2 * x + 0.5, 0.0, 1.0)


def tanh(x):
    return math_ops.tanh(x)


def softmax(x, axis=-1):
    out = nn_ops.softmax(x, axis=axis)
    if axis in (-1, x.shape.ndims - 1):
        _LOGITS[out] = ("softmax", x)
    return out


def elu(x, alpha=1.0):
    return math_ops.elu(x) if alpha == 1.0 else math_ops.where(
        x > 0, math_ops.elu(x), alpha * math_ops.elu(x))


def selu(x):
    return math_ops.selu(x)


def softplus(x):
    return math_ops.softplus(x)


def softsign(x):
    return math_ops.softsign(x)


def exponential(x):
    return math_ops.exp(x)


_BY_NAME = {f.__name__: f for f in (linear, relu, sigmoid, hard_sigmoid, tanh, softmax, elu, selu,
                                    softplus, softsign, exponential)}


def get(identifier):
    """The activation named `identifier` ('relu', 'softmax', ...), a callable as is, None: linear."""
    if identifier is None:
        return linear
    if callable(identifier):
        return identifier
    if identifier not in _BY_NAME:
        raise ValueError(f"Unknown activation function: {identifier!r} (known: "
                         f"{sorted(_BY_NAME)})")
    return _BY_NAME[identifier]


def serialize(fn):
    return getattr(fn, "__name__", repr(fn))


__all__ = sorted(_BY_NAME) + ["get", "serialize"]

