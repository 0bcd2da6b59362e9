"""`tensorflow.python.framework.graph_util`: `convert_variables_to_constants`,
`extract_sub_graph`, `remove_training_nodes` — the names of the `tf.graph_util` namespace
(graphflow/interop/tensorflow/graph_util.py), resolved when first used."""

from graphflow import graph_util as _graph_util

__all__ = ["convert_variables_to_constants", "extract_sub_graph", "remove_training_nodes"]


def __getattr__(name):
    if name in __all__:
        return getattr(_graph_util, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
