"""Running the same program under TensorFlow, to compare numbers.

A program is a plain function `program(tf, np, **kwargs) -> {name: array}` written against the TF1
API. `run_in_tensorflow` sends the functions' source to a TensorFlow interpreter (the one named by
GRAPHFLOW_TF_PYTHON: a Python that has tensorflow-cpu installed) where `tf` is `tensorflow.compat.v1` in
graph mode, and returns the results. Without TensorFlow the comparisons skip with the reason; CI
does not install it.
"""

import inspect
import os
import subprocess
import sys
import tempfile
import textwrap

import numpy as np

DEFAULT_TF_PYTHON = ""  # none: the TensorFlow comparisons skip, saying how to enable them


def tf_python():
    """The path of a Python that has TensorFlow, or None."""
    path = os.environ.get("GRAPHFLOW_TF_PYTHON", DEFAULT_TF_PYTHON)
    return path if os.path.isfile(path) and os.access(path, os.X_OK) else None


_SCRIPT = """
import sys
import numpy as np
import tensorflow.compat.v1 as tf
tf.disable_v2_behavior()
{sources}
results = {{}}
for key, fn, kwargs in {calls}:
    for name, value in fn(tf, np, **kwargs).items():
        results[key + "/" + name] = np.asarray(value)
np.savez(sys.argv[1], **results)
"""


def run_in_tensorflow(calls, timeout=300, extra_env=None):
    """Run `calls` ([(key, function, kwargs)]) under TensorFlow in one process; returns
    {key: {name: array}}. Helper functions a program calls must be in `calls` too or be given as
    (None, function, None) entries (defined, not called)."""
    python = tf_python()
    if python is None:
        raise RuntimeError("TensorFlow is not available")
    functions = {fn.__name__: fn for _, fn, _ in calls}
    sources = "\n".join(textwrap.dedent(inspect.getsource(fn)) for fn in functions.values())
    listed = "[" + ", ".join(f"({key!r}, {fn.__name__}, {kwargs!r})" for key, fn, kwargs in calls
                             if key is not None) + "]"
    with tempfile.TemporaryDirectory() as tmp:
        script = os.path.join(tmp, "program.py")
        out = os.path.join(tmp, "results.npz")
        with open(script, "w") as f:
            f.write(_SCRIPT.format(sources=sources, calls=listed))
        env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
        env["TF_CPP_MIN_LOG_LEVEL"] = "3"
        env.update(extra_env or {})
        done = subprocess.run([python, script, out], capture_output=True, text=True,
                              timeout=timeout, env=env)
        if done.returncode != 0:
            sys.stderr.write(done.stderr[-4000:])
            raise RuntimeError(f"the TensorFlow program failed:\n{done.stderr[-2000:]}")
        with np.load(out) as data:
            results = {}
            for name in data.files:
                key, _, item = name.partition("/")
                results.setdefault(key, {})[item] = data[name]
            return results


def run_in_tf_keras(calls):
    """`run_in_tensorflow` with `tf.keras` as tf_keras (TF1's graph-mode Keras); skips the calling
    test where TensorFlow or tf_keras is missing."""
    import pytest
    python = tf_python()
    if python is None:
        pytest.skip("TensorFlow is not installed (set GRAPHFLOW_TF_PYTHON to compare with it)")
    if subprocess.run([python, "-c", "import tf_keras"], capture_output=True).returncode != 0:
        pytest.skip("the TensorFlow Python lacks tf_keras (TF1's graph-mode Keras)")
    return run_in_tensorflow(calls, extra_env={"TF_USE_LEGACY_KERAS": "1"})
