"""Comparing graphflow's results of a Keras program module (keras_backend_programs.py,
keras_layer_programs.py) with TensorFlow's: the recorded numbers (keras_*_recorded.py) always, a
live tf_keras run where GRAPHFLOW_TF_PYTHON is set. Names ending in `prefix` select part of a
program's results."""

import numpy as np

import graphflow as tf
from tests.tf_reference import run_in_tf_keras

_CACHE = {}


def ours(programs, program_name):
    """graphflow's results of a program (computed once per test process)."""
    key = (programs.__name__, program_name)
    if key not in _CACHE:
        _CACHE[key] = getattr(programs, program_name)(tf, np)
    return _CACHE[key]


def _check(name, got, expected, rtol, atol):
    got = np.asarray(got)
    if expected.dtype.kind in "US":
        assert [str(v) for v in got.ravel()] == [str(v) for v in expected.ravel()], name
        return
    assert got.shape == expected.shape, (name, got.shape, expected.shape)
    np.testing.assert_allclose(got.astype(np.float64), expected.astype(np.float64), rtol=rtol,
                               atol=atol, err_msg=name)


def _selected(names, prefix):
    return sorted(n for n in names if prefix is None or n == prefix or n.startswith(prefix + "/"))


def assert_matches_recorded(results, recorded, prefix=None, rtol=2e-5, atol=2e-6):
    names = _selected(recorded, prefix)
    assert names and names == _selected(results, prefix)
    for name in names:
        dtype, shape, values = recorded[name]
        if dtype == "str":
            expected = np.array(values, dtype=str).reshape(shape)
        else:
            expected = np.asarray(values, dtype=np.float64).reshape(shape)
            assert np.asarray(results[name]).dtype.kind == np.dtype(dtype).kind, name
        _check(name, results[name], expected, rtol, atol)


def assert_matches_live(programs, program_name, results, rtol=1e-5, atol=1e-6, prefixes=None):
    """Compares with a live tf_keras run of the program (one run per test process), all names
    or those under `prefixes`."""
    key = ("tf_keras", programs.__name__, program_name)
    if key not in _CACHE:
        _CACHE[key] = run_in_tf_keras([(program_name, getattr(programs, program_name),
                                        {})])[program_name]
    theirs = _CACHE[key]
    names = sorted(theirs) if prefixes is None else \
        sorted({n for p in prefixes for n in _selected(theirs, p)})
    assert names and names == (sorted(results) if prefixes is None else
                               sorted({n for p in prefixes for n in _selected(results, p)}))
    for name in names:
        _check(name, results[name], theirs[name], rtol, atol)
