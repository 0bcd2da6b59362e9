"""`tf.contrib.framework`: variable lookups (`get_variables`, `get_model_variables`, ...) and
`arg_scope` / `add_arg_scope` (graphflow/tf1/arg_scope.py), as TF1 programs of the contrib era use
them."""

from graphflow.framework.graph import GraphKeys, get_default_graph
from graphflow.tf1.arg_scope import add_arg_scope, arg_scope, current_arg_scope, has_arg_scope
from graphflow.tf1.train import get_global_step, get_or_create_global_step


def get_variables(scope=None, suffix=None, collection=GraphKeys.GLOBAL_VARIABLES):
    """Variables of `collection` whose names start with `scope` (a name or VariableScope) and end
    with `suffix` (before ':0')."""
    found = get_default_graph().get_collection(collection, getattr(scope, "name", scope))
    if suffix is not None:
        found = [v for v in found if v.op.name.endswith(suffix)]
    return found


def get_model_variables(scope=None, suffix=None):
    return get_variables(scope, suffix, GraphKeys.MODEL_VARIABLES)


def get_trainable_variables(scope=None, suffix=None):
    return get_variables(scope, suffix, GraphKeys.TRAINABLE_VARIABLES)


def get_local_variables(scope=None, suffix=None):
    return get_variables(scope, suffix, GraphKeys.LOCAL_VARIABLES)


def get_variables_by_name(given_name, scope=None):
    """Variables whose last name component (without ':0') is `given_name`."""
    return [v for v in get_variables(scope) if v.op.name.split("/")[-1] == given_name]


def get_variables_to_restore(include=None, exclude=None):
    """Global variables under the `include` scopes and not under the `exclude` ones."""
    found = get_variables() if include is None else \
        [v for scope in include for v in get_variables(scope)]
    for scope in exclude or []:
        found = [v for v in found if not v.op.name.startswith(scope)]
    return found


__all__ = ["get_variables", "get_model_variables", "get_trainable_variables",
           "get_local_variables", "get_variables_by_name", "get_variables_to_restore", "arg_scope",
           "add_arg_scope", "current_arg_scope", "has_arg_scope", "get_global_step",
           "get_or_create_global_step"]
