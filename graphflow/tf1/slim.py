"""`tf.contrib.slim`: the TF-Slim names research code of the TF1 era imports as `slim` — the
contrib layers (`slim.conv2d`, `fully_connected`, `max_pool2d`, `batch_norm`, ...), `arg_scope`,
the variable helpers of contrib.framework, and slim's own small layers: `dropout` (keep_prob),
`repeat`, `stack`, `one_hot_encoding`, `softmax`, and `slim.losses` (TF1's tf.losses).

`slim.learning.train` (a training loop with queue runners and a supervisor) is not provided: use a
MonitoredTrainingSession or a plain Session loop.
"""

from graphflow.framework.graph import name_scope
from graphflow.ops import array_ops, nn_ops, shape_ops
from graphflow.ops.core_ops import convert_to_tensor
from graphflow.tf1 import contrib_framework, contrib_layers, variable_scope
from graphflow.tf1.arg_scope import add_arg_scope, arg_scope  # noqa: F401
from graphflow.tf1.contrib_framework import *  # noqa: F401,F403
from graphflow.tf1.contrib_layers import *  # noqa: F401,F403


@add_arg_scope
def dropout(inputs, keep_prob=0.5, noise_shape=None, is_training=True, outputs_collections=None,
            scope=None, seed=None):
    """Dropout that keeps each element with probability `keep_prob` while training and is the
    identity otherwise (`is_training` a Python bool or a boolean tensor)."""
    with name_scope(scope, "Dropout"):
        x = convert_to_tensor(inputs)
        if is_training is True:
            return nn_ops.dropout(x, keep_prob=keep_prob, noise_shape=noise_shape, seed=seed)
        if is_training is False:
            return x
        from graphflow.ops.control_flow_ops import cond
        return cond(is_training,
                    lambda: nn_ops.dropout(x, keep_prob=keep_prob, noise_shape=noise_shape,
                                           seed=seed),
                    lambda: x)


def repeat(inputs, repetitions, layer, *args, **kwargs):
    """Apply `layer` `repetitions` times, scopes '<scope>/<scope>_1', '_2', ..."""
    scope = kwargs.pop("scope", None)
    name = scope or getattr(layer, "__name__", "repeat")
    with variable_scope.variable_scope(scope, default_name="Repeat"):
        outputs = inputs
        for i in range(repetitions):
            kwargs["scope"] = f"{name}_{i + 1}"
            outputs = layer(outputs, *args, **kwargs)
        return outputs


def stack(inputs, layer, stack_args, **kwargs):
    """Apply `layer` once per element of `stack_args` (a tuple of positional args, or one arg),
    scopes '<scope>/<scope>_1', '_2', ..."""
    scope = kwargs.pop("scope", None)
    name = scope or getattr(layer, "__name__", "stack")
    with variable_scope.variable_scope(scope, default_name="Stack"):
        outputs = inputs
        for i, args in enumerate(stack_args):
            kwargs["scope"] = f"{name}_{i + 1}"
            args = args if isinstance(args, (list, tuple)) else (args,)
            outputs = layer(outputs, *args, **kwargs)
        return outputs


def one_hot_encoding(labels, num_classes, on_value=1.0, off_value=0.0, outputs_collections=None,
                     scope=None):
    with name_scope(scope, "OneHotEncoding"):
        return array_ops.one_hot(labels, num_classes, on_value=on_value, off_value=off_value)


def softmax(logits, scope=None):
    """Softmax over the last axis of a tensor of any rank."""
    with name_scope(scope, "softmax"):
        logits = convert_to_tensor(logits)
        return shape_ops.reshape(nn_ops.softmax(logits), shape_ops.shape(logits))


_own = ["dropout", "repeat", "stack", "one_hot_encoding", "softmax", "arg_scope",
        "add_arg_scope"]
__all__ = sorted(set(contrib_layers.__all__) | set(contrib_framework.__all__) | set(_own))
