"""The op registry: one `OpDef` record per op type, and `make_op`, the one way ops enter a graph.

An OpDef says what an op *means*: how its output dtypes/shapes follow from its inputs and attrs
(`infer`), its gradient rule (`grad`, attached by `register_gradient` from the `*_grad` modules), and
flags the optimizer, planner and serializer rely on. Kernels (how it runs) live in `graphflow.kernels`.
"""

from dataclasses import dataclass, field
from typing import Callable, Optional

from graphflow.framework import dtypes
from graphflow.framework.func_graph import graph_for_inputs
from graphflow.framework.graph import Tensor, _user_location
from graphflow.framework.tensor_shape import TensorShape
from graphflow.ops.attr_types import check_attrs, parse_attr_spec


@dataclass
class OpDef:
    """One op type.

    infer(inputs, attrs) -> list of (DType, TensorShape), one per output; raises
        ValueError/TypeError for bad inputs (make_op adds the op name and user line).
    grad(op, *output_grads) -> tuple with one entry per input (None = no gradient).
    elementwise: output[i] depends only on input[i] (after broadcasting); fusion may group it.
    stateful: reads or writes state (variables); never folded, merged or pruned when fetched.
    random: draws random numbers; never folded or merged.
    returns_state: the kernel's output may be a stored array (variable value, constant); the session
        copies it before handing it to the user.
    may_alias_input: the kernel may return a view of input 0 (reshape, identity).
    inplace_inputs: input positions whose buffer the output may reuse when that input is dead.
    attrs: the op's attrs and their types, one line: `attrs="axis:int keepdims:bool"` (the type
        language is in `ops/attr_types.py`). An op may hold only these attrs, each of its type;
        `make_op`, the graph-file encoder and the loader all check them with `check_attrs`.
    """

    type: str
    infer: Callable
    grad: Optional[Callable] = None
    elementwise: bool = False
    stateful: bool = False
    random: bool = False
    returns_state: bool = False
    may_alias_input: bool = False
    inplace_inputs: tuple = ()
    attrs: str = ""
    extra: dict = field(default_factory=dict)
    attr_types: dict = field(init=False, repr=False)

    def __post_init__(self):
        try:
            self.attr_types = parse_attr_spec(self.attrs)
        except ValueError as exc:
            raise ValueError(f"OpDef '{self.type}': bad attrs declaration: {exc}") from None

    @property
    def attr_names(self):
        return tuple(self.attr_types)

    @property
    def foldable(self):
        """Constant folding may evaluate it at plan time."""
        return not (self.stateful or self.random or self.type in ("Placeholder",
                                                                   "PlaceholderWithDefault"))


_REGISTRY = {}


def register(op_def):
    if op_def.type in _REGISTRY:
        raise ValueError(f"Op type '{op_def.type}' is already registered")
    _REGISTRY[op_def.type] = op_def
    return op_def


def define(op_type, infer, **flags):
    """Shorthand: `define("MatMul", matmul_infer, attrs="transpose_a:bool transpose_b:bool")`
    registers and returns an OpDef."""
    if "attr_names" in flags:
        raise TypeError(f"OpDef '{op_type}': attr_names= is replaced by typed declarations, "
                        "attrs=\"name:type name:type\" (see graphflow/ops/attr_types.py)")
    return register(OpDef(op_type, infer, **flags))


def lookup(op_type):
    try:
        return _REGISTRY[op_type]
    except KeyError:
        raise KeyError(f"Unknown op type '{op_type}': no OpDef is registered under that name") from None


def registered_types():
    return sorted(_REGISTRY)


def register_gradient(op_type):
    """Decorator attaching a gradient rule to an op's record: `@register_gradient("Mul")`."""
    def attach(fn):
        op_def = lookup(op_type)
        if op_def.grad is not None:
            raise ValueError(f"Op type '{op_type}' already has a gradient rule")
        op_def.grad = fn
        return fn
    return attach


def no_gradient(*op_types):
    """Declare ops that have no gradient (integer outputs, comparisons, shape queries)."""
    for t in op_types:
        lookup(t).extra["no_gradient"] = True


class OpBuildError(ValueError):
    """An op could not be built from its inputs (bad dtypes or shapes)."""


def make_op(op_type, inputs=(), attrs=None, name=None, graph=None):
    """Infer the outputs of a new `op_type` op and add it to the graph; returns the Operation."""
    op_def = lookup(op_type)
    attrs = {} if attrs is None else attrs
    if graph is None:
        graph = graph_for_inputs(inputs)
    try:
        if attrs:
            check_attrs(op_def.attr_types, attrs)
        specs = op_def.infer(list(inputs), attrs)
    except (ValueError, TypeError) as exc:
        where = _user_location()
        where = f" (created at {where})" if where is not None else ""
        label = (name or op_type).rstrip("/") or op_type
        err = TypeError if isinstance(exc, TypeError) else OpBuildError
        raise err(f"{op_type} op '{label}'{where}: {exc}") from None
    return graph.add_op(op_type, list(inputs), attrs, specs, name=name)


def make_tensor(op_type, inputs=(), attrs=None, name=None):
    """`make_op` for single-output ops: returns the output Tensor."""
    return make_op(op_type, inputs, attrs, name).outputs[0]


# ---------- shape/dtype inference helpers shared by the op families ----------

def broadcast_static(a, b):
    """Static numpy broadcasting of two TensorShapes (None = unknown)."""
    if a.dims is None or b.dims is None:
        return TensorShape(None)
    da, db = list(a.dims), list(b.dims)
    n = max(len(da), len(db))
    da = [1] * (n - len(da)) + da
    db = [1] * (n - len(db)) + db
    out = []
    for x, y in zip(da, db):
        if x == 1:
            out.append(y)
        elif y == 1:
            out.append(x)
        elif x is None:
            out.append(y)
        elif y is None or x == y:
            out.append(x)
        else:
            raise ValueError(f"shapes {a} and {b} cannot be broadcast together")
    return TensorShape(out)


def same_dtype(inputs, what="inputs"):
    """All inputs share one dtype (TF1: no silent promotion); returns it."""
    dt = inputs[0].dtype
    for t in inputs[1:]:
        if t.dtype != dt:
            names = ", ".join(f"{x.name} ({x.dtype.name})" for x in inputs)
            raise TypeError(f"{what} must have the same dtype, got {names}. graphflow never "
                            "promotes silently: use tf.cast")
    return dt


def require_dtype(t, allowed, what):
    if t.dtype not in allowed:
        names = ", ".join(d.name for d in allowed)
        raise TypeError(f"{what} must be one of [{names}], got {t.name} of dtype {t.dtype.name}")


FLOATS = (dtypes.float16, dtypes.float32, dtypes.float64)
INTEGERS = (dtypes.int8, dtypes.int16, dtypes.int32, dtypes.int64, dtypes.uint8)
NUMERIC = FLOATS + INTEGERS
SIGNED = FLOATS + (dtypes.int8, dtypes.int16, dtypes.int32, dtypes.int64)


def is_tensor(x):
    return isinstance(x, Tensor)
