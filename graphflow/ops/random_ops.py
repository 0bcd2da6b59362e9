"""Random ops: random_normal, truncated_normal, random_uniform (float and integer ranges),
random_shuffle (RandomShuffle: a permutation of the first dimension) and multinomial /
random.categorical (Multinomial: class indices drawn from each row of logits).

TF1 seed semantics (`get_seed`): an op draws from a generator seeded by (graph seed, op seed).
`tf.set_random_seed(s)` sets the graph seed; with a graph seed and no op seed the op seed is the
graph's op count at creation, so rebuilding the same program gives the same sequences; with neither
the kernel seeds itself from fresh entropy. The generator lives in the session (one per op), so each
run draws new values and a new session with the same seeds replays the same sequence. These ops are
flagged `random`: never constant-folded or merged.
"""

from graphflow.framework import dtypes
from graphflow.framework.graph import get_default_graph, name_scope
from graphflow.framework.tensor_shape import TensorShape
from graphflow.ops import math_ops, no_onnx
from graphflow.ops.core_ops import convert_to_tensor
from graphflow.ops.registry import FLOATS, define, make_tensor, require_dtype, same_dtype
from graphflow.ops.shape_ops import shape_tensor
from graphflow.ops.static_value import scalar_value, shape_vector

DEFAULT_GRAPH_SEED = 87654321
_MAXINT32 = 2**31 - 1
_SHAPE_DTYPES = (dtypes.int32, dtypes.int64)


def get_seed(op_seed):
    """TF1 `get_seed`: the (graph-level, op-level) seed pair for a new random op; (None, None)
    means non-deterministic."""
    graph = get_default_graph()
    global_seed = graph.seed
    if global_seed is not None:
        if op_seed is None:
            op_seed = graph.num_ops()
        seeds = (int(global_seed) & _MAXINT32, int(op_seed) & _MAXINT32)
    elif op_seed is not None:
        seeds = (DEFAULT_GRAPH_SEED, int(op_seed) & _MAXINT32)
    else:
        return None, None
    if seeds == (0, 0):  # (0, 0) means "no seed" to the kernels
        return 0, _MAXINT32
    return seeds


def static_shape_value(t):
    """What is statically known of the *value* of a 1-D int shape tensor, as a TensorShape."""
    dims = shape_vector(t)
    if dims is None:
        return TensorShape(None)
    if any(d is not None and d < 0 for d in dims):
        raise ValueError(f"shape {dims} has a negative dimension")
    return TensorShape(dims)


def _shape_input_infer(shape_tensor):
    require_dtype(shape_tensor, _SHAPE_DTYPES, "shape")
    if shape_tensor.shape.ndims not in (None, 1):
        raise ValueError(f"shape must be a 1-D integer tensor, got shape {shape_tensor.shape}")
    return static_shape_value(shape_tensor)


def _random_float_infer(inputs, attrs):
    (shape_tensor,) = inputs
    dt = dtypes.as_dtype(attrs["dtype"])
    if dt not in FLOATS:
        raise TypeError(f"dtype must be a floating point type, got {dt.name}")
    return [(dt, _shape_input_infer(shape_tensor))]


def _random_int_infer(inputs, attrs):
    shape_tensor, minval, maxval = inputs
    dt = same_dtype([minval, maxval], "minval and maxval")
    require_dtype(minval, _SHAPE_DTYPES, "minval")
    for t, what in ((minval, "minval"), (maxval, "maxval")):
        if t.shape.ndims not in (None, 0):
            raise ValueError(f"{what} must be a scalar, got shape {t.shape}")
    return [(dt, _shape_input_infer(shape_tensor))]


_SEED_ATTRS = "seed:none|int seed2:none|int"
define("RandomStandardNormal", _random_float_infer, random=True, shape_input=0,
       attrs="dtype:dtype " + _SEED_ATTRS, onnx=no_onnx.RANDOM)
define("RandomUniform", _random_float_infer, random=True, shape_input=0,
       attrs="dtype:dtype " + _SEED_ATTRS, onnx=no_onnx.RANDOM)
define("TruncatedNormal", _random_float_infer, random=True, shape_input=0,
       attrs="dtype:dtype " + _SEED_ATTRS, onnx=no_onnx.RANDOM)
define("RandomUniformInt", _random_int_infer, random=True, shape_input=0, attrs=_SEED_ATTRS,
       onnx=no_onnx.RANDOM)


def _seed_attrs(seed):
    s1, s2 = get_seed(seed)
    return {"seed": s1 or 0, "seed2": s2 or 0}


def _float_dtype(dtype, fn_name):
    dt = dtypes.as_dtype(dtype)
    if not dt.is_floating:
        raise ValueError(f"{fn_name}: dtype must be a floating point type, got {dt.name}")
    return dt


def random_normal(shape, mean=0.0, stddev=1.0, dtype=dtypes.float32, seed=None, name=None):
    """`tf.random_normal`: samples from N(mean, stddev**2) of the given shape."""
    dt = _float_dtype(dtype, "random_normal")
    with name_scope(name, "random_normal") as scope:
        shape_t = shape_tensor(shape)
        mean_t = convert_to_tensor(mean, dtype=dt, name="mean")
        stddev_t = convert_to_tensor(stddev, dtype=dt, name="stddev")
        attrs = {"dtype": dt.name, **_seed_attrs(seed)}
        rnd = make_tensor("RandomStandardNormal", (shape_t,), attrs, name="RandomStandardNormal")
        return math_ops.add(math_ops.multiply(rnd, stddev_t), mean_t, name=scope)


def truncated_normal(shape, mean=0.0, stddev=1.0, dtype=dtypes.float32, seed=None, name=None):
    """`tf.truncated_normal`: N(mean, stddev**2) samples, redrawn when more than 2 stddev away."""
    dt = _float_dtype(dtype, "truncated_normal")
    with name_scope(name, "truncated_normal") as scope:
        shape_t = shape_tensor(shape)
        mean_t = convert_to_tensor(mean, dtype=dt, name="mean")
        stddev_t = convert_to_tensor(stddev, dtype=dt, name="stddev")
        attrs = {"dtype": dt.name, **_seed_attrs(seed)}
        rnd = make_tensor("TruncatedNormal", (shape_t,), attrs, name="TruncatedNormal")
        return math_ops.add(math_ops.multiply(rnd, stddev_t), mean_t, name=scope)


def random_uniform(shape, minval=0, maxval=None, dtype=dtypes.float32, seed=None, name=None):
    """`tf.random_uniform`: uniform samples in [minval, maxval). Floats default to [0, 1);
    integer dtypes need an explicit `maxval`."""
    dt = dtypes.as_dtype(dtype)
    with name_scope(name, "random_uniform") as scope:
        shape_t = shape_tensor(shape)
        if dt.is_integer:
            if dt not in _SHAPE_DTYPES:
                raise ValueError(f"random_uniform supports int32 and int64, got {dt.name}")
            if maxval is None:
                raise ValueError(f"random_uniform: an integer dtype ({dt.name}) needs maxval")
            lo = convert_to_tensor(minval, dtype=dt, name="min")
            hi = convert_to_tensor(maxval, dtype=dt, name="max")
            return make_tensor("RandomUniformInt", (shape_t, lo, hi), _seed_attrs(seed), name=scope)
        dt = _float_dtype(dt, "random_uniform")
        lo = convert_to_tensor(minval, dtype=dt, name="min")
        hi = convert_to_tensor(1.0 if maxval is None else maxval, dtype=dt, name="max")
        attrs = {"dtype": dt.name, **_seed_attrs(seed)}
        rnd = make_tensor("RandomUniform", (shape_t,), attrs, name="RandomUniform")
        return math_ops.add(math_ops.multiply(rnd, hi - lo), lo, name=scope)


def _shuffle_infer(inputs, attrs):
    (value,) = inputs
    return [(value.dtype, value.shape)]


def _multinomial_infer(inputs, attrs):
    logits, num_samples = inputs
    require_dtype(logits, FLOATS, "logits")
    require_dtype(num_samples, (dtypes.int32,), "num_samples")
    if logits.shape.ndims not in (None, 2):
        raise ValueError(f"logits must be 2-D [batch_size, num_classes], got shape {logits.shape}")
    if num_samples.shape.ndims not in (None, 0):
        raise ValueError(f"num_samples must be a scalar, got shape {num_samples.shape}")
    out = dtypes.as_dtype(attrs["output_dtype"])
    if out not in _SHAPE_DTYPES:
        raise TypeError(f"output_dtype must be int32 or int64, got {out.name}")
    batch = logits.shape[0] if logits.shape.ndims == 2 else None
    samples = scalar_value(num_samples)
    if samples is not None and samples < 0:
        raise ValueError(f"num_samples must be non-negative, got {samples}")
    return [(out, TensorShape([batch, samples]))]


define("RandomShuffle", _shuffle_infer, random=True, attrs=_SEED_ATTRS, onnx=no_onnx.RANDOM)
define("Multinomial", _multinomial_infer, random=True, attrs="output_dtype:dtype " + _SEED_ATTRS,
       onnx=no_onnx.RANDOM)


def random_shuffle(value, seed=None, name=None):
    """`tf.random_shuffle`: `value` with its first dimension in a random order."""
    value = convert_to_tensor(value)
    return make_tensor("RandomShuffle", (value,), _seed_attrs(seed), name=name or "RandomShuffle")


def multinomial(logits, num_samples, seed=None, name=None, output_dtype=None):
    """`tf.multinomial`: [batch_size, num_samples] class indices, each row drawn with
    probabilities softmax(logits[row]) (int64 unless `output_dtype`)."""
    logits = convert_to_tensor(logits)
    num_samples = convert_to_tensor(num_samples, dtype=dtypes.int32)
    attrs = {"output_dtype": dtypes.as_dtype(output_dtype or dtypes.int64).name,
             **_seed_attrs(seed)}
    return make_tensor("Multinomial", (logits, num_samples), attrs, name=name or "Multinomial")


def categorical(logits, num_samples, dtype=None, seed=None, name=None):
    """`tf.random.categorical`: `multinomial` with the output dtype called `dtype`."""
    return multinomial(logits, num_samples, seed=seed, name=name, output_dtype=dtype)


__all__ = ["random_normal", "truncated_normal", "random_uniform", "get_seed", "random_shuffle",
           "multinomial"]
