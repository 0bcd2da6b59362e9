"""`tf.keras.optimizers`: SGD, Adam, RMSprop with Keras's arguments and defaults, as graphflow
optimizers (`graphflow.tf1.optimizers`), so they also serve plain TF1 code (`minimize`).

Keras's defaults: SGD lr 0.01; Adam lr 0.001, epsilon 1e-7 (the same update as TF1's ApplyAdam);
RMSprop lr 0.001, rho 0.9, epsilon 1e-7 with the mean square starting at zeros (TF1's
tf.train.RMSPropOptimizer starts it at ones). `get('adam')` makes one from a name; a tf.train
optimizer instance passes through.
"""

from graphflow.ops import training_ops
from graphflow.tf1 import optimizers as tf_optimizers
from graphflow.tf1.keras.optimizer_rates import _rate, _RateVariable


class SGD(_RateVariable, tf_optimizers.MomentumOptimizer):
    """`SGD(learning_rate=0.01, momentum=0.0, nesterov=False)`."""

    def __init__(self, learning_rate=None, momentum=0.0, nesterov=False, name="SGD", **kwargs):
        lr = _rate(learning_rate, kwargs, 0.01)
        super().__init__(lr, momentum, use_nesterov=nesterov, name=name)
        self._plain = not momentum and not nesterov

    def _create_slots(self, var_list):
        if not self._plain:
            super()._create_slots(var_list)

    def _apply_dense(self, grad, var):
        if self._plain:
            return training_ops.apply_gradient_descent(
                var, self._hyper("learning_rate", self._learning_rate, var.dtype), grad,
                use_locking=self._use_locking)
        return super()._apply_dense(grad, var)

    def _apply_sparse_duplicate_indices(self, grad, var):
        if self._plain:  # the rows' scatter_sub, as GradientDescentOptimizer's sparse update
            return tf_optimizers.GradientDescentOptimizer._apply_sparse_duplicate_indices(
                self, grad, var)
        return super()._apply_sparse_duplicate_indices(grad, var)


class Adam(_RateVariable, tf_optimizers.AdamOptimizer):
    """`Adam(learning_rate=0.001, beta_1=0.9, beta_2=0.999, epsilon=1e-7)`."""

    _rate_attr = "_lr"

    def __init__(self, learning_rate=None, beta_1=0.9, beta_2=0.999, epsilon=1e-7,
                 amsgrad=False, name="Adam", **kwargs):
        if amsgrad:
            raise NotImplementedError("Adam(amsgrad=True) is not supported")
        super().__init__(_rate(learning_rate, kwargs, 0.001), beta_1, beta_2, epsilon, name=name)


class RMSprop(_RateVariable, tf_optimizers.RMSPropOptimizer):
    """`RMSprop(learning_rate=0.001, rho=0.9, momentum=0.0, epsilon=1e-7, centered=False)`."""

    def __init__(self, learning_rate=None, rho=0.9, momentum=0.0, epsilon=1e-7, centered=False,
                 name="RMSprop", **kwargs):
        super().__init__(_rate(learning_rate, kwargs, 0.001), rho, momentum, epsilon,
                         centered=centered, name=name)

    def _create_slots(self, var_list):
        for v in var_list:
            self._zeros_slot(v, "rms", self._name)
            if self._centered:
                self._zeros_slot(v, "mg", self._name)
            self._zeros_slot(v, "momentum", self._name)


_BY_NAME = {"sgd": SGD, "adam": Adam, "rmsprop": RMSprop}


def _more():
    from graphflow.tf1.keras import optimizers_more as more
    return {"adagrad": more.Adagrad, "adadelta": more.Adadelta, "adamax": more.Adamax,
            "nadam": more.Nadam, "ftrl": more.Ftrl}


def get(identifier):
    """An optimizer from 'adam' / 'sgd' / 'rmsprop' or an optimizer instance."""
    if isinstance(identifier, tf_optimizers.Optimizer):
        return identifier
    known = {**_BY_NAME, **_more()}
    if isinstance(identifier, str) and identifier.lower() in known:
        return known[identifier.lower()]()
    raise ValueError(f"Unknown optimizer: {identifier!r}; graphflow's tf.keras knows "
                     f"{sorted(known)} or an optimizer instance (tf.keras.optimizers.* or "
                     "tf.train.*Optimizer)")


Optimizer = tf_optimizers.Optimizer
__all__ = ["SGD", "Adam", "RMSprop", "Optimizer", "get"]
