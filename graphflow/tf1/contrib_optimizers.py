"""`tf.contrib.layers.optimize_loss`: one call from a loss to a training op, as tf.learn-era
programs use it: the optimizer given by name ('SGD', 'Adam', ...), class, instance or function,
an optional learning-rate variable 'OptimizeLoss/learning_rate' and decay function, gradient noise,
per-variable gradient multipliers, clipping by global norm (or a clipping function), the update
ops run before the loss, and the summaries TF1 writes ('loss', 'learning_rate',
'global_norm/gradient_norm', ...). Returns the loss tensor that runs the update, as TF1 does.
"""

from graphflow.framework import dtypes
from graphflow.framework.graph import GraphKeys, get_default_graph
from graphflow.ops import random_ops
from graphflow.ops.core_ops import Tensor, constant, convert_to_tensor, identity
from graphflow.tf1 import optimizers as _optimizers
from graphflow.tf1.clip_ops import clip_by_global_norm, global_norm
from graphflow.tf1.ftrl import FtrlOptimizer
from graphflow.tf1.init_ops import constant_initializer
from graphflow.tf1.summary.summary_ops import histogram, scalar
from graphflow.tf1.train import get_global_step
from graphflow.tf1.variable_scope import get_variable, variable_scope

OPTIMIZER_CLS_NAMES = {
    "Adagrad": _optimizers.AdagradOptimizer,
    "Adam": _optimizers.AdamOptimizer,
    "Ftrl": FtrlOptimizer,
    "Momentum": lambda learning_rate: _optimizers.MomentumOptimizer(learning_rate, momentum=0.9),
    "RMSProp": _optimizers.RMSPropOptimizer,
    "SGD": _optimizers.GradientDescentOptimizer,
}

OPTIMIZER_SUMMARIES = ["learning_rate", "loss", "gradients", "gradient_norm",
                       "global_gradient_norm"]


def _with_dependencies(dependencies, tensor):
    with get_default_graph().control_dependencies(list(dependencies)):
        return identity(tensor)


def _learning_rate(learning_rate):
    if learning_rate is None:
        return None
    if isinstance(learning_rate, Tensor) and learning_rate.shape.ndims == 0:
        return learning_rate
    if isinstance(learning_rate, float):
        if learning_rate < 0.0:
            raise ValueError(f"Invalid learning_rate {learning_rate}.")
        return get_variable("learning_rate", [], trainable=False,
                            initializer=constant_initializer(learning_rate))
    raise ValueError(f"Learning rate should be 0d Tensor or float. Got {learning_rate} of type "
                     f"{type(learning_rate)}")


def _make_optimizer(optimizer, learning_rate, lr):
    if isinstance(optimizer, str):
        if lr is None:
            raise ValueError(f"Learning rate is None, but should be specified if optimizer is "
                             f"string ({optimizer}).")
        if optimizer not in OPTIMIZER_CLS_NAMES:
            raise ValueError(f"Optimizer name should be one of [{', '.join(OPTIMIZER_CLS_NAMES)}]"
                             f", you provided {optimizer}.")
        return OPTIMIZER_CLS_NAMES[optimizer](learning_rate=lr)
    if isinstance(optimizer, type) and issubclass(optimizer, _optimizers.Optimizer):
        if lr is None:
            raise ValueError(f"Learning rate is None, but should be specified if optimizer is "
                             f"class ({optimizer}).")
        return optimizer(learning_rate=lr)
    if isinstance(optimizer, _optimizers.Optimizer):
        return optimizer
    if callable(optimizer):
        opt = optimizer(lr) if learning_rate is not None else optimizer()
        if not isinstance(opt, _optimizers.Optimizer):
            raise ValueError(f"Unrecognized optimizer: function should return subclass of "
                             f"Optimizer. Got {opt}.")
        return opt
    raise ValueError(f"Unrecognized optimizer: should be string, subclass of Optimizer, instance "
                     f"of subclass of Optimizer or function with one argument. Got {optimizer}.")


def _add_noise(gradients, scale):
    return [(None if g is None else
             g + random_ops.truncated_normal(g.shape.as_list(), dtype=g.dtype) * scale, v)
            for g, v in gradients]


def _multiply(gradients, multipliers):
    out = []
    for grad, var in gradients:
        key = var if var in multipliers else var.name if var.name in multipliers else None
        if grad is not None and key is not None:
            grad = grad * constant(multipliers[key], dtype=dtypes.float32)
        out.append((grad, var))
    return out


def optimize_loss(loss, global_step, learning_rate, optimizer, gradient_noise_scale=None,
                  gradient_multipliers=None, clip_gradients=None, learning_rate_decay_fn=None,
                  update_ops=None, variables=None, name=None, summaries=None,
                  colocate_gradients_with_ops=False, increment_global_step=True):
    """Build the training step for `loss` (a scalar) in variable scope 'OptimizeLoss' and return
    `loss` made to depend on the update (running it trains one step)."""
    loss = convert_to_tensor(loss)
    if loss.shape.ndims not in (None, 0):
        raise ValueError(f"optimize_loss: loss {loss.name} must be a scalar, got shape "
                         f"{loss.shape}")
    if global_step is None:
        global_step = get_global_step()
    elif not (getattr(global_step, "dtype", None) is not None and global_step.dtype.is_integer
              and global_step.shape.ndims in (None, 0)):
        raise TypeError(f"Existing \"global_step\" must be an integer scalar, got {global_step}")
    graph = get_default_graph()
    with variable_scope(name, default_name="OptimizeLoss", values=[loss, global_step]):
        if update_ops is None:
            update_ops = set(graph.get_collection(GraphKeys.UPDATE_OPS))
        if update_ops:
            loss = _with_dependencies(update_ops, loss)
        lr = _learning_rate(learning_rate)
        if summaries is None:
            summaries = ["loss", "learning_rate", "global_gradient_norm"]
        for summary in summaries:
            if summary not in OPTIMIZER_SUMMARIES:
                raise ValueError(f"Summaries should be one of [{', '.join(OPTIMIZER_SUMMARIES)}]"
                                 f", you provided {summary}.")
        if learning_rate is not None and learning_rate_decay_fn is not None:
            if global_step is None:
                raise ValueError("global_step is required for learning_rate_decay_fn.")
            lr = learning_rate_decay_fn(lr, global_step)
            if "learning_rate" in summaries:
                scalar("learning_rate", lr)
        opt = _make_optimizer(optimizer, learning_rate, lr)
        if variables is None:
            variables = graph.get_collection(GraphKeys.TRAINABLE_VARIABLES)
        gradients = opt.compute_gradients(
            loss, variables, colocate_gradients_with_ops=colocate_gradients_with_ops)
        if gradient_noise_scale is not None:
            gradients = _add_noise(gradients, gradient_noise_scale)
        if gradient_multipliers is not None:
            gradients = _multiply(gradients, gradient_multipliers)
            if not gradients:
                raise ValueError("Empty list of (gradient, var) pairs encountered. This is most "
                                 "likely to be caused by an improper value of "
                                 "gradient_multipliers.")
        norm_summaries = "global_gradient_norm" in summaries or "gradient_norm" in summaries
        if norm_summaries:
            scalar("global_norm/gradient_norm", global_norm([g for g, _ in gradients]))
        if isinstance(clip_gradients, float):
            grads, variables_ = zip(*gradients)
            clipped, _ = clip_by_global_norm(list(grads), clip_gradients)
            gradients = list(zip(clipped, variables_))
        elif callable(clip_gradients):
            gradients = clip_gradients(gradients)
        elif clip_gradients is not None:
            raise ValueError(f"Unknown type {type(clip_gradients)} for clip_gradients")
        if "loss" in summaries:
            scalar("loss", loss)
        for grad, var in gradients:
            if grad is not None:
                var_name = var.name.replace(":", "_")
                if "gradients" in summaries:
                    histogram(f"gradients/{var_name}", grad)
                if "gradient_norm" in summaries:
                    scalar(f"gradient_norm/{var_name}", global_norm([grad]))
        if clip_gradients is not None and norm_summaries:
            scalar("global_norm/clipped_gradient_norm", global_norm([g for g, _ in gradients]))
        update = opt.apply_gradients(gradients,
                                     global_step=global_step if increment_global_step else None,
                                     name="train")
        return _with_dependencies([update], loss)


__all__ = ["optimize_loss", "OPTIMIZER_CLS_NAMES", "OPTIMIZER_SUMMARIES"]
