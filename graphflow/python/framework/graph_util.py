"""`tensorflow.python.framework.graph_util`: `convert_variables_to_constants`,
`extract_sub_graph`, `remove_training_nodes` — the names of the `tf.graph_util` namespace
(graphflow/interop/tensorflow/graph_util.py), resolved when first used."""

from graphflow import graph_util as _graph_util

_NAMES = ("convert_variables_to_constants", "extract_sub_graph", "remove_training_nodes")
__all__ = list(_NAMES)  # noqa: F822 - provided by __getattr__


def __getattr__(name):
    if name in _NAMES:
        return getattr(_graph_util, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
