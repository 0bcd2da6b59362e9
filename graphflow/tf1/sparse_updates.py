"""The optimizers' updates for sparse gradients (`tf.IndexedSlices`, the gradient of an
embedding lookup): only the rows a step touched change, as in TF1's `_apply_sparse`.

TF1's optimizers first sum the values of repeated indices (`Optimizer.
_apply_sparse_duplicate_indices`, here `indexed_slices.deduplicate`), then:

* GradientDescent: `scatter_sub(var, indices, lr * values)` (no deduplication: repeated indices
  add up in the scatter).
* Momentum, Adagrad, RMSProp (plain and centered), Adadelta, Ftrl: TF's SparseApply* kernels,
  composed here of graph ops: the rows at `indices` are gathered from the variable and its
  slots, updated with the kernel's arithmetic (the dense update's formula on those rows) and
  written back with ScatterUpdate, the slots and the variable in one group, every new row
  computed before any is written.
* Adam: TF1's `_apply_sparse_shared`: m and v decay densely (m = m * beta1), the scaled values
  are scatter-added at the indices, and the variable takes the dense step lr_t * m / (sqrt(v) +
  epsilon) with lr_t = lr * sqrt(1 - beta2^t) / (1 - beta1^t).

ScatterUpdate/ScatterAdd/ScatterSub change only the named rows (`kernels/cpu/reference/
scatter_kernels.py`), so untouched rows keep their exact bits.
"""

from graphflow.framework.graph import get_default_graph
from graphflow.ops import array_ops, math_ops
from graphflow.ops.core_ops import group
from graphflow.ops.scatter_ops import scatter_add, scatter_sub, scatter_update
from graphflow.ops.state_ops import assign, assign_sub


def scatter_descent(var, lr, grad, use_locking=False):
    """GradientDescent's sparse step: var[indices] -= lr * values (repeated indices add up)."""
    return scatter_sub(var, grad.indices, grad.values * lr, use_locking=use_locking).op


def rows_update(var, slots, grad, compute):
    """Write `compute(var_rows, slot_rows..., grad_values)` (the new rows of the variable and of
    each slot) at `grad.indices` (unique). Returns the group of the writes."""
    indices = grad.indices
    rows = [array_ops.gather(t, indices) for t in (var, *slots)]
    new_rows = compute(*rows, grad.values)
    graph = get_default_graph()
    with graph.control_dependencies(new_rows):  # every row read before any is written
        writes = [scatter_update(t, indices, r) for t, r in zip((var, *slots), new_rows)]
    return group(*writes)


def momentum(var, accum, lr, grad, mom, use_nesterov):
    """SparseApplyMomentum: accum = accum * momentum + g; var -= lr * accum (Nesterov:
    var -= g * lr + lr * momentum * accum)."""
    def compute(v, a, g):
        a = a * mom + g
        step = g * lr + (lr * mom) * a if use_nesterov else lr * a
        return v - step, a
    return rows_update(var, [accum], grad, compute)


def adagrad(var, accum, lr, grad):
    """SparseApplyAdagrad: accum += g * g; var -= lr * g * rsqrt(accum)."""
    def compute(v, a, g):
        a = a + g * g
        return v - lr * g * math_ops.rsqrt(a), a
    return rows_update(var, [accum], grad, compute)


def rms_prop(var, ms, mom, lr, rho, momentum_, epsilon, grad, mg=None):
    """SparseApplyRMSProp: ms = ms * rho + g^2 * (1 - rho); mom = mom * momentum +
    rsqrt(ms + epsilon) * lr * g; var -= mom. Centered (`mg` given): mg = mg * rho + g * (1 - rho)
    and the denominator is rsqrt(ms - mg^2 + epsilon)."""
    one = 1.0 - rho

    def compute(v, s, m, *rest):
        g = rest[-1]
        s = s * rho + math_ops.square(g) * one
        if mg is None:
            denom = s + epsilon
            m = m * momentum_ + math_ops.rsqrt(denom) * lr * g
            return v - m, s, m
        c = rest[0] * rho + g * one
        denom = (s - math_ops.square(c)) + epsilon
        m = m * momentum_ + math_ops.rsqrt(denom) * lr * g
        return v - m, s, m, c
    return rows_update(var, [ms, mom] + ([mg] if mg is not None else []), grad, compute)


def adadelta(var, accum, accum_update, lr, rho, epsilon, grad):
    """SparseApplyAdadelta: accum = accum * rho + g^2 * (1 - rho); update = sqrt(accum_update +
    eps) * rsqrt(accum + eps) * g; var -= lr * update; accum_update = accum_update * rho +
    update^2 * (1 - rho)."""
    def compute(v, a, u, g):
        a = a * rho + math_ops.square(g) * (1.0 - rho)
        update = math_ops.sqrt(u + epsilon) * math_ops.rsqrt(a + epsilon) * g
        u = u * rho + math_ops.square(update) * (1.0 - rho)
        return v - update * lr, a, u
    return rows_update(var, [accum, accum_update], grad, compute)


def adam(var, m, v, lr, beta1, beta2, epsilon, beta1_power, beta2_power, grad, use_locking):
    """TF1 AdamOptimizer._apply_sparse: dense decay of m and v, scatter_add of the scaled
    values, dense variable step."""
    graph = get_default_graph()
    lr_t = lr * math_ops.sqrt(1 - beta2_power) / (1 - beta1_power)
    m_t = assign(m, m * beta1, use_locking=use_locking)
    with graph.control_dependencies([m_t]):
        m_t = scatter_add(m, grad.indices, grad.values * (1 - beta1), use_locking=use_locking)
    v_t = assign(v, v * beta2, use_locking=use_locking)
    with graph.control_dependencies([v_t]):
        v_t = scatter_add(v, grad.indices, (grad.values * grad.values) * (1 - beta2),
                          use_locking=use_locking)
    var_update = assign_sub(var, lr_t * m_t / (math_ops.sqrt(v_t) + epsilon),
                            use_locking=use_locking)
    return group(var_update, m_t, v_t)


__all__ = []
