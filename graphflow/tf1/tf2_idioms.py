"""What to write in graphflow instead of TensorFlow 2's eager idioms.

graphflow has no eager mode yet: a program builds a graph once and runs it many times in a
Session. A TF2 program's first lines (`@tf.function`, `tf.GradientTape`, `t.numpy()`) therefore have
no graphflow counterpart of the same name, and asking for one says what to write instead.
`IDIOMS` maps each such name to that advice: `tf1/namespace.py` puts it in the error for the name,
and `tools/compat_doc.py` writes the same table into docs/compat.md ("Coming from TensorFlow 2").
`Tensor.numpy()` is answered by the Tensor itself (`framework/tensor.py`), with the same section.
"""

SECTION = "docs/compat.md#coming-from-tensorflow-2"

_RUN = "run it in a Session: `sess.run(t)`, or `t.eval()` inside `with tf.Session() as sess:`"

IDIOMS = {
    "tf.function": (
        "graphflow has no eager mode yet, so there is no Python function to trace: build the "
        "graph once (tf.placeholder inputs, tensors out) and run it as often as needed with "
        "`sess.run(outputs, feed_dict={...})`"),
    "tf.GradientTape": (
        "graphflow has no eager mode yet, so there is no tape to record on: add the gradients to "
        "the graph once with `tf.gradients(loss, variables)` (or `optimizer.minimize(loss)`) and "
        "run them with `sess.run`"),
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
        "graphflow has no eager mode yet: fetch the values you want to see with `sess.run`, or "
        "print them as the graph runs with `tf.print`"),
    "tf.config.experimental_run_functions_eagerly": (
        "graphflow has no eager mode yet: fetch the values you want to see with `sess.run`, or "
        "print them as the graph runs with `tf.print`"),
}

# the rows of the docs/compat.md section that are not attributes of a namespace
OTHER_ROWS = (
    ("tensor.numpy()", "a graphflow Tensor has a value only when the graph runs: " + _RUN),
    ("tf.enable_eager_execution()", "an error: graphflow builds graphs and runs them in a "
                                    "Session; `tf.executing_eagerly()` is False"),
)


def advice(qualified_name):
    """What to write instead of the TF2 name `qualified_name` ('tf.function'), or None."""
    return IDIOMS.get(qualified_name)


__all__ = ["IDIOMS", "OTHER_ROWS", "SECTION", "advice"]
