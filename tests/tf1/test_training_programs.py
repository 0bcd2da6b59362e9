"""TF1 training programs with learning-rate schedules, Adagrad, Adadelta and an
ExponentialMovingAverage (tests/tf1_training_programs.py): their numbers against the same training
written in numpy (float64), and, where TensorFlow is installed, against TensorFlow's."""

import math

import numpy as np
import pytest

import graphflow as tf
from tests import tf1_training_programs as programs
from tests.tf_reference import run_in_tensorflow, tf_python

_OPTIMIZERS = ("adagrad", "adagrad_cosine", "adadelta")


# ---------------------------------------------------------------- numpy references
def _np_schedules(s):
    """Each schedule of `programs.schedules` at global step `s`, from TF1's documented formulas."""
    def poly(lr, steps, end, power, cycle):
        if cycle:
            steps = steps * (1.0 if s == 0 else math.ceil(s / steps))
            step = s
        else:
            step = min(s, steps)
        return (lr - end) * (1 - step / steps) ** power + end

    def cosine(alpha):
        return 0.1 * ((1 - alpha) * 0.5 * (1 + math.cos(math.pi * min(s, 8) / 8)) + alpha)

    def sgdr(first, t_mul, m_mul, alpha):
        fraction = s / first
        if t_mul == 1.0:
            i = math.floor(fraction)
            fraction -= i
        else:
            i = math.floor(math.log(1 - fraction * (1 - t_mul)) / math.log(t_mul))
            fraction = (fraction - (1 - t_mul ** i) / (1 - t_mul)) / t_mul ** i
        return 0.1 * ((1 - alpha) * 0.5 * m_mul ** i * (1 + math.cos(math.pi * fraction)) + alpha)

    def linear_cosine(steps, periods, alpha, beta):
        step = min(s, steps)
        cosine = 0.5 * (1 + math.cos(math.pi * 2 * periods * step / steps))
        return 0.1 * ((alpha + (steps - step) / steps) * cosine + beta)

    return {
        "sgdr": sgdr(3, 2.0, 1.0, 0.0),
        "sgdr_flat": sgdr(4, 1.0, 0.5, 0.1),
        "linear_cosine": linear_cosine(9, 1.5, 0.0, 0.001),
        "exponential": 0.1 * 0.5 ** (s / 4),
        "exponential_staircase": 0.1 * 0.5 ** (s // 4),
        "natural_exp": 0.1 * math.exp(-0.5 * s / 4),
        "natural_exp_staircase": 0.1 * math.exp(-0.5 * (s // 3)),
        "inverse_time": 0.1 / (1 + 0.5 * s / 4),
        "inverse_time_staircase": 0.1 / (1 + 0.5 * (s // 3)),
        "polynomial": poly(0.1, 8, 0.01, 2.0, False),
        "polynomial_cycle": poly(0.1, 5, 0.01, 1.0, True),
        "cosine": cosine(0.0),
        "cosine_alpha": cosine(0.2),
        "piecewise": 0.1 if s <= 3 else 0.05 if s <= 7 else 0.01,
    }


def _np_rate(optimizer, s):
    if optimizer == "adagrad":
        return 0.5 if s <= 5 else 0.2 if s <= 12 else 0.05
    if optimizer == "adagrad_cosine":
        return 0.5 * (0.9 * 0.5 * (1 + math.cos(math.pi * min(s, 15) / 15)) + 0.1)
    return (20.0 - 1.0) * (1 - min(s, 15) / 15) ** 1.5 + 1.0


def _np_softmax_regression(optimizer, steps=20):
    """`programs.softmax_regression` by hand: softmax cross-entropy gradients, the optimizer's
    update rule (TF1's formulas) and the moving average with decay min(0.9, (1 + n) / (10 + n))."""
    rng = np.random.RandomState(3)
    x = rng.randn(32, 5).astype(np.float32).astype(np.float64)
    labels = (x[:, 0] + x[:, 1] > 0).astype(np.int64)
    w = (rng.randn(5, 2) * 0.1).astype(np.float32).astype(np.float64)
    b = np.zeros(2)
    params = [w, b]
    init = 0.5 if optimizer == "adagrad_cosine" else 0.1
    accum = [np.full_like(p, init if optimizer != "adadelta" else 0.0) for p in params]
    accum_update = [np.zeros_like(p) for p in params]
    averages = [p.copy() for p in params]
    losses, rates = [], []
    for step in range(steps):
        logits = x @ params[0] + params[1]
        shifted = logits - logits.max(axis=1, keepdims=True)
        log_p = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
        losses.append(-log_p[np.arange(32), labels].mean())
        d_logits = np.exp(log_p)
        d_logits[np.arange(32), labels] -= 1
        d_logits /= 32
        grads = [x.T @ d_logits, d_logits.sum(axis=0)]
        lr = _np_rate(optimizer, step)
        rates.append(lr)
        for i, g in enumerate(grads):
            if optimizer == "adadelta":
                rho, eps = 0.9, 1e-6
                accum[i] = rho * accum[i] + (1 - rho) * g * g
                update = np.sqrt(accum_update[i] + eps) / np.sqrt(accum[i] + eps) * g
                accum_update[i] = rho * accum_update[i] + (1 - rho) * update * update
                params[i] = params[i] - lr * update
            else:
                accum[i] = accum[i] + g * g
                params[i] = params[i] - lr * g / np.sqrt(accum[i])
        n = step + 1  # the moving average runs after the global step's increment
        decay = min(0.9, (1.0 + n) / (10.0 + n))
        averages = [a - (a - p) * (1 - decay) for a, p in zip(averages, params)]
    return {"losses": np.array(losses), "rates": np.array(rates), "w": params[0], "b": params[1],
            "w_average": averages[0], "b_average": averages[1]}


# ---------------------------------------------------------------- against numpy
def test_schedules_match_their_formulas():
    ours = programs.schedules(tf, np)
    for name, values in ours.items():
        assert values.dtype == np.float32, name
        expected = [_np_schedules(s)[name] for s in range(len(values))]
        np.testing.assert_allclose(values, expected, rtol=2e-6, err_msg=name)


@pytest.mark.parametrize("optimizer", _OPTIMIZERS)
def test_softmax_regression_matches_numpy(optimizer):
    ours = programs.softmax_regression(tf, np, optimizer)
    expected = _np_softmax_regression(optimizer)
    assert ours["losses"][-1] < 0.7 * ours["losses"][0]
    for key, value in expected.items():
        np.testing.assert_allclose(ours[key], value, rtol=2e-4, atol=2e-6, err_msg=key)
    assert ours["average_name"] == "w/ExponentialMovingAverage"
    # a Saver built from variables_to_restore loads each average into its variable
    names = ours["restore_names"].split()
    assert "w/ExponentialMovingAverage" in names and "b/ExponentialMovingAverage" in names
    assert "global_step" in names and "w" not in names


# ---------------------------------------------------------------- against TensorFlow
@pytest.fixture(scope="module")
def tensorflow_results():
    if tf_python() is None:
        pytest.skip("TensorFlow is not installed (set GRAPHFLOW_TF_PYTHON to compare with it)")
    return run_in_tensorflow(
        [("schedules", programs.schedules, {})]
        + [(name, programs.softmax_regression, {"optimizer": name}) for name in _OPTIMIZERS])


def test_schedules_match_tensorflow(tensorflow_results):
    ours = programs.schedules(tf, np)
    theirs = tensorflow_results["schedules"]
    assert sorted(ours) == sorted(theirs)
    for name in ours:
        np.testing.assert_allclose(ours[name], theirs[name], rtol=1e-6, err_msg=name)


@pytest.mark.parametrize("optimizer", _OPTIMIZERS)
def test_softmax_regression_matches_tensorflow(tensorflow_results, optimizer):
    ours = programs.softmax_regression(tf, np, optimizer)
    theirs = tensorflow_results[optimizer]
    assert sorted(ours) == sorted(theirs)
    for key in ours:
        if isinstance(ours[key], str):
            assert ours[key] == str(theirs[key]), key
        else:
            np.testing.assert_allclose(ours[key], theirs[key], rtol=1e-5, atol=1e-6,
                                       err_msg=key)
