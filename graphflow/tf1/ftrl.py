"""`tf.train.FtrlOptimizer`: FTRL-Proximal (McMahan et al.) built from graph ops.

Per step, as TensorFlow's ApplyFtrl (lr_power -0.5 by default):
accum' = accum + g^2; linear += g - (accum'^-p - accum^-p) / lr * var;
var = (sign(linear) * l1 - linear) / (accum'^-p / lr + 2 * l2) where |linear| > l1, else 0.
The update is composed of elementwise ops and assigns (no fused kernel); the accumulator starts at
`initial_accumulator_value` (0.1) and the linear slot at zero. A sparse gradient (IndexedSlices)
updates only its rows, as TF's SparseApplyFtrl does. The shrinkage variant
(`l2_shrinkage_regularization_strength`) is not provided.
"""

from graphflow.ops import math_ops
from graphflow.ops.core_ops import group
from graphflow.ops.state_ops import assign
from graphflow.tf1 import sparse_updates
from graphflow.tf1.optimizers import Optimizer, _filled_like


class FtrlOptimizer(Optimizer):
    """`FtrlOptimizer(learning_rate, learning_rate_power=-0.5, initial_accumulator_value=0.1,
    l1_regularization_strength=0.0, l2_regularization_strength=0.0)`."""

    def __init__(self, learning_rate, learning_rate_power=-0.5, initial_accumulator_value=0.1,
                 l1_regularization_strength=0.0, l2_regularization_strength=0.0,
                 use_locking=False, name="Ftrl", accum_name=None, linear_name=None,
                 l2_shrinkage_regularization_strength=0.0):
        if initial_accumulator_value < 0.0:
            raise ValueError(f"initial_accumulator_value {initial_accumulator_value} needs to "
                             f"be positive or zero")
        if learning_rate_power > 0.0:
            raise ValueError(f"learning_rate_power {learning_rate_power} needs to be negative "
                             f"or zero")
        if l1_regularization_strength < 0.0 or l2_regularization_strength < 0.0:
            raise ValueError("regularization strengths need to be positive or zero")
        if l2_shrinkage_regularization_strength:
            raise NotImplementedError("FtrlOptimizer: l2_shrinkage_regularization_strength is "
                                      "not implemented in graphflow")
        super().__init__(use_locking, name)
        self._learning_rate = learning_rate
        self._lr_power = learning_rate_power
        self._initial_accumulator_value = initial_accumulator_value
        self._l1 = l1_regularization_strength
        self._l2 = l2_regularization_strength
        self._accum_name = accum_name or name
        self._linear_name = linear_name or (name + "_1")

    def _create_slots(self, var_list):
        for v in var_list:
            self._make_slot(v, lambda v=v: _filled_like(v, self._initial_accumulator_value),
                            "accum", self._accum_name)
            self._zeros_slot(v, "linear", self._linear_name)

    def _hyper_values(self, dt):
        return (self._hyper("learning_rate", self._learning_rate, dt),
                self._hyper("learning_rate_power", -self._lr_power, dt),
                self._hyper("l1", self._l1, dt), self._hyper("l2", self._l2, dt))

    def _apply_dense(self, grad, var):
        accum, linear = self.get_slot(var, "accum"), self.get_slot(var, "linear")
        new_var, new_accum, new_linear = _ftrl_step(var, accum, linear, grad,
                                                    *self._hyper_values(var.dtype))
        # every new value is computed from the old ones before any of them is written
        with var.graph.control_dependencies([new_var, new_linear, new_accum]):
            return group(assign(var, new_var), assign(linear, new_linear),
                         assign(accum, new_accum))

    def _apply_sparse(self, grad, var):
        """TF's SparseApplyFtrl: the same step on the rows at the (unique) indices."""
        hyper = self._hyper_values(var.dtype)
        return sparse_updates.rows_update(
            var, [self.get_slot(var, "accum"), self.get_slot(var, "linear")], grad,
            lambda v, a, lin, g: _ftrl_step(v, a, lin, g, *hyper))


def _ftrl_step(var, accum, linear, grad, lr, power, l1, l2):
    """(new var, new accum, new linear) of one FTRL step."""
    new_accum = accum + grad * grad
    new_pow = math_ops.pow(new_accum, power)
    new_linear = linear + grad - (new_pow - math_ops.pow(accum, power)) / lr * var
    quadratic = new_pow / lr + 2.0 * l2
    shrunk = (math_ops.sign(new_linear) * l1 - new_linear) / quadratic
    new_var = math_ops.where(math_ops.greater(math_ops.abs(new_linear), l1), shrunk,
                             shrunk * 0.0)
    return new_var, new_accum, new_linear


__all__ = ["FtrlOptimizer"]
