"""What to write in graphflow instead of TensorFlow 2's idioms it lacks.

graphflow is TF1: a program builds a graph and runs it in a Session, or calls
`tf.enable_eager_execution()` at program start and ops run as they are built (docs/eager.md), with
`tf.GradientTape`, `tf.function` and `t.numpy()` as in TF 1.15. TF2 names graphflow lacks have no
counterpart of the same name, and asking for one says what to write instead.
`IDIOMS` maps each such name to that advice: `tf1/namespace.py` puts it in the error for the name,
and `tools/compat_doc.py` writes the same table into docs/compat.md ("Coming from TensorFlow 2").
`Tensor.numpy()` is answered by the Tensor itself (`framework/tensor.py`), with the same section.
"""

SECTION = "docs/compat.md#coming-from-tensorflow-2"

_RUN = "run it in a Session: `sess.run(t)`, or `t.eval()` inside `with tf.Session() as sess:`"

IDIOMS = {
    "tf.Module": (
        "create variables with `tf.get_variable` inside `tf.variable_scope`, or subclass "
        "`tf.keras.layers.Layer`"),
    "tf.TensorSpec": "a graph input is `tf.placeholder(dtype, shape)`",
    "tf.autograph": (
        "write the control flow with `tf.cond` and `tf.while_loop`, which build it into the graph"),
    "tf.compat.v2": (
        "graphflow is the TF1 API: `import graphflow as tf` (or `import graphflow.compat.v1 as "
        "tf`)"),
    "tf.config.run_functions_eagerly": (
        "to debug a `tf.function` eagerly, call its Python function (`f.python_function`); in "
        "graph mode fetch the values you want to see with `sess.run`, or print them as the "
        "graph runs with `tf.print`"),
    "tf.config.experimental_run_functions_eagerly": (
        "to debug a `tf.function` eagerly, call its Python function (`f.python_function`); in "
        "graph mode fetch the values you want to see with `sess.run`, or print them as the "
        "graph runs with `tf.print`"),
}

# the rows of the docs/compat.md section that are not attributes of a namespace
OTHER_ROWS = (
    ("tensor.numpy()", "the value of an eager tensor or variable after "
                       "`tf.enable_eager_execution()`; a graph's Tensor has a value only when the "
                       "graph runs: " + _RUN),
    ("tf.enable_eager_execution()", "eager mode, as in TF 1.15: call it at program start; ops "
                                    "run as they are built (docs/eager.md)"),
    ("tf.GradientTape", "the same, in eager mode (and `tf.gradients` in graph mode)"),
    ("@tf.function", "the same (also `tf.contrib.eager.defun`): traced once per input signature "
                     "into a graph that runs as a plan and saves with `graphflow.save`"),
)


def advice(qualified_name):
    """What to write instead of the TF2 name `qualified_name` ('tf.function'), or None."""
    return IDIOMS.get(qualified_name)


__all__ = ["IDIOMS", "OTHER_ROWS", "SECTION", "advice"]
