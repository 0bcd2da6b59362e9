"""`tf.keras.optimizers` Adagrad, Adadelta, Adamax, Nadam and Ftrl with Keras 2's arguments,
defaults and update rules (TF 1.15's OptimizerV2 / tf_keras's legacy optimizers), as graphflow
optimizers usable in `model.compile` and in plain TF1 code (`minimize`).

The rules, per variable and step t (1, 2, ...):
- Adagrad: accum += g^2; var -= lr * g / (sqrt(accum) + epsilon) (accum starts at 0.1);
- Adadelta: TF's ApplyAdadelta (lr 0.001, rho 0.95, epsilon 1e-7);
- Adamax: m = b1 m + (1 - b1) g; v = max(b2 v, |g|); var -= lr / (1 - b1^t) * m / (v + eps);
- Nadam: Keras's schedule mu_t = b1 (1 - 0.5 * 0.96^(0.004 t)), the running product of the mu's
  (`m_cache`), g' = g / (1 - prod_t), m' = m / (1 - prod_t * mu_{t+1}), v' = v / (1 - b2^t),
  var -= lr * ((1 - mu_t) g' + mu_{t+1} m') / (sqrt(v') + eps);
- Ftrl: tf.train.FtrlOptimizer's rule with Keras's defaults (lr 0.001).
`iterations` counts the steps (Adamax and Nadam read it for t).
"""

from graphflow.framework.graph import get_default_graph
from graphflow.ops import math_ops
from graphflow.ops.core_ops import group
from graphflow.ops.state_ops import assign
from graphflow.tf1 import optimizers as tf_optimizers
from graphflow.tf1.ftrl import FtrlOptimizer
from graphflow.tf1.keras.optimizer_rates import _rate, _RateVariable


class _Counted(tf_optimizers.Optimizer):
    """An optimizer with Keras's `iterations` step counter (a float variable here, advanced
    after each step's updates)."""

    def _create_slots(self, var_list):
        first = min(var_list, key=lambda v: v.name)
        self._non_slot_variable(0.0, self._name + "/iter", first.dtype, first.graph)

    def _step(self, dtype):
        """t of the step being applied (iterations + 1) as `dtype`."""
        iterations = self._get_non_slot(self._name + "/iter", get_default_graph())
        return math_ops.cast(iterations, dtype) + 1.0

    def _advance(self, update_ops, name_scope, extra=()):
        graph = get_default_graph()
        iterations = self._get_non_slot(self._name + "/iter", graph)
        with graph.control_dependencies(update_ops):
            advanced = [iterations.assign_add(1.0)] + [fn() for fn in extra]
        return group(*update_ops, *advanced, name=name_scope)

    @property
    def iterations(self):
        return self._get_non_slot(self._name + "/iter", get_default_graph())


class Adagrad(_RateVariable, tf_optimizers.Optimizer):
    """`Adagrad(learning_rate=0.001, initial_accumulator_value=0.1, epsilon=1e-7)`."""

    def __init__(self, learning_rate=None, initial_accumulator_value=0.1, epsilon=1e-7,
                 name="Adagrad", **kwargs):
        if initial_accumulator_value < 0.0:
            raise ValueError(f"initial_accumulator_value must be non-negative: "
                             f"{initial_accumulator_value}")
        super().__init__(False, name)
        self._learning_rate = _rate(learning_rate, kwargs, 0.001)
        self._initial_accumulator_value = float(initial_accumulator_value)
        self._epsilon = epsilon

    def _create_slots(self, var_list):
        for v in var_list:
            self._make_slot(v, lambda v=v: tf_optimizers._filled_like(
                v, self._initial_accumulator_value), "accumulator", self._name)

    def _apply_dense(self, grad, var):
        dt = var.dtype
        accum = self.get_slot(var, "accumulator")
        new_accum = assign(accum, accum + grad * grad)
        lr = self._hyper("learning_rate", self._learning_rate, dt)
        eps = self._hyper("epsilon", self._epsilon, dt)
        return assign(var, var - lr * grad / (math_ops.sqrt(new_accum) + eps)).op


class Adadelta(_RateVariable, tf_optimizers.AdadeltaOptimizer):
    """`Adadelta(learning_rate=0.001, rho=0.95, epsilon=1e-7)`."""

    _rate_attr = "_lr"

    def __init__(self, learning_rate=None, rho=0.95, epsilon=1e-7, name="Adadelta", **kwargs):
        super().__init__(_rate(learning_rate, kwargs, 0.001), rho, epsilon, name=name)


class Adamax(_RateVariable, _Counted):
    """`Adamax(learning_rate=0.001, beta_1=0.9, beta_2=0.999, epsilon=1e-7)`."""

    def __init__(self, learning_rate=None, beta_1=0.9, beta_2=0.999, epsilon=1e-7,
                 name="Adamax", **kwargs):
        super().__init__(False, name)
        self._learning_rate = _rate(learning_rate, kwargs, 0.001)
        self._beta_1, self._beta_2, self._epsilon = beta_1, beta_2, epsilon

    def _create_slots(self, var_list):
        super()._create_slots(var_list)
        for v in var_list:
            self._zeros_slot(v, "m", self._name)
            self._zeros_slot(v, "v", self._name)

    def _apply_dense(self, grad, var):
        dt = var.dtype
        lr = self._hyper("learning_rate", self._learning_rate, dt)
        b1, b2 = self._hyper("beta_1", self._beta_1, dt), self._hyper("beta_2", self._beta_2, dt)
        eps = self._hyper("epsilon", self._epsilon, dt)
        m, v = self.get_slot(var, "m"), self.get_slot(var, "v")
        new_m = assign(m, b1 * m + (1.0 - b1) * grad)
        new_v = assign(v, math_ops.maximum(b2 * v, math_ops.abs(grad)))
        correction = 1.0 - math_ops.pow(b1, self._step(dt))
        return assign(var, var - lr / correction * new_m / (new_v + eps)).op

    def _finish(self, update_ops, name_scope):
        return self._advance(update_ops, name_scope)


class Nadam(_RateVariable, _Counted):
    """`Nadam(learning_rate=0.001, beta_1=0.9, beta_2=0.999, epsilon=1e-7)`."""

    _DECAY = 0.004

    def __init__(self, learning_rate=None, beta_1=0.9, beta_2=0.999, epsilon=1e-7, name="Nadam",
                 **kwargs):
        kwargs.pop("schedule_decay", None)
        super().__init__(False, name)
        self._learning_rate = _rate(learning_rate, kwargs, 0.001)
        self._beta_1, self._beta_2, self._epsilon = beta_1, beta_2, epsilon
        self._step_cache = {}

    def _create_slots(self, var_list):
        super()._create_slots(var_list)
        first = min(var_list, key=lambda v: v.name)
        self._non_slot_variable(1.0, self._name + "/momentum_cache", first.dtype, first.graph)
        for v in var_list:
            self._zeros_slot(v, "m", self._name)
            self._zeros_slot(v, "v", self._name)

    def _schedule(self, dt):
        """(mu_t, mu_{t+1}, prod_t, prod_t * mu_{t+1}) of this step, built once per dtype."""
        if dt not in self._step_cache:
            b1 = self._hyper("beta_1", self._beta_1, dt)
            t = self._step(dt)
            mu_t = b1 * (1.0 - 0.5 * math_ops.pow(0.96, self._DECAY * t))
            mu_next = b1 * (1.0 - 0.5 * math_ops.pow(0.96, self._DECAY * (t + 1.0)))
            cache = self._get_non_slot(self._name + "/momentum_cache", get_default_graph())
            product = math_ops.cast(cache, dt) * mu_t
            self._step_cache[dt] = (mu_t, mu_next, product, product * mu_next)
        return self._step_cache[dt]

    def _apply_dense(self, grad, var):
        dt = var.dtype
        lr = self._hyper("learning_rate", self._learning_rate, dt)
        b2 = self._hyper("beta_2", self._beta_2, dt)
        b1 = self._hyper("beta_1", self._beta_1, dt)
        eps = self._hyper("epsilon", self._epsilon, dt)
        mu_t, mu_next, product, product_next = self._schedule(dt)
        m, v = self.get_slot(var, "m"), self.get_slot(var, "v")
        g_prime = grad / (1.0 - product)
        new_m = assign(m, b1 * m + (1.0 - b1) * grad)
        new_v = assign(v, b2 * v + (1.0 - b2) * math_ops.square(grad))
        m_prime = new_m / (1.0 - product_next)
        v_prime = new_v / (1.0 - math_ops.pow(b2, self._step(dt)))
        m_bar = (1.0 - mu_t) * g_prime + mu_next * m_prime
        return assign(var, var - lr * m_bar / (math_ops.sqrt(v_prime) + eps)).op

    def _finish(self, update_ops, name_scope):
        cache = self._get_non_slot(self._name + "/momentum_cache", get_default_graph())
        product = self._schedule(cache.dtype)[2]
        self._step_cache = {}
        return self._advance(update_ops, name_scope, [lambda: cache.assign(product)])


class Ftrl(_RateVariable, FtrlOptimizer):
    """`Ftrl(learning_rate=0.001, learning_rate_power=-0.5, initial_accumulator_value=0.1,
    l1_regularization_strength=0.0, l2_regularization_strength=0.0)`."""

    def __init__(self, learning_rate=None, learning_rate_power=-0.5,
                 initial_accumulator_value=0.1, l1_regularization_strength=0.0,
                 l2_regularization_strength=0.0, name="Ftrl",
                 l2_shrinkage_regularization_strength=0.0, **kwargs):
        super().__init__(_rate(learning_rate, kwargs, 0.001), learning_rate_power,
                         initial_accumulator_value, l1_regularization_strength,
                         l2_regularization_strength, name=name,
                         l2_shrinkage_regularization_strength=l2_shrinkage_regularization_strength)


__all__ = ["Adagrad", "Adadelta", "Adamax", "Nadam", "Ftrl"]
