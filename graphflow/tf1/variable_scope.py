"""`tf.variable_scope` and `tf.get_variable`: TF1's sharing of variables by name.

`get_variable("w", shape)` inside `variable_scope("a")` creates the variable 'a/w' (op 'a/w',
tensor 'a/w:0'), or returns the existing one when the scope reuses (`reuse=True`, or
`tf.AUTO_REUSE` which creates on first use). A variable's name depends only on the variable scope,
never on the name scope; a `variable_scope` also opens a name scope for the ops built inside it
('a/', or 'a_1/' when re-entered), as TF1 does.

Each Graph keeps its own store (variables by name, the current scope, how often each scope name
was opened) in the collection `("__variable_store",)`, so a fresh graph starts empty.
"""

import enum
import functools
import inspect

from graphflow.framework import dtypes
from graphflow.framework.func_graph import outermost_graph
from graphflow.framework.graph import GraphKeys, Tensor, get_default_graph
from graphflow.framework.tensor_shape import as_shape
from graphflow.ops.core_ops import convert_to_tensor
from graphflow.ops.state_ops import Variable
from graphflow.tf1 import partitioned_variables
from graphflow.tf1.init_ops import glorot_uniform_initializer, zeros_initializer

_STORE_KEY = ("__variable_store",)


class _ReuseMode(enum.Enum):
    """Reuse modes beyond True/False (TF1's `tf.AUTO_REUSE`)."""

    AUTO_REUSE = 1


AUTO_REUSE = _ReuseMode.AUTO_REUSE


class VariableScope:
    """A variable scope: its `name` (prefix of the variables created in it), `reuse`, and the
    defaults for `get_variable` inside it (`initializer`, `regularizer`, `dtype`, `custom_getter`).
    `original_name_scope` is the name scope opened when the scope was first entered."""

    def __init__(self, reuse, name="", initializer=None, regularizer=None, dtype=dtypes.float32,
                 name_scope="", custom_getter=None, partitioner=None):
        self._reuse = reuse
        self._partitioner = partitioner
        self._name = name
        self._initializer = initializer
        self._regularizer = regularizer
        self._dtype = dtypes.as_dtype(dtype)
        self._name_scope = name_scope
        self._custom_getter = custom_getter

    name = property(lambda self: self._name)
    original_name_scope = property(lambda self: self._name_scope)
    reuse = property(lambda self: self._reuse)
    initializer = property(lambda self: self._initializer)
    regularizer = property(lambda self: self._regularizer)
    dtype = property(lambda self: self._dtype)
    custom_getter = property(lambda self: self._custom_getter)
    partitioner = property(lambda self: self._partitioner)

    def reuse_variables(self):
        """From now on `get_variable` in this scope returns existing variables."""
        self._reuse = True

    def set_initializer(self, initializer):
        self._initializer = initializer

    def set_regularizer(self, regularizer):
        self._regularizer = regularizer

    def set_dtype(self, dtype):
        self._dtype = dtypes.as_dtype(dtype)

    def set_custom_getter(self, custom_getter):
        self._custom_getter = custom_getter

    def set_partitioner(self, partitioner):
        self._partitioner = partitioner

    def get_collection(self, name):
        return get_default_graph().get_collection(name, self._name + "/" if self._name else None)

    def global_variables(self):
        return self.get_collection(GraphKeys.GLOBAL_VARIABLES)

    def trainable_variables(self):
        return self.get_collection(GraphKeys.TRAINABLE_VARIABLES)

    def local_variables(self):
        return self.get_collection(GraphKeys.LOCAL_VARIABLES)

    def __repr__(self):
        return f"<graphflow.VariableScope '{self._name}' reuse={self._reuse}>"


class _ScopeCounts:
    """How often each variable scope name has been opened (for unique default names), with the
    children of every name indexed so that closing a scope resets only its own subtree."""

    def __init__(self):
        self.counts = {}
        self.children = {}

    def get(self, name):
        return self.counts.get(name, 0)

    def open(self, name):
        self.counts[name] = self.counts.get(name, 0) + 1
        if not name:  # the root scope
            return
        parts = name.split("/")
        for i in range(1, len(parts)):
            self.children.setdefault("/".join(parts[:i]), set()).add("/".join(parts[:i + 1]))
        self.children.setdefault("", set()).add(parts[0])

    def subtree(self, name):
        """Every opened name below `name` (iterative walk)."""
        out, todo = [], list(self.children.get(name, ()))
        while todo:
            n = todo.pop()
            out.append(n)
            todo.extend(self.children.get(n, ()))
        return out

    def close_subscopes(self, name):
        for n in self.subtree(name):
            self.counts.pop(n, None)

    def snapshot(self, name):
        return {n: self.counts[n] for n in self.subtree(name) if n in self.counts}

    def restore(self, name, saved):
        self.close_subscopes(name)
        self.counts.update(saved)


class _VariableStore:
    """Per-graph state: variables created by `get_variable` (by full name), the current scope and
    the scope-name counts."""

    def __init__(self):
        self.variables = {}
        self.partitioned = {}  # full name -> PartitionedVariable
        self.scope = VariableScope(False)
        self.counts = _ScopeCounts()


def _store(graph):
    graph = outermost_graph(graph)  # a loop body or branch shares its user's graph's variables
    ref = graph.get_collection_ref(_STORE_KEY)
    if not ref:
        ref.append(_VariableStore())
    return ref[0]


def get_variable_scope():
    """The current `VariableScope` of the default graph (the root scope, name '', at first)."""
    return _store(get_default_graph()).scope


def _normalize_reuse(reuse, what="reuse"):
    if reuse is None or reuse is False:
        return None
    if reuse is True or reuse is AUTO_REUSE:
        return reuse
    raise ValueError(f"{what} must be True, False, None or tf.AUTO_REUSE, got {reuse!r}")


def _wrap_custom_getter(custom_getter, old_getter):
    """Compose getters: the new one receives a getter that goes through the old one."""
    if old_getter is None:
        return custom_getter

    def wrapped(getter, *args, **kwargs):
        return custom_getter(functools.partial(old_getter, getter), *args, **kwargs)
    return wrapped


class variable_scope:  # noqa: N801 - TF1 name
    """`with tf.variable_scope(name_or_scope, default_name=None, values=None, ...) as scope:`

    `name_or_scope` is a string (nested under the current variable scope) or a `VariableScope`
    object (re-entered as it is, wherever the current scope is); with `name_or_scope=None`,
    `default_name` made unique ('dense', 'dense_1', ...) names the scope. `reuse=True` or
    `tf.AUTO_REUSE` is inherited by inner scopes (`reuse=False` or None inherits the outer mode).
    `initializer`, `regularizer`, `dtype` and `custom_getter` become the defaults of
    `get_variable` inside. A name scope is opened too unless `auxiliary_name_scope=False`.
    `values` is accepted for TF1 compatibility (the scope always applies to the default graph).
    """

    def __init__(self, name_or_scope, default_name=None, values=None, initializer=None,
                 regularizer=None, caching_device=None, partitioner=None, custom_getter=None,
                 reuse=None, dtype=None, use_resource=None, constraint=None,
                 auxiliary_name_scope=True):
        if name_or_scope is None and default_name is None:
            raise TypeError("If default_name is None then name_or_scope is required")
        if name_or_scope is not None and not isinstance(name_or_scope, (str, VariableScope)):
            raise TypeError(f"VariableScope: name_or_scope must be a string or VariableScope, "
                            f"got {name_or_scope!r}")
        if constraint is not None:
            raise NotImplementedError("variable_scope: variable constraints are not supported; "
                                      "apply them with tf.assign after the training step")
        if custom_getter is not None and not callable(custom_getter):
            raise ValueError(f"custom_getter must be callable, got {custom_getter!r}")
        self._name_or_scope = name_or_scope
        self._default_name = default_name
        self._initializer = initializer
        self._regularizer = regularizer
        self._custom_getter = custom_getter
        self._partitioner = partitioner
        self._reuse = _normalize_reuse(reuse)
        self._dtype = dtypes.as_dtype(dtype) if dtype is not None else None
        self._auxiliary_name_scope = bool(auxiliary_name_scope)
        self._graph = get_default_graph()
        if self._reuse is not None and name_or_scope is None:
            raise ValueError("reuse=True cannot be used without a name_or_scope")
        self._active = None

    def __enter__(self):
        if self._active is not None:
            raise RuntimeError("variable_scope objects are not re-entrant; create a new one "
                               "(re-enter a scope with `variable_scope(scope_object)`)")
        graph = self._graph
        store = _store(graph)
        name_cm = self._name_scope_cm(graph)
        entered = name_cm.__enter__() if name_cm is not None else None
        try:
            scope, undo = self._open(store, entered)
        except BaseException:
            if name_cm is not None:
                name_cm.__exit__(None, None, None)
            raise
        old = store.scope
        store.scope = scope
        self._active = (store, old, undo, name_cm)
        return scope

    def __exit__(self, *exc):
        store, old, undo, name_cm = self._active
        self._active = None
        store.scope = old
        undo()
        if name_cm is not None:
            return name_cm.__exit__(*exc)
        return False

    def _name_scope_cm(self, graph):
        if not self._auxiliary_name_scope:  # stay in the current name scope
            current = graph.get_name_scope()
            return graph.name_scope(current + "/" if current else None)
        if self._name_or_scope is None:
            return graph.name_scope(self._default_name)
        if isinstance(self._name_or_scope, str):
            return graph.name_scope(self._name_or_scope) if self._name_or_scope else None
        last = self._name_or_scope.name.split("/")[-1]
        return graph.name_scope(last) if last else None

    def _open(self, store, entered_name_scope):
        """The new VariableScope and a function undoing its effect on the scope-name counts."""
        old = store.scope
        counts = store.counts
        target = self._name_or_scope
        if isinstance(target, VariableScope):
            name = target.name
            scope = VariableScope(self._reuse or target.reuse, name=name,
                                  initializer=target.initializer, regularizer=target.regularizer,
                                  dtype=target.dtype, name_scope=target.original_name_scope,
                                  custom_getter=target.custom_getter,
                                  partitioner=target.partitioner)
            getter = _wrap_custom_getter(self._custom_getter, target.custom_getter) \
                if self._custom_getter is not None else None
            counts.open(name)
            saved = counts.snapshot(name)

            def undo():
                counts.restore(name, saved)
        else:
            if target is None:
                target = _unique_scope_name(store, self._default_name)
            name = f"{old.name}/{target}" if old.name else target
            if entered_name_scope is None:
                entered_name_scope = target + "/" if target else ""
            scope = VariableScope(self._reuse or old.reuse, name=name,
                                  initializer=old.initializer, regularizer=old.regularizer,
                                  dtype=old.dtype, name_scope=entered_name_scope,
                                  custom_getter=old.custom_getter, partitioner=old.partitioner)
            getter = _wrap_custom_getter(self._custom_getter, old.custom_getter) \
                if self._custom_getter is not None else None
            counts.open(name)

            def undo():
                counts.close_subscopes(name)
        if self._initializer is not None:
            scope.set_initializer(self._initializer)
        if self._regularizer is not None:
            scope.set_regularizer(self._regularizer)
        if self._dtype is not None:
            scope.set_dtype(self._dtype)
        if getter is not None:
            scope.set_custom_getter(getter)
        if self._partitioner is not None:
            scope.set_partitioner(self._partitioner)
        return scope, undo


def _unique_scope_name(store, prefix):
    """`prefix`, or `prefix_1`, `prefix_2`, ... if already opened under the current scope."""
    current = store.scope.name
    full = f"{current}/{prefix}" if current else prefix
    if store.counts.get(full) == 0:
        return prefix
    i = 1
    while store.counts.get(f"{full}_{i}") > 0:
        i += 1
    return f"{prefix}_{i}"


# ------------------------------------------------------------------------------ get_variable
def get_variable(name, shape=None, dtype=None, initializer=None, regularizer=None, trainable=None,
                 collections=None, caching_device=None, partitioner=None, validate_shape=True,
                 use_resource=None, custom_getter=None, constraint=None, synchronization=None,
                 aggregation=None):
    """The variable `<current variable scope>/name`, created if the scope does not reuse, or
    the existing one if it does (`tf.AUTO_REUSE`: whichever applies).

    initializer: an initializer (object or class), a callable(shape, dtype), or a value (numpy
    array, Python number/list, Tensor) which then gives the shape — `shape` must be None. With no
    initializer: the scope's, else glorot_uniform for floats and zeros for integers and bools.
    regularizer: callable(variable) -> loss Tensor, added to REGULARIZATION_LOSSES on creation.
    partitioner (or the scope's): a `PartitionedVariable` of parts `name/part_i`
    (`tf1/partitioned_variables.py`).
    """
    if constraint is not None:
        raise NotImplementedError(f"get_variable('{name}'): variable constraints are not "
                                  "supported; apply them with tf.assign after the training step")
    graph = get_default_graph()
    scope = _store(graph).scope
    full_name = f"{scope.name}/{name}" if scope.name else name
    from_value = initializer is not None and not callable(initializer)
    if dtype is not None:
        dtype = dtypes.as_dtype(dtype)
        if from_value and isinstance(initializer, Tensor) and initializer.dtype != dtype:
            raise ValueError(f"Initializer type '{initializer.dtype.name}' and explicit dtype "
                             f"'{dtype.name}' don't match.")
    if initializer is None:
        initializer = scope.initializer
        from_value = initializer is not None and not callable(initializer)
    if regularizer is None:
        regularizer = scope.regularizer
    if partitioner is None:
        partitioner = scope.partitioner
    if dtype is None and not from_value:
        dtype = scope.dtype
    if scope.custom_getter is not None:
        custom_getter = scope.custom_getter if custom_getter is None else \
            _wrap_custom_getter(custom_getter, scope.custom_getter)
    kwargs = dict(shape=shape, dtype=dtype, initializer=initializer, regularizer=regularizer,
                  reuse=scope.reuse, trainable=trainable, collections=collections,
                  validate_shape=validate_shape)
    if partitioner is not None:
        kwargs["partitioner"] = partitioner
    with graph.name_scope(None):  # variable names depend only on the variable scope
        if custom_getter is not None:
            return custom_getter(getter=_true_getter, name=full_name, **kwargs)
        return _true_getter(full_name, **kwargs)


def _true_getter(name, shape=None, dtype=None, initializer=None, regularizer=None, reuse=None,
                 trainable=None, collections=None, validate_shape=True, partitioner=None,
                 **unused):
    graph = get_default_graph()
    store = _store(graph)
    reuse = _normalize_reuse(reuse)
    if partitioner is not None:
        return partitioned_variables.get_partitioned(
            store, name, shape, dtype, initializer, regularizer, reuse, trainable, collections,
            validate_shape, partitioner, _true_getter)
    from_value = initializer is not None and not callable(initializer)
    if shape is not None and from_value:
        raise ValueError(f"Variable {name}: if initializer is a constant, do not specify shape.")
    shape = as_shape(shape)
    if dtype is not None:
        dtype = dtypes.as_dtype(dtype)
    found = store.variables.get(name)
    if found is not None:
        if reuse is None:
            where = f" Originally defined at:\n\n  {found.op.source}" if found.op.source else ""
            raise ValueError(f"Variable {name} already exists, disallowed. Did you mean to set "
                             f"reuse=True or reuse=tf.AUTO_REUSE in VarScope?{where}")
        if not shape.is_compatible_with(found.shape):
            raise ValueError(f"Trying to share variable {name}, but specified shape {shape} and "
                             f"found shape {found.shape}.")
        if from_value and dtype is None:
            dtype = convert_to_tensor(initializer).dtype if isinstance(initializer, Tensor) \
                else None
        if dtype is not None and dtype != found.dtype:
            raise ValueError(f"Trying to share variable {name}, but specified dtype {dtype.name} "
                             f"and found dtype {found.dtype.name}.")
        return found
    if reuse is True:
        raise ValueError(f"Variable {name} does not exist, or was not created with "
                         "tf.get_variable(). Did you mean to set reuse=tf.AUTO_REUSE in VarScope?")
    initial_value = _initial_value(name, shape, dtype, initializer, from_value, graph)
    with graph.control_dependencies(None):
        var = Variable(initial_value, trainable=True if trainable is None else trainable,
                       collections=collections, validate_shape=validate_shape, name=name,
                       dtype=dtype if from_value and not isinstance(initializer, Tensor) else None)
    store.variables[name] = var
    if regularizer is not None:
        with graph.name_scope(var.op.name + "/Regularizer/"):
            loss = regularizer(var)
        if loss is not None:
            graph.add_to_collection(GraphKeys.REGULARIZATION_LOSSES, loss)
    return var


def _initial_value(name, shape, dtype, initializer, from_value, graph):
    """What `Variable` receives: a value, or a callable building the initial value in the
    variable's own name scope ('a/w/Initializer/...')."""
    if from_value:
        return initializer
    if initializer is None:
        if dtype.is_floating:
            initializer = glorot_uniform_initializer()
        elif dtype.is_integer or dtype.is_bool:
            initializer = zeros_initializer()
        else:
            raise ValueError(f"An initializer for variable {name} of {dtype.name} is required")
    if inspect.isclass(initializer):
        initializer = initializer()
    if shape.is_fully_defined():
        dims = shape.as_list()
        extra = {"partition_info": None} if _accepts(initializer, "partition_info") else {}

        def build():
            with graph.name_scope("Initializer"):
                value = convert_to_tensor(initializer(dims, dtype=dtype, **extra), dtype=dtype)
            if not value.shape.is_compatible_with(shape):
                raise ValueError(f"Variable {name}: the initializer made a value of shape "
                                 f"{value.shape}, expected {shape}")
            return value
        return build
    if _takes_no_arguments(initializer):
        return initializer
    raise ValueError(f"Variable {name}: the shape must be fully defined to use an initializer "
                     f"that takes a shape, got shape {shape} (pass `shape`, or a value or a "
                     "callable with no arguments as `initializer`)")


def _accepts(fn, name):
    try:
        return name in inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False


def _takes_no_arguments(fn):
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return False
    return all(p.default is not p.empty or p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
               for p in params)


def no_regularizer(_):
    """A regularizer that adds nothing (turns off the scope's default regularizer)."""
    return None


__all__ = ["AUTO_REUSE", "VariableScope", "variable_scope", "get_variable",
           "get_variable_scope", "no_regularizer"]
