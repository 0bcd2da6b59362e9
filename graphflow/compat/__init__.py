"""`tf.compat`: what TF1 programs written for TensorFlow 2's `tf.compat.v1` expect.

`import graphflow.compat.v1 as tf` gives graphflow itself (graphflow *is* the TF1 API), and the
switches such programs call first (`tf.disable_eager_execution()`, `tf.disable_v2_behavior()`,
...) exist here and at the top level. graphflow always builds a graph and runs it in a Session,
which is the behaviour those calls select, so they change nothing; `enable_eager_execution()`
switches eager mode on (`engine/eager.py`), and asking for the v2 behaviour is an error.
"""

def disable_eager_execution():
    """Select graph mode, graphflow's default: switches eager mode off if a program turned it on."""
    from graphflow.engine import eager
    eager.disable()


def disable_v2_behavior():
    """Select the TF1 behaviour (graph mode, TF1 variables and shapes): graphflow's only one."""


def disable_resource_variables():
    """Select TF1 reference variables: graphflow's variables already behave that way."""


def disable_v2_tensorshape():
    """Select TF1 TensorShape behaviour: graphflow's TensorShape indexes to ints or None."""


def disable_control_flow_v2():
    """Select TF1 control flow: graphflow has no v2 control flow to turn off."""


def executing_eagerly():
    """True when ops run as they are built: after `tf.enable_eager_execution()`, outside any
    `with tf.Graph().as_default()` block and any function being traced."""
    from graphflow.engine import eager
    return eager.executing_eagerly()


def enable_eager_execution(config=None, device_policy=None, execution_mode=None):
    """`tf.enable_eager_execution()`: from now on ops run as they are built and return values
    (docs/eager.md). TF1's rule: call it at program start, before any graph op is built."""
    from graphflow.engine import eager
    eager.enable(config, device_policy, execution_mode)


def enable_v2_behavior():
    raise NotImplementedError("graphflow implements the TF1 API only (graph mode + Session); "
                              "there is no v2 behaviour to enable")


def as_bytes(bytes_or_text, encoding="utf-8"):
    """`tf.compat.as_bytes`: str -> bytes (encoded), bytes-like -> bytes."""
    if isinstance(bytes_or_text, (bytes, bytearray)):
        return bytes(bytes_or_text)
    if isinstance(bytes_or_text, str):
        return bytes_or_text.encode(encoding)
    raise TypeError(f"Expected binary or unicode string, got {bytes_or_text!r}")


def as_text(bytes_or_text, encoding="utf-8"):
    """`tf.compat.as_text` (also `as_str`): bytes -> str (decoded), str -> str."""
    if isinstance(bytes_or_text, str):
        return bytes_or_text
    if isinstance(bytes_or_text, (bytes, bytearray)):
        return bytes(bytes_or_text).decode(encoding)
    raise TypeError(f"Expected binary or unicode string, got {bytes_or_text!r}")


as_str = as_text


def __getattr__(name):
    # `tf.compat.v1` without importing graphflow.compat.v1 first: load the alias on first use
    if name == "v1":
        import importlib
        return importlib.import_module(__name__ + ".v1")
    if name.startswith("__"):
        raise AttributeError(name)
    from graphflow.tf1.namespace import not_implemented
    raise not_implemented(f"tf.compat.{name}", candidates=lambda: __all__)


__all__ = ["disable_eager_execution", "disable_v2_behavior", "disable_resource_variables",
           "disable_v2_tensorshape", "disable_control_flow_v2", "executing_eagerly",
           "enable_eager_execution", "enable_v2_behavior", "as_bytes", "as_text", "as_str", "v1"]
