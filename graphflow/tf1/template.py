"""`tf.make_template`: wrap a function so that every call shares the variables the first call
created with `tf.get_variable` (TF1's `Template`).

The first call runs the function inside a new variable scope (`name_`, made unique: `name_`,
`name__1`, ...; or `unique_name_` as given; or one opened when the template is made, with
`create_scope_now_=True`); later calls re-enter that scope with `reuse=True`, so
`get_variable` returns the same variables. A later call that creates a trainable variable
(`tf.Variable` where `tf.get_variable` was meant) is an error, as in TF1.
"""

import functools

from graphflow.framework.graph import GraphKeys, get_default_graph
from graphflow.tf1 import variable_scope as vs


class Template:
    """A function whose calls share variables (made by `make_template`)."""

    def __init__(self, name, func, create_scope_now=False, unique_name=None, custom_getter=None):
        if name is None:
            raise ValueError("name cannot be None.")
        if not callable(func):
            raise TypeError(f"func_ must be callable, got {func!r}")
        self._func = func
        self._name = name
        self._unique_name = unique_name
        self._custom_getter = custom_getter
        self._variables_created = False
        self._first_call = True
        self._variable_scope = None
        if create_scope_now:
            with vs.variable_scope(unique_name, default_name=None if unique_name else name,
                                   custom_getter=custom_getter,
                                   auxiliary_name_scope=False) as scope:
                self._variable_scope = scope

    def _call_func(self, args, kwargs):
        graph = get_default_graph()
        trainable_at_start = len(graph.get_collection(GraphKeys.TRAINABLE_VARIABLES))
        result = self._func(*args, **kwargs)
        if self._variables_created:
            trainable = graph.get_collection(GraphKeys.TRAINABLE_VARIABLES)
            if len(trainable) != trainable_at_start:
                raise ValueError("Trainable variable created when calling a template after the "
                                 "first time, perhaps you used tf.Variable when you meant "
                                 f"tf.get_variable: {trainable[trainable_at_start:]}")
        else:
            self._variables_created = True
        return result

    def __call__(self, *args, **kwargs):
        if self._variable_scope is not None:
            with vs.variable_scope(self._variable_scope, reuse=not self._first_call):
                self._first_call = False
                return self._call_func(args, kwargs)
        with vs.variable_scope(self._unique_name, default_name=self._name,
                               custom_getter=self._custom_getter) as scope:
            self._variable_scope = scope
            self._first_call = False
            return self._call_func(args, kwargs)

    @property
    def name(self):
        return self._name

    @property
    def func(self):
        return self._func

    @property
    def variable_scope(self):
        return self._variable_scope

    @property
    def variable_scope_name(self):
        if self._variable_scope is None:
            return None
        name = self._variable_scope.name
        return name + "/" if name else name

    def _collection(self, key):
        if self._variable_scope is None:
            return []
        return get_default_graph().get_collection(key, self.variable_scope_name)

    @property
    def variables(self):
        return self.global_variables + self.local_variables

    @property
    def trainable_variables(self):
        return self._collection(GraphKeys.TRAINABLE_VARIABLES)

    @property
    def non_trainable_variables(self):
        trainable = set(self.trainable_variables)
        return [v for v in self.global_variables if v not in trainable]

    @property
    def global_variables(self):
        return self._collection(GraphKeys.GLOBAL_VARIABLES)

    @property
    def local_variables(self):
        return self._collection(GraphKeys.LOCAL_VARIABLES)


def make_template(name_, func_, create_scope_now_=False, unique_name_=None, custom_getter_=None,
                  **kwargs):
    """`tf.make_template`: `func_` (with `kwargs` bound) as a Template whose calls share the
    variables of its first call."""
    if kwargs:
        func_ = functools.partial(func_, **kwargs)
    return Template(name_, func_, create_scope_now=create_scope_now_, unique_name=unique_name_,
                    custom_getter=custom_getter_)


__all__ = ["make_template"]
