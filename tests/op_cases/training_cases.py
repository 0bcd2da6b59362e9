"""Cases for the fused training ops (ApplyGradientDescent, ApplyMomentum, ApplyAdam, ApplyRMSProp,
ApplyCenteredRMSProp, ApplyAdagrad, ApplyAdadelta), plus the numpy update rules they are checked against.

Each case builds a variable (and its slot variables) with known, non-trivial values, initializes
them in the same run (control dependencies on the initializers) and applies one update with the
fed gradient and learning rate; the op's output is the updated variable.
"""

import numpy as np

import graphflow as tf
from graphflow.ops import training_ops
from tests.op_cases import OpCase, positive, rand

VAR = rand(3, 4, seed=11)
SLOT_A = rand(3, 4, seed=12)
SLOT_B = positive(3, 4) * 0.5


# ---------------------------------------------------------------- numpy update rules (TF1 docs)
def np_sgd(var, grad, lr):
    return var - lr * grad


def np_momentum(var, accum, grad, lr, momentum, nesterov=False):
    accum = momentum * accum + grad
    if nesterov:
        return var - lr * (grad + momentum * accum), accum
    return var - lr * accum, accum


def np_adam(var, m, v, grad, lr, beta1, beta2, epsilon, t, nesterov=False):
    """Step `t` (1-based) of Adam with TF1's bias correction folded into the learning rate."""
    m = beta1 * m + (1 - beta1) * grad
    v = beta2 * v + (1 - beta2) * grad * grad
    lr_t = lr * np.sqrt(1 - beta2 ** t) / (1 - beta1 ** t)
    direction = beta1 * m + (1 - beta1) * grad if nesterov else m
    return var - lr_t * direction / (np.sqrt(v) + epsilon), m, v


def np_rmsprop(var, ms, mom, grad, lr, decay, momentum, epsilon, mg=None):
    """One RMSProp step; pass `mg` for the centered variant (returns it too)."""
    ms = decay * ms + (1 - decay) * grad * grad
    if mg is None:
        denom = ms + epsilon
    else:
        mg = decay * mg + (1 - decay) * grad
        denom = ms - mg * mg + epsilon
    mom = momentum * mom + lr * grad / np.sqrt(denom)
    return var - mom, ms, mom, mg


def np_adagrad(var, accum, grad, lr):
    accum = accum + grad * grad
    return var - lr * grad / np.sqrt(accum), accum


def np_adadelta(var, accum, accum_update, grad, lr, rho, epsilon):
    accum = rho * accum + (1 - rho) * grad * grad
    update = np.sqrt(accum_update + epsilon) / np.sqrt(accum + epsilon) * grad
    accum_update = rho * accum_update + (1 - rho) * update * update
    return var - lr * update, accum, accum_update


# ---------------------------------------------------------------- graph builders
def _vars(grad, *values):
    """Variables holding `values` in the gradient's dtype, and their initializers."""
    variables = [tf.Variable(np.asarray(v, grad.dtype.as_numpy_dtype)) for v in values]
    return variables, [v.initializer for v in variables]


def _build_sgd(grad, lr):
    (var,), inits = _vars(grad, VAR)
    with tf.control_dependencies(inits):
        return training_ops.apply_gradient_descent(var, lr, grad).outputs[0]


def _build_momentum(nesterov):
    def build(grad, lr):
        (var, accum), inits = _vars(grad, VAR, SLOT_A)
        with tf.control_dependencies(inits):
            return training_ops.apply_momentum(var, accum, lr, grad, 0.9,
                                               use_nesterov=nesterov).outputs[0]
    return build


def _build_adam(nesterov):
    def build(grad, lr):
        (var, m, v), inits = _vars(grad, VAR, SLOT_A, SLOT_B)
        with tf.control_dependencies(inits):
            return training_ops.apply_adam(var, m, v, 0.9 ** 3, 0.999 ** 3, lr, 0.9, 0.999, 1e-8,
                                           grad, use_nesterov=nesterov).outputs[0]
    return build


def _build_rmsprop(centered):
    def build(grad, lr):
        if centered:
            (var, mg, ms, mom), inits = _vars(grad, VAR, SLOT_A * 0.1, SLOT_B, SLOT_A)
        else:
            (var, ms, mom), inits = _vars(grad, VAR, SLOT_B, SLOT_A)
        with tf.control_dependencies(inits):
            if centered:
                return training_ops.apply_centered_rms_prop(var, mg, ms, mom, lr, 0.9, 0.5, 1e-10,
                                                            grad).outputs[0]
            return training_ops.apply_rms_prop(var, ms, mom, lr, 0.9, 0.5, 1e-10, grad).outputs[0]
    return build


def _build_adagrad(grad, lr):
    (var, accum), inits = _vars(grad, VAR, SLOT_B)
    with tf.control_dependencies(inits):
        return training_ops.apply_adagrad(var, accum, lr, grad).outputs[0]


def _build_adadelta(grad, lr):
    (var, accum, accum_update), inits = _vars(grad, VAR, SLOT_B, SLOT_B * 0.01)
    with tf.control_dependencies(inits):
        return training_ops.apply_adadelta(var, accum, accum_update, lr, 0.95, 1e-6,
                                           grad).outputs[0]


GRAD = rand(3, 4, seed=13)
LR = np.array(0.05)
_INPUTS = [GRAD, LR]

CASES = [
    OpCase("ApplyGradientDescent", _build_sgd, _INPUTS, lambda g, lr: np_sgd(VAR, g, lr),
           grad=False),
    OpCase("ApplyGradientDescent", _build_sgd, [GRAD.astype(np.float32), LR.astype(np.float32)],
           lambda g, lr: np_sgd(VAR, g, lr), grad=False, name="ApplyGradientDescent[f32]"),
    OpCase("ApplyMomentum", _build_momentum(False), _INPUTS,
           lambda g, lr: np_momentum(VAR, SLOT_A, g, lr, 0.9)[0], grad=False),
    OpCase("ApplyMomentum", _build_momentum(True), _INPUTS,
           lambda g, lr: np_momentum(VAR, SLOT_A, g, lr, 0.9, nesterov=True)[0], grad=False,
           name="ApplyMomentum[nesterov]"),
    OpCase("ApplyAdam", _build_adam(False), _INPUTS,
           lambda g, lr: np_adam(VAR, SLOT_A, SLOT_B, g, lr, 0.9, 0.999, 1e-8, 3)[0], grad=False),
    OpCase("ApplyAdam", _build_adam(True), _INPUTS,
           lambda g, lr: np_adam(VAR, SLOT_A, SLOT_B, g, lr, 0.9, 0.999, 1e-8, 3,
                                 nesterov=True)[0], grad=False, name="ApplyAdam[nesterov]"),
    OpCase("ApplyRMSProp", _build_rmsprop(False), _INPUTS,
           lambda g, lr: np_rmsprop(VAR, SLOT_B, SLOT_A, g, lr, 0.9, 0.5, 1e-10)[0], grad=False),
    OpCase("ApplyCenteredRMSProp", _build_rmsprop(True), _INPUTS,
           lambda g, lr: np_rmsprop(VAR, SLOT_B, SLOT_A, g, lr, 0.9, 0.5, 1e-10,
                                    mg=SLOT_A * 0.1)[0], grad=False),
    OpCase("ApplyAdagrad", _build_adagrad, _INPUTS,
           lambda g, lr: np_adagrad(VAR, SLOT_B, g, lr)[0], grad=False),
    OpCase("ApplyAdadelta", _build_adadelta, _INPUTS,
           lambda g, lr: np_adadelta(VAR, SLOT_B, SLOT_B * 0.01, g, lr, 0.95, 1e-6)[0],
           grad=False),
]
