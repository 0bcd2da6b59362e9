"""`tensorflow.python.framework.ops`: the graph, its tensors and operations, the default graph
and its collections, name scopes, devices, control dependencies, `convert_to_tensor`."""

from graphflow.framework.graph import (
                                       Graph,
                                       GraphKeys,
                                       Operation,
                                       Tensor,
                                       add_to_collection,
                                       control_dependencies,
                                       device,
                                       get_collection,
                                       get_collection_ref,
                                       get_default_graph,
                                       name_scope,
                                       reset_default_graph,
)
from graphflow.ops.core_ops import convert_to_tensor
from graphflow.tf1.custom_gradients import RegisterGradient

__all__ = ["Graph", "GraphKeys", "Operation", "Tensor", "add_to_collection",
           "control_dependencies", "device", "get_collection", "get_collection_ref",
           "get_default_graph", "name_scope", "reset_default_graph", "convert_to_tensor",
           "RegisterGradient"]
