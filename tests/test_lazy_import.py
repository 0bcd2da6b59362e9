"""`import graphflow` loads the core (graphs, ops, variables, gradients) only: the Session's plan
compile and kernel tables, the file format, the subsystems behind the public namespaces
(tf.keras, tf.estimator, tf.data, tf.summary, tf.contrib, tf.saved_model, tf.image, tf.distribute,
ONNX) and heavy third-party packages load when a program first uses them.

A check of which modules a fresh process holds, not a timing test."""

import json
import os
import subprocess
import sys

import graphflow

# loaded on first use of their namespace or tf.X name (scipy.special: of the op that needs it)
LAZY_MODULES = (
    "graphflow.tf1.keras", "graphflow.tf1.estimator", "graphflow.tf1.data", "graphflow.tf1.summary",
    "graphflow.tf1.saved_model", "graphflow.tf1.contrib_layers", "graphflow.tf1.slim",
    "graphflow.tf1.seq2seq", "graphflow.tf1.image", "graphflow.tf1.layers", "graphflow.tf1.train",
    "graphflow.tf1.metrics", "graphflow.tf1.feature_column", "graphflow.tf1.distributions",
    "graphflow.tf1.gfile", "graphflow.fileformat.tfrecord", "graphflow.interop",
    # tf.Session, tf.optimize, tf.save/load: the plan compile, the passes, the kernel tables
    "graphflow.engine.session", "graphflow.optimizer_passes", "graphflow.kernels.cpu",
    "graphflow.kernels.cuda", "graphflow.fileformat.serialization",
    "graphflow.interop.onnx", "graphflow.interop.distribute", "graphflow.tools.viz",
    "onnx", "h5py", "scipy", "scipy.special", "numpy.testing", "numpy.f2py",
)

_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(graphflow.__file__)))


def _modules_after(code):
    """The sys.modules of a fresh interpreter that ran `code` (this checkout's graphflow)."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([_ROOT] + [p for p in env.get("PYTHONPATH", "").split(
        os.pathsep) if p])
    out = subprocess.run([sys.executable, "-c", code + "\nimport sys, json\n"
                          "print(json.dumps(sorted(sys.modules)))"],
                         env=env, capture_output=True, text=True, check=True, timeout=120)
    return set(json.loads(out.stdout.strip().splitlines()[-1]))


def _loaded(modules, prefixes):
    return sorted(m for m in modules for p in prefixes if m == p or m.startswith(p + "."))


def test_import_graphflow_loads_no_lazy_subsystem():
    loaded = _loaded(_modules_after("import graphflow"), LAZY_MODULES)
    assert not loaded, f"`import graphflow` loaded {loaded}: import them on first use instead"


def test_a_namespace_loads_its_modules_on_first_use():
    modules = _modules_after("import graphflow as tf\nassert 'Dense' in dir(tf.keras.layers)\n"
                             "tf.summary.FileWriter")
    assert {"graphflow.tf1.keras.layers_core", "graphflow.tf1.summary"} <= modules
    assert not _loaded(modules, ("graphflow.tf1.estimator", "graphflow.interop.onnx", "scipy"))


def test_scipy_loads_with_the_first_op_that_needs_it():
    modules = _modules_after("import graphflow as tf\nimport numpy as np\n"
                             "with tf.Session() as s:\n"
                             "    print(s.run(tf.math.erf(tf.constant(np.float32(0.5)))))")
    assert "scipy.special" in modules
