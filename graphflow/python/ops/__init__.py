"""`graphflow.python.ops`: the op modules TF1 programs import as
`from tensorflow.python.ops import math_ops, array_ops, nn_ops, init_ops, variable_scope, ...`.
Each name is a graphflow module holding the TF1 functions of that module: the op families
(`math_ops.reduce_sum`, `array_ops.reshape`) are graphflow's top-level names, `nn_ops` / `nn`
are `tf.nn`, and so on. Resolved on first use."""

import importlib

_MODULES = {
    **dict.fromkeys(("math_ops", "array_ops", "state_ops", "control_flow_ops", "random_ops",
                     "check_ops", "string_ops", "sparse_ops", "clip_ops", "gradients",
                     "gradients_impl", "logging_ops", "functional_ops", "data_flow_ops",
                     "script_ops", "linalg_ops", "resource_variable_ops", "variables",
                     "standard_ops", "gen_math_ops", "gen_array_ops"), "graphflow"),
    **dict.fromkeys(("nn", "nn_ops", "nn_impl", "gen_nn_ops"), "graphflow.tf1.nn"),
    "init_ops": "graphflow.tf1.init_ops",
    "variable_scope": "graphflow.tf1.variable_scope",
    "rnn": "graphflow.tf1.rnn",
    "rnn_cell": "graphflow.tf1.rnn_cell",
    "rnn_cell_impl": "graphflow.tf1.rnn_cell",
    "embedding_ops": "graphflow.tf1.embedding_ops",
    "image_ops": "graphflow.tf1.image",
    "metrics": "graphflow.tf1.metrics",
    "losses": "graphflow.tf1.losses",
}


def __getattr__(name):
    if name not in _MODULES:
        raise AttributeError(f"graphflow does not provide tensorflow.python.ops.{name} (see "
                             f"docs/compat.md)")
    value = importlib.import_module(_MODULES[name])
    globals()[name] = value
    return value


def __dir__():
    return sorted(_MODULES)


__all__ = sorted(_MODULES)
