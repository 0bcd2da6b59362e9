"""Comparing graphflow's results of keras_backend_programs.py with TensorFlow's: the recorded
numbers (keras_backend_recorded.py) always, a live tf_keras run where GRAPHFLOW_TF_PYTHON is set."""

import numpy as np

import graphflow as tf
from tests.tf1.keras import keras_backend_programs as programs
from tests.tf1.keras.keras_backend_recorded import RECORDED
from tests.tf_reference import run_in_tf_keras


def ours(program_name):
    return getattr(programs, program_name)(tf, np)


def assert_matches_recorded(program_name, results, rtol=2e-5, atol=2e-6):
    recorded = RECORDED[program_name]
    assert sorted(results) == sorted(recorded)
    for name, (dtype, shape, values) in recorded.items():
        got = np.asarray(results[name])
        assert got.shape == tuple(shape), name
        assert got.dtype.kind == np.dtype(dtype).kind, name
        np.testing.assert_allclose(got.astype(np.float64).ravel(), np.asarray(values, np.float64),
                                   rtol=rtol, atol=atol, err_msg=name)


def assert_matches_live(program_name, results, rtol=1e-5, atol=1e-6):
    theirs = run_in_tf_keras([(program_name, getattr(programs, program_name), {})])[program_name]
    assert sorted(results) == sorted(theirs)
    for name, value in theirs.items():
        got = np.asarray(results[name])
        assert got.shape == value.shape, name
        np.testing.assert_allclose(got.astype(np.float64), value.astype(np.float64), rtol=rtol,
                                   atol=atol, err_msg=name)
