"""Candidate samplers for sampled losses: `tf.nn.uniform_candidate_sampler` and
`tf.nn.log_uniform_candidate_sampler` (the `LogUniformCandidateSampler` / `UniformCandidateSampler`
ops of TF1).

Each draws `num_sampled` class ids from [0, range_max) (without repeats when `unique`) and returns
`(sampled_candidates int64 [num_sampled], true_expected_count float32 [batch, num_true],
sampled_expected_count float32 [num_sampled])`: how many times each class is expected to appear
in the sample (TF's formulas: p * num_sampled, or 1 - (1 - p) ** num_tries for unique samples).
Log-uniform (Zipfian): P(k) = log((k + 2) / (k + 1)) / log(range_max + 1). The ops are random and
have no gradient.
"""

from graphflow.framework import dtypes
from graphflow.framework.tensor_shape import TensorShape
from graphflow.ops import no_onnx
from graphflow.ops.core_ops import convert_to_tensor
from graphflow.ops.math_ops import cast
from graphflow.ops.random_ops import get_seed
from graphflow.ops.registry import define, make_op, no_gradient

_ATTRS = "num_true:int>=1 num_sampled:int>=1 unique:bool range_max:int>=1 seed:int seed2:int"


def _sampler_infer(inputs, attrs):
    (true_classes,) = inputs
    if true_classes.dtype != dtypes.int64:
        raise TypeError(f"true_classes must be int64, got {true_classes.name} of dtype "
                        f"{true_classes.dtype.name}")
    shape = true_classes.shape
    if shape.ndims not in (None, 2):
        raise ValueError(f"true_classes must be a matrix [batch_size, num_true], got {shape}")
    num_true, num_sampled = attrs["num_true"], attrs["num_sampled"]
    if shape.ndims == 2 and shape[1] not in (None, num_true):
        raise ValueError(f"true_classes has {shape[1]} columns but num_true={num_true}")
    if attrs["unique"] and num_sampled > attrs["range_max"]:
        raise ValueError(f"num_sampled ({num_sampled}) cannot exceed range_max "
                         f"({attrs['range_max']}) when unique=True")
    if num_sampled < 1 or attrs["range_max"] < 1 or num_true < 1:
        raise ValueError("num_true, num_sampled and range_max must be positive")
    batch = shape[0] if shape.ndims == 2 else None
    return [(dtypes.int64, TensorShape([num_sampled])),
            (dtypes.float32, TensorShape([batch, num_true])),
            (dtypes.float32, TensorShape([num_sampled]))]


define("LogUniformCandidateSampler", _sampler_infer, random=True, attrs=_ATTRS, onnx=no_onnx.RANDOM)
define("UniformCandidateSampler", _sampler_infer, random=True, attrs=_ATTRS, onnx=no_onnx.RANDOM)
no_gradient("LogUniformCandidateSampler", "UniformCandidateSampler")


def _sampler(op_type, default_name, true_classes, num_true, num_sampled, unique, range_max,
             seed, name):
    true_classes = convert_to_tensor(true_classes)
    if true_classes.dtype != dtypes.int64:
        true_classes = cast(true_classes, dtypes.int64)
    seed1, seed2 = get_seed(seed)
    attrs = {"num_true": int(num_true), "num_sampled": int(num_sampled), "unique": bool(unique),
             "range_max": int(range_max), "seed": seed1 or 0, "seed2": seed2 or 0}
    return tuple(make_op(op_type, (true_classes,), attrs, name=name or default_name).outputs)


def log_uniform_candidate_sampler(true_classes, num_true, num_sampled, unique, range_max,
                                  seed=None, name=None):
    """Sample classes from the log-uniform (Zipfian) distribution over [0, range_max)."""
    return _sampler("LogUniformCandidateSampler", "LogUniformCandidateSampler", true_classes,
                    num_true, num_sampled, unique, range_max, seed, name)


def uniform_candidate_sampler(true_classes, num_true, num_sampled, unique, range_max, seed=None,
                              name=None):
    """Sample classes uniformly from [0, range_max)."""
    return _sampler("UniformCandidateSampler", "UniformCandidateSampler", true_classes, num_true,
                    num_sampled, unique, range_max, seed, name)


__all__ = ["log_uniform_candidate_sampler", "uniform_candidate_sampler"]
