"""`tf.edit_distance`: the Levenshtein distance between the sequences of two SparseTensors (the
EditDistance op, TensorFlow's inputs and attr). Each sequence is the values of one index prefix
(all dimensions but the last, in the indices' row-major order); the result is dense, of the
prefix dimensions, float32, optionally divided by the truth's length."""

from graphflow.framework import dtypes
from graphflow.framework.tensor_shape import TensorShape
from graphflow.ops.registry import define, make_tensor, no_gradient, require_dtype
from graphflow.ops.sparse_tensor import SparseTensor, SparseTensorValue
from graphflow.ops.static_value import shape_vector


def _edit_distance_infer(inputs, attrs):
    h_ix, h_val, h_shape, t_ix, t_val, t_shape = inputs
    for t, what in ((h_ix, "hypothesis_indices"), (h_shape, "hypothesis_shape"),
                    (t_ix, "truth_indices"), (t_shape, "truth_shape")):
        require_dtype(t, (dtypes.int64,), what)
    if h_val.dtype != t_val.dtype:
        raise TypeError(f"hypothesis and truth values must have the same dtype, got "
                        f"{h_val.dtype.name} and {t_val.dtype.name}")
    dims_h, dims_t = shape_vector(h_shape), shape_vector(t_shape)
    if dims_h is not None and dims_t is not None:
        if len(dims_h) != len(dims_t):
            raise ValueError(f"truth and hypothesis must have matching ranks, got "
                             f"{len(dims_t)} and {len(dims_h)}")
        if len(dims_t) < 2:
            raise ValueError(f"the SparseTensors must have rank at least 2, got {len(dims_t)}")
        dims = [None if a is None or b is None else max(a, b)
                for a, b in zip(dims_h[:-1], dims_t[:-1])]
        return [(dtypes.float32, TensorShape(dims))]
    rank = next((len(d) for d in (dims_h, dims_t) if d is not None), None)
    if rank is None:
        known = [s.shape.dims[0] for s in (h_shape, t_shape)
                 if s.shape.ndims == 1 and s.shape.dims[0] is not None]
        rank = known[0] if known else None
    return [(dtypes.float32, TensorShape(None if rank is None else [None] * (rank - 1)))]


define("EditDistance", _edit_distance_infer, attrs="normalize:bool", value_dependent_shape=True,
       retains_inputs=False,
       onnx={"none": "ONNX has no edit-distance operator (a dynamic program over sparse "
                     "sequences)"})
no_gradient("EditDistance")


def _sparse(value, what):
    if isinstance(value, SparseTensorValue):
        return SparseTensor.from_value(value)
    if not isinstance(value, SparseTensor):
        raise TypeError(f"{what} must be a SparseTensor.")
    return value


def edit_distance(hypothesis, truth, normalize=True, name="edit_distance"):
    """`tf.edit_distance`: the Levenshtein distance between each sequence of `hypothesis` and the
    sequence of `truth` at the same index prefix, divided by the truth's length when
    `normalize` (a missing truth gives inf, a missing hypothesis 1.0). float32, rank R - 1."""
    hypothesis = _sparse(hypothesis, "Hypothesis")
    truth = _sparse(truth, "Truth")
    return make_tensor("EditDistance",
                       (hypothesis.indices, hypothesis.values, hypothesis.dense_shape,
                        truth.indices, truth.values, truth.dense_shape),
                       {"normalize": bool(normalize)}, name=name)


__all__ = ["edit_distance"]
