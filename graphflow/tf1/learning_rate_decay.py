"""TF1's learning-rate schedules (`tf.train.exponential_decay`, `piecewise_constant`,
`polynomial_decay`, `cosine_decay`, `cosine_decay_restarts`, `linear_cosine_decay`,
`inverse_time_decay`, `natural_exp_decay`).

Each schedule is a small composite of elementwise ops on the global step, computed in the
learning rate's dtype as TF1 does, so the decayed rate is a tensor re-evaluated on every run.
"""

import math

from graphflow.framework import dtypes
from graphflow.framework.graph import get_default_graph
from graphflow.ops import math_ops
from graphflow.ops.core_ops import convert_to_tensor
from graphflow.ops.state_ops import Variable


def _step(global_step, dtype, schedule):
    """The global step as a tensor of `dtype` (TF1 casts it to the learning rate's dtype)."""
    if global_step is None:
        raise ValueError(f"global_step is required for {schedule}.")
    step = global_step.value() if isinstance(global_step, Variable) else global_step
    step = convert_to_tensor(step)
    if step.dtype != dtype:
        step = math_ops.cast(step, dtype)
    return step


def _progress(learning_rate, global_step, decay_steps, staircase, schedule):
    """(learning rate, its dtype, global_step / decay_steps floored when `staircase`)."""
    lr = convert_to_tensor(learning_rate, name="learning_rate")
    dtype = lr.dtype
    p = _step(global_step, dtype, schedule) / convert_to_tensor(decay_steps, dtype=dtype)
    if staircase:
        p = math_ops.floor(p)
    return lr, dtype, p


def exponential_decay(learning_rate, global_step, decay_steps, decay_rate, staircase=False,
                      name=None):
    """learning_rate * decay_rate ** (global_step / decay_steps) (floored when `staircase`)."""
    with get_default_graph().name_scope(name or "ExponentialDecay"):
        lr, dtype, p = _progress(learning_rate, global_step, decay_steps, staircase,
                                 "exponential_decay")
        return math_ops.multiply(lr, math_ops.pow(convert_to_tensor(decay_rate, dtype=dtype), p))


def natural_exp_decay(learning_rate, global_step, decay_steps, decay_rate, staircase=False,
                      name=None):
    """learning_rate * exp(-decay_rate) ** (global_step / decay_steps), as TF1 computes
    exp(-decay_rate * p): an exponential decay with rate exp(-decay_rate)."""
    with get_default_graph().name_scope(name or "NaturalExpDecay"):
        lr, dtype, p = _progress(learning_rate, global_step, decay_steps, staircase,
                                 "natural_exp_decay")
        rate = math_ops.exp(math_ops.negative(convert_to_tensor(decay_rate, dtype=dtype)))
        return math_ops.multiply(lr, math_ops.pow(rate, p))


def inverse_time_decay(learning_rate, global_step, decay_steps, decay_rate, staircase=False,
                       name=None):
    """learning_rate / (1 + decay_rate * global_step / decay_steps) (floored when `staircase`)."""
    with get_default_graph().name_scope(name or "InverseTimeDecay"):
        lr, dtype, p = _progress(learning_rate, global_step, decay_steps, staircase,
                                 "inverse_time_decay")
        denom = math_ops.add(convert_to_tensor(1, dtype=dtype),
                             math_ops.multiply(convert_to_tensor(decay_rate, dtype=dtype), p))
        return math_ops.divide(lr, denom)


def polynomial_decay(learning_rate, global_step, decay_steps, end_learning_rate=0.0001, power=1.0,
                     cycle=False, name=None):
    """(learning_rate - end) * (1 - step / decay_steps) ** power + end, with the step held at
    decay_steps afterwards, or (`cycle`) decay_steps stretched to the next multiple past the step."""
    with get_default_graph().name_scope(name or "PolynomialDecay"):
        lr = convert_to_tensor(learning_rate, name="learning_rate")
        dtype = lr.dtype
        end = convert_to_tensor(end_learning_rate, dtype=dtype)
        power = convert_to_tensor(power, dtype=dtype)
        step = _step(global_step, dtype, "polynomial_decay")
        steps = convert_to_tensor(decay_steps, dtype=dtype)
        if cycle:
            # the multiplier is 1 at step 0 (TF1: cond(step == 0, 1, ceil(step / decay_steps)))
            multiplier = math_ops.where(math_ops.equal(step, convert_to_tensor(0, dtype=dtype)),
                                        convert_to_tensor(1, dtype=dtype),
                                        math_ops.ceil(step / steps))
            steps = math_ops.multiply(steps, multiplier)
        else:
            step = math_ops.minimum(step, steps)
        p = math_ops.divide(step, steps)
        one = convert_to_tensor(1, dtype=dtype)
        return math_ops.add(math_ops.multiply(lr - end, math_ops.pow(one - p, power)), end)


def cosine_decay(learning_rate, global_step, decay_steps, alpha=0.0, name=None):
    """learning_rate * ((1 - alpha) * 0.5 * (1 + cos(pi * min(step, decay_steps) / decay_steps))
    + alpha)."""
    with get_default_graph().name_scope(name or "CosineDecay"):
        lr = convert_to_tensor(learning_rate, name="learning_rate")
        dtype = lr.dtype
        steps = convert_to_tensor(decay_steps, dtype=dtype)
        step = math_ops.minimum(_step(global_step, dtype, "cosine_decay"), steps)
        fraction = step / steps
        cosine = 0.5 * (1.0 + math_ops.cos(convert_to_tensor(math.pi, dtype=dtype) * fraction))
        decayed = (1 - convert_to_tensor(alpha, dtype=dtype)) * cosine + alpha
        return math_ops.multiply(lr, decayed)


def cosine_decay_restarts(learning_rate, global_step, first_decay_steps, t_mul=2.0, m_mul=1.0,
                          alpha=0.0, name=None):
    """SGDR: cosine decays over periods first_decay_steps * t_mul ** i, the i-th starting from
    learning_rate * m_mul ** i, floored at alpha times that."""
    with get_default_graph().name_scope(name or "SGDRDecay"):
        lr = convert_to_tensor(learning_rate, name="learning_rate")
        dtype = lr.dtype
        step = _step(global_step, dtype, "cosine_decay_restarts")
        fraction = step / convert_to_tensor(first_decay_steps, dtype=dtype)
        t = convert_to_tensor(t_mul, dtype=dtype)
        one = convert_to_tensor(1, dtype=dtype)

        def geometric():
            i = math_ops.floor(math_ops.log(one - fraction * (one - t)) / math_ops.log(t))
            done = (one - math_ops.pow(t, i)) / (one - t)
            return i, (fraction - done) / math_ops.pow(t, i)

        def arithmetic():
            i = math_ops.floor(fraction)
            return i, fraction - i

        if isinstance(t_mul, (int, float)):  # TF1 picks the branch by t_mul == 1 (a cond)
            i_restart, fraction = arithmetic() if t_mul == 1.0 else geometric()
        else:
            g_i, g_f = geometric()
            a_i, a_f = arithmetic()
            unit = math_ops.equal(t, one)
            i_restart, fraction = math_ops.where(unit, a_i, g_i), math_ops.where(unit, a_f, g_f)
        m_fac = math_ops.pow(convert_to_tensor(m_mul, dtype=dtype), i_restart)
        pi = convert_to_tensor(math.pi, dtype=dtype)
        cosine = 0.5 * m_fac * (1.0 + math_ops.cos(pi * fraction))
        decayed = (1 - convert_to_tensor(alpha, dtype=dtype)) * cosine + alpha
        return math_ops.multiply(lr, decayed)


def linear_cosine_decay(learning_rate, global_step, decay_steps, num_periods=0.5, alpha=0.0,
                        beta=0.001, name=None):
    """learning_rate * ((alpha + linear) * cosine + beta) with linear = 1 - step / decay_steps and
    cosine = 0.5 * (1 + cos(2 pi num_periods step / decay_steps)), step held at decay_steps."""
    with get_default_graph().name_scope(name or "LinearCosineDecay"):
        lr = convert_to_tensor(learning_rate, name="learning_rate")
        dtype = lr.dtype
        steps = convert_to_tensor(decay_steps, dtype=dtype)
        step = math_ops.minimum(_step(global_step, dtype, "linear_cosine_decay"), steps)
        linear = (steps - step) / steps
        fraction = 2.0 * convert_to_tensor(num_periods, dtype=dtype) * (step / steps)
        cosine = 0.5 * (1.0 + math_ops.cos(convert_to_tensor(math.pi, dtype=dtype) * fraction))
        decayed = (convert_to_tensor(alpha, dtype=dtype) + linear) * cosine + beta
        return math_ops.multiply(lr, decayed)


def piecewise_constant(x, boundaries, values, name=None):
    """values[0] while x <= boundaries[0], values[i] while boundaries[i-1] < x <= boundaries[i],
    values[-1] once x > boundaries[-1]. The boundaries take x's dtype; the values share one."""
    if len(boundaries) != len(values) - 1:
        raise ValueError("The length of boundaries should be 1 less than the length of values")
    with get_default_graph().name_scope(name or "PiecewiseConstant"):
        x = convert_to_tensor(x)
        values = [convert_to_tensor(v) for v in values]
        for v in values[1:]:
            if v.dtype.base_dtype != values[0].dtype.base_dtype:
                raise ValueError(f"Values must have elements all with the same dtype "
                                 f"({values[0].dtype.name} != {v.dtype.name}).")
        bounds = []
        for b in boundaries:
            b = convert_to_tensor(b)
            if b.dtype.base_dtype != x.dtype.base_dtype:
                if x.dtype in (dtypes.int32, dtypes.int64) and b.dtype in (dtypes.int32,
                                                                           dtypes.int64):
                    b = math_ops.cast(b, x.dtype)  # TF1 converts int boundaries to x's int type
                else:
                    raise ValueError(f"Boundaries ({b.dtype.name}) must have the same dtype as "
                                     f"x ({x.dtype.name}).")
            bounds.append(b)
        result = values[-1]
        for b, v in reversed(list(zip(bounds, values[:-1]))):
            result = math_ops.where(math_ops.less_equal(x, b), v, result)
        return result


__all__ = ["exponential_decay", "natural_exp_decay", "inverse_time_decay", "polynomial_decay",
           "cosine_decay", "cosine_decay_restarts", "linear_cosine_decay", "piecewise_constant"]
