"""`tensorflow.python.framework.graph_util`: `convert_variables_to_constants`,
`extract_sub_graph`, `remove_training_nodes` (graphflow/interop/tensorflow/graph_util.py)."""

from graphflow.interop.tensorflow.graph_util import (
                                                     convert_variables_to_constants,
                                                     extract_sub_graph,
                                                     remove_training_nodes,
)

__all__ = ["convert_variables_to_constants", "extract_sub_graph", "remove_training_nodes"]
