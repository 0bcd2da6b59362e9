"""Cases for the candidate samplers: shapes and dtypes through the generic harness (values are
random; their distribution and expected counts are tested in tests/tf1/test_nn_sampled.py)."""

import numpy as np

from graphflow.ops.candidate_sampling_ops import log_uniform_candidate_sampler, uniform_candidate_sampler
from tests.op_cases import OpCase

_TRUE = np.array([[1, 4], [0, 7], [3, 3]], dtype=np.int64)

CASES = [
    OpCase("LogUniformCandidateSampler",
           lambda t: log_uniform_candidate_sampler(t, 2, 5, True, 10, seed=1), [_TRUE],
           grad=False, name="LogUniformCandidateSampler[unique]"),
    OpCase("LogUniformCandidateSampler",
           lambda t: log_uniform_candidate_sampler(t, 2, 6, False, 4, seed=2), [_TRUE],
           grad=False, name="LogUniformCandidateSampler[with repeats]"),
    OpCase("UniformCandidateSampler",
           lambda t: uniform_candidate_sampler(t, 2, 4, True, 8, seed=3), [_TRUE], grad=False),
]
