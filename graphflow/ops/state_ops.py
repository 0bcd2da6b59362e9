"""Variables: `tf.Variable`, assign ops, initializers and the variable collections.

A variable is a `VariableV2` op whose output reads the session's stored value (its tensor is
named like TF1's: 'w:0'). Assign ops name the variable by the `shared_name` attr, not by a data input,
so assigning never needs the old value.
"""

import weakref

import numpy as np

from graphflow.framework import dtypes
from graphflow.framework.func_graph import FuncGraph, init_scope
from graphflow.framework.graph import GraphKeys, Tensor, get_default_graph
from graphflow.framework.tensor import no_numpy
from graphflow.framework.tensor_shape import TensorShape, as_shape
from graphflow.ops import no_onnx
from graphflow.ops.core_ops import convert_to_tensor, group
from graphflow.ops.registry import define, make_op, make_tensor


def _variable_infer(inputs, attrs):
    return [(dtypes.as_dtype(attrs["dtype"]), as_shape(attrs["shape"]))]


def _assign_infer(inputs, attrs):
    (value,) = inputs
    var_dtype = dtypes.as_dtype(attrs["dtype"])
    if value.dtype != var_dtype:
        raise TypeError(f"cannot assign a value of dtype {value.dtype.name} to variable "
                        f"'{attrs['shared_name']}' of dtype {var_dtype.name}")
    var_shape = as_shape(attrs["shape"])
    if attrs.get("validate_shape", True) and not var_shape.is_compatible_with(value.shape):
        raise ValueError(f"cannot assign a value of shape {value.shape} to variable "
                         f"'{attrs['shared_name']}' of shape {var_shape}")
    return [(var_dtype, var_shape if attrs.get("validate_shape", True) else value.shape)]


def _is_initialized_infer(inputs, attrs):
    return [(dtypes.bool_, TensorShape([]))]


_VAR_ATTRS = "shared_name:string dtype:dtype shape:none|shape"
define("VariableV2", _variable_infer, stateful=True, returns_state=True, attrs=_VAR_ATTRS,
       variable=True, onnx={"converter": "variable"})
# A fresh read of a variable, ordered by where it is created (e.g. after an assign it depends on).
define("ReadVariableOp", _variable_infer, stateful=True, returns_state=True, attrs=_VAR_ATTRS,
       reads_variable=True, onnx={"converter": "variable"})
# use_locking: the run holds the variable's lock from its first variable access to its commit
# (engine/executor.py, kernels/variable_store.py LockedWrites).
define("Assign", _assign_infer, stateful=True, returns_state=True,
       attrs=_VAR_ATTRS + " validate_shape:bool use_locking:bool", onnx=no_onnx.STATE)
define("AssignAdd", _assign_infer, stateful=True, returns_state=True,
       attrs=_VAR_ATTRS + " use_locking:bool", onnx=no_onnx.STATE)
define("AssignSub", _assign_infer, stateful=True, returns_state=True,
       attrs=_VAR_ATTRS + " use_locking:bool", onnx=no_onnx.STATE)
define("IsVariableInitialized", _is_initialized_infer, stateful=True, attrs=_VAR_ATTRS,
       onnx=no_onnx.none("asks the session's variable store: an exported graph's variables are frozen "
                         "initializers, always initialized"))


def _count_up_to_infer(inputs, attrs):
    dtype = dtypes.as_dtype(attrs["dtype"])
    if dtype not in (dtypes.int32, dtypes.int64) or as_shape(attrs["shape"]).ndims not in (None, 0):
        raise TypeError(f"count_up_to needs an int32 or int64 scalar variable, got "
                        f"'{attrs['shared_name']}' of {dtype.name} {as_shape(attrs['shape'])}")
    return [(dtype, TensorShape([]))]


# CountUpTo: the variable's value, then the variable incremented; at `limit` it raises
# OutOfRangeError instead. use_locking is always True: concurrent runs count one after the other.
define("CountUpTo", _count_up_to_infer, stateful=True, returns_state=True,
       attrs=_VAR_ATTRS + " limit:int use_locking:bool", onnx=no_onnx.QUEUE)


def _var_attrs(var):
    return {"shared_name": var.op.attrs["shared_name"], "dtype": var.dtype.name,
            "shape": var.op.attrs["shape"]}


class Variable:
    """`tf.Variable(initial_value, trainable=True, name=None, dtype=None, ...)`.

    Usable wherever a Tensor is (it converts to its read tensor). `initializer` assigns the
    initial value; `assign`, `assign_add`, `assign_sub` build update ops.
    """

    def __init__(self, initial_value=None, trainable=True, collections=None, validate_shape=True,
                 name=None, dtype=None, expected_shape=None, import_scope=None, constraint=None,
                 use_resource=None, shape=None, _from_op=None):
        if _from_op is not None:  # rebuilding a Python Variable around an existing op (loading)
            self._init_from_op(*_from_op)
            return
        if initial_value is None:
            raise ValueError("tf.Variable needs an initial_value")
        graph = get_default_graph()
        if isinstance(graph, FuncGraph):  # created in a loop body or branch: lift it out, once
            scope = graph.get_name_scope()
            with init_scope() as outer, outer.name_scope(scope + "/" if scope else None):
                self.__init__(initial_value, trainable, collections, validate_shape, name, dtype,
                              expected_shape, import_scope, constraint, use_resource, shape)
            return
        self._eager = graph.eager
        with graph.name_scope(name or "Variable") as scope:
            var_name = scope[:-1]
            if callable(initial_value):
                initial_value = initial_value()
            init = convert_to_tensor(initial_value, dtype=dtype, name="initial_value")
            static = init.shape if validate_shape else TensorShape(None)
            if shape is not None:
                static = as_shape(shape)
            attrs = {"shared_name": var_name, "dtype": init.dtype.name, "shape": static.dims}
            with graph.control_dependencies(None):
                self._variable_op = make_op("VariableV2", (), attrs, name=var_name + "/",
                                            graph=graph)
            self._tensor = self._variable_op.outputs[0]
            init_attrs = dict(attrs, validate_shape=bool(validate_shape))
            self._initializer_op = make_op("Assign", (init,), init_attrs, name="Assign")
            self._initial_value = init
            self._snapshot = self._tensor
        self._trainable = trainable
        if self._eager:  # eager: read where used; in the eager graph's collections too, which
            # tf.layers objects, tf.trainable_variables() and Saver() read (TF keeps none)
            self._reads = weakref.WeakKeyDictionary()  # traced graph -> its read
            graph.register_variable(self)
        if collections is None:
            collections = [GraphKeys.GLOBAL_VARIABLES]
        if trainable and GraphKeys.TRAINABLE_VARIABLES not in collections:
            collections = list(collections) + [GraphKeys.TRAINABLE_VARIABLES]
        graph.add_to_collections(collections, self)

    def _init_from_op(self, variable_op, initializer_op, trainable):
        self._variable_op = variable_op
        self._tensor = variable_op.outputs[0]
        self._initializer_op = initializer_op
        self._initial_value = initializer_op.inputs[0] if initializer_op is not None else None
        self._snapshot = self._tensor
        self._trainable = trainable

    @classmethod
    def from_ops(cls, variable_op, initializer_op=None, trainable=True):
        """A Variable object around existing ops (used when importing a saved graph)."""
        return cls(_from_op=(variable_op, initializer_op, trainable))

    _eager = False  # a variable of eager mode (engine/eager.py): its value is read when used

    # --- tensor-like properties -------------------------------------------------------------
    def _as_graph_element(self):
        if self._eager:
            return self._eager_read()
        return self._tensor

    def _eager_read(self):
        """An eager variable's value now: a fresh read in eager mode; in a graph being built (a
        function being traced) that graph's own read of the same variable, made once."""
        graph = get_default_graph()
        if graph.eager:
            return make_tensor("ReadVariableOp", (), _var_attrs(self), name="read")
        read = self._reads.get(graph)
        if read is None:
            with graph.control_dependencies(None):
                read = make_op("VariableV2", (), dict(self._variable_op.attrs),
                               name=self._variable_op.name + "/", graph=graph).outputs[0]
            self._reads[graph] = read
        return read

    @property
    def name(self):
        return self._tensor.name

    @property
    def op(self):
        return self._variable_op

    @property
    def dtype(self):
        return self._tensor.dtype

    @property
    def shape(self):
        return self._tensor.shape

    def get_shape(self):
        return self._tensor.shape

    @property
    def graph(self):
        """The variable's graph; for an eager variable used in a function being traced, the
        graph being traced (where ops updating it are built)."""
        if self._eager:
            current = get_default_graph()
            if isinstance(current, FuncGraph):
                return current
        return self._tensor.graph

    @property
    def device(self):
        return self._variable_op.device

    @property
    def trainable(self):
        return self._trainable

    @property
    def initializer(self):
        return self._initializer_op

    @property
    def initial_value(self):
        return self._initial_value

    def value(self):
        if self._eager:
            return self._eager_read()
        return self._tensor

    def read_value(self):
        """A new read op: created inside `control_dependencies`, it sees the updated value."""
        if self._eager and not get_default_graph().eager:
            return self._eager_read()
        return make_tensor("ReadVariableOp", (), _var_attrs(self), name="read")

    def eval(self, session=None):
        if self._eager:
            raise NotImplementedError("eval is not supported when eager execution is enabled, is "
                                      ".numpy() what you're looking for?")
        return self._tensor.eval(session=session)

    def _numpy(self):
        if not self._eager:
            no_numpy(self)
        return self._tensor.graph.state.variables.read(self._variable_op.attrs["shared_name"])

    @property
    def numpy(self):
        """`v.numpy()`: the value of an eager variable (in graph mode an AttributeError saying
        to run it instead, so `hasattr(v, "numpy")` is False there)."""
        if not self._eager:
            no_numpy(self)
        return self._eager_numpy

    def _eager_numpy(self):
        value = self._numpy()
        return value[()] if value.ndim == 0 else np.array(value)

    def __array__(self, dtype=None, copy=None):
        value = self._numpy()
        return value if dtype is None else value.astype(dtype)

    def load(self, value, session=None):
        """Write `value` into the variable in `session` without adding ops to the graph."""
        from graphflow.framework.default_session import get_default_session_or_error
        session = session or get_default_session_or_error()
        session.load_variable(self, value)

    # --- updates --------------------------------------------------------------------------------
    def _update(self, op_type, value, name, use_locking=False, validate_shape=True):
        value = convert_to_tensor(value, dtype=self.dtype)
        attrs = _var_attrs(self)
        if use_locking:
            attrs["use_locking"] = True
        if validate_shape is False:
            attrs["validate_shape"] = False
        return make_tensor(op_type, (value,), attrs, name=name or op_type)

    def assign(self, value, use_locking=False, name=None, read_value=True):
        return self._update("Assign", value, name, use_locking)

    def assign_add(self, delta, use_locking=False, name=None, read_value=True):
        return self._update("AssignAdd", delta, name, use_locking)

    def assign_sub(self, delta, use_locking=False, name=None, read_value=True):
        return self._update("AssignSub", delta, name, use_locking)

    def count_up_to(self, limit):
        """`Variable.count_up_to(limit)`: see `count_up_to`."""
        return count_up_to(self, limit)

    def initialized_value(self):
        """The variable's value read after its initializer ran (a fresh read: the variable op's
        own output may be read before the initializer within one run)."""
        with self.graph.control_dependencies([self._initializer_op]):
            return self.read_value()

    def __repr__(self):
        if self._eager:
            value = self._numpy()
            shown = str(value[()]) if value.ndim == 0 else repr(value)
            return (f"<tf.Variable '{self.name}' shape={self.shape} dtype={self.dtype.name}, "
                    f"numpy={shown}>")
        return f"<graphflow.Variable '{self.name}' shape={self.shape} dtype={self.dtype.name}>"

    def __hash__(self):
        return id(self)

    def __eq__(self, other):
        return self is other


def _delegate(method_name):
    def method(self, *args):
        return getattr(self._as_graph_element(), method_name)(*args)
    method.__name__ = method_name
    return method


for _m in ("__add__", "__radd__", "__sub__", "__rsub__", "__mul__", "__rmul__", "__truediv__",
           "__rtruediv__", "__floordiv__", "__rfloordiv__", "__mod__", "__rmod__", "__pow__",
           "__rpow__", "__matmul__", "__rmatmul__", "__neg__", "__abs__", "__lt__", "__le__",
           "__gt__", "__ge__", "__getitem__", "__and__", "__or__", "__invert__"):
    setattr(Variable, _m, _delegate(_m))
Variable.__array_priority__ = 100


def _variable_of(ref):
    if isinstance(ref, Variable):
        return ref
    if isinstance(ref, Tensor) and ref.op.type == "VariableV2":
        return _VariableView(ref)
    raise TypeError(f"Expected a tf.Variable, got {ref!r}")


class _VariableView:
    """Minimal adapter so tf.assign & co accept a variable's read tensor ('w:0') as TF1 does."""

    def __init__(self, tensor):
        self.op = tensor.op
        self.dtype = tensor.dtype

    _update = Variable._update


def assign(ref, value, validate_shape=None, use_locking=None, name=None):
    """`tf.assign`: at run time a value whose shape differs from the variable's static shape is an
    InvalidArgumentError, unless `validate_shape=False` (then the variable takes the new shape)."""
    return _variable_of(ref)._update("Assign", value, name, bool(use_locking),
                                     validate_shape is not False)


def assign_add(ref, value, use_locking=None, name=None):
    return _variable_of(ref)._update("AssignAdd", value, name, bool(use_locking))


def assign_sub(ref, value, use_locking=None, name=None):
    return _variable_of(ref)._update("AssignSub", value, name, bool(use_locking))


def count_up_to(ref, limit, name=None):
    """`tf.count_up_to(ref, limit)`: the value of the int32/int64 scalar variable `ref`, which the
    op then increments; once the value has reached `limit` the op raises OutOfRangeError. Runs
    counting the same variable hold its lock from their read to their commit (one at a time)."""
    attrs = dict(_var_attrs(_variable_of(ref)), limit=int(limit), use_locking=True)
    return make_tensor("CountUpTo", (), attrs, name=name or "CountUpTo")


def global_variables(scope=None):
    return get_default_graph().get_collection(GraphKeys.GLOBAL_VARIABLES, scope)


all_variables = global_variables


def trainable_variables(scope=None):
    return get_default_graph().get_collection(GraphKeys.TRAINABLE_VARIABLES, scope)


def local_variables(scope=None):
    return get_default_graph().get_collection(GraphKeys.LOCAL_VARIABLES, scope)


def variables_initializer(var_list, name="init"):
    """An op that runs the initializers of `var_list`."""
    ops = [v.initializer for v in var_list]
    if not ops:
        return group(name=name)
    return group(*ops, name=name)


def global_variables_initializer():
    return variables_initializer(global_variables(), name="init")


initialize_all_variables = global_variables_initializer


def local_variables_initializer():
    return variables_initializer(local_variables(), name="init_local")


def is_variable_initialized(variable):
    return make_tensor("IsVariableInitialized", (), _var_attrs(_variable_of(variable)),
                       name="IsVariableInitialized")


__all__ = ["Variable", "count_up_to",
           "assign", "assign_add", "assign_sub", "global_variables", "all_variables",
           "trainable_variables", "local_variables", "variables_initializer",
           "global_variables_initializer", "initialize_all_variables",
           "local_variables_initializer", "is_variable_initialized"]
