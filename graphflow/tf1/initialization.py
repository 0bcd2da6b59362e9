"""TF1's initialization helpers beyond the variable initializers: `report_uninitialized_variables`
(the names of the variables a session has not initialized, as a string tensor),
`tables_initializer` (groups TABLE_INITIALIZERS: graphflow has no lookup tables, so it is a no-op
unless a program adds its own) and the `AggregationMethod` constants `tf.gradients` accepts."""

from graphflow.framework import dtypes
from graphflow.framework.graph import GraphKeys, get_collection, name_scope
from graphflow.ops import index_ops, math_ops, shape_ops, state_ops
from graphflow.ops.core_ops import constant, group

TABLE_INITIALIZERS = "table_initializer"  # TF1's GraphKeys.TABLE_INITIALIZERS


class AggregationMethod:
    """How `tf.gradients` adds the gradients of a tensor used several times (graphflow always
    adds them with one AddN, which is what each of these names asks for in effect)."""

    ADD_N = 0
    DEFAULT = ADD_N
    EXPERIMENTAL_TREE = 1
    EXPERIMENTAL_ACCUMULATE_N = 2


def report_uninitialized_variables(var_list=None, name="report_uninitialized_variables"):
    """A 1-D string tensor of the names of the variables in `var_list` (default: global and local
    variables) that are not initialized when it runs."""
    if var_list is None:
        var_list = (get_collection(GraphKeys.GLOBAL_VARIABLES)
                    + get_collection(GraphKeys.LOCAL_VARIABLES))
    var_list = list(var_list)
    with name_scope(name):
        if not var_list:
            return constant([], dtype=dtypes.string)
        names = constant([v.op.name for v in var_list], dtype=dtypes.string)
        initialized = shape_ops.stack([state_ops.is_variable_initialized(v) for v in var_list])
        return index_ops.boolean_mask(names, math_ops.logical_not(initialized))


def tables_initializer(name="init_all_tables"):
    """Groups the ops in the TABLE_INITIALIZERS collection."""
    return group(*get_collection(TABLE_INITIALIZERS), name=name)


__all__ = ["AggregationMethod", "report_uninitialized_variables", "tables_initializer"]
