"""The op registry: one `OpDef` record per op type, and `make_op`, the one way ops enter a graph.

An OpDef says what an op *means*: how its output dtypes/shapes follow from its inputs and attrs
(`infer`), its gradient rule (`grad`, attached by `register_gradient` from the `*_grad` modules), and
flags the optimizer, planner and serializer rely on. Kernels (how it runs) live in `graphflow.kernels`.
"""

from dataclasses import dataclass, field
from typing import Callable, Optional

from graphflow.framework import dtypes
from graphflow.framework.eager_tensor import VALUE_READS, EagerTensor
from graphflow.framework.func_graph import graph_for_inputs
from graphflow.framework.graph import Tensor, _user_location, install_op_defs
from graphflow.framework.tensor_shape import TensorShape
from graphflow.ops.attr_types import check_attrs, parse_attr_spec

# What an op may reach outside the process's memory (`OpDef.touches`): nothing, or one of these.
TOUCHES = ("", "files", "network", "python")


@dataclass
class OpDef:
    """One op type.

    infer(inputs, attrs) -> list of (DType, TensorShape), one per output; raises
        ValueError/TypeError for bad inputs (make_op adds the op name and user line).
    grad(op, *output_grads) -> tuple with one entry per input (None = no gradient).
    attrs: the op's attrs and their types, one line: `attrs="axis:int keepdims:bool"` (the type
        language is in `ops/attr_types.py`). An op may hold only these attrs, each of its type;
        `make_op`, the graph-file encoder and the loader all check them with `check_attrs`.

    Facts the optimizer passes, the planner, the executor and the file format query (a pass never
    names op types; a new op gets an optimization by declaring the fact):

    What the op is
    elementwise: output[i] depends only on input[i] (after broadcasting); fusion may group it.
    graph_input: a graph input meant to be fed (Placeholder, PlaceholderWithDefault): never folded
        or merged; exported as a model input.
    must_feed: its output has no value unless fed (Placeholder): no kernel runs for it, a plan that
        needs it unfed is an error, and its value is the user's array. Implies `graph_input`.
    control_only: no outputs and no kernel (NoOp): it only orders its control inputs.
    constant: its one output is its `value` attr, known when the graph is built (Const).
    variable: it holds a variable's storage, named by its `shared_name` attr; its output is the
        variable's current value (VariableV2). Other ops that touch the variable name it by the same
        `shared_name`.
    reads_variable: its output is the current value of the variable named by its `shared_name`
        attr, a value of that variable as the variable op's own output is (ReadVariableOp).
    conditional: input 0 is a boolean predicate that selects the sub-graph in the `then_branch` or
        the `else_branch` attr, fed from the inputs after it (If).

    What it does to state
    stateful: reads or writes state (variables); never folded, merged or pruned when fetched.
    random: draws random numbers; never folded or merged.
    returns_state: the kernel's output may be a stored array (variable value, constant); the session
        copies it before handing it to the user.

    How its buffers behave (memory planning)
    may_alias_input: the kernel may return a view of input 0 (reshape, identity).
    fresh_output: the kernel always returns a newly allocated array (never a view of an input or of
        stored state). Defaults to `elementwise` unless the op may alias an input or return state.
    retains_inputs: the output may keep a reference to an input's buffer (a view, or a container
        that holds it), so the input's buffer is not free after the op. Defaults to
        `not fresh_output`; reductions and losses that only read their inputs declare False.
    inplace_inputs: input positions whose buffer the output may reuse when that input is dead.
    inplace_any_input: the output may reuse the buffer of any dead input of its shape (fused
        elementwise programs).

    What rewrites may assume
    commutative: a binary op whose two inputs may be swapped without changing any output bit
        (IEEE addition, multiplication, max/min, comparisons for (in)equality, logical ops); CSE
        merges `f(a, b)` with `f(b, a)`.
    reads_shape_only: reads only the static or run-time shape of its inputs, never their values
        (Shape, Size, Rank, ZerosLike, OnesLike); fusion may hand such readers the shape of a value
        it no longer materializes.
    shape_input: the index of the input whose value is the output's shape, a 1-D shape vector
        (Fill, RandomUniform: `tf.random_uniform(tf.shape(x))` has x's shape whatever x's
        dimensions are; `static_value.symbolic_shape` follows it). None: no such input.
    value_dependent_shape: the output shape depends on input values (Where, Range, decoders), so
        static shape inference cannot know it even from known input shapes.
    layout_attrs: for a 4-D op with a `data_format` attr ("NHWC" or "NCHW") that applies to its
        input 0 and output 0 only (other inputs layout-free, e.g. HWIO filters): the attrs that are
        4-lists in data_format order (Conv2D: strides, dilations). Its NCHW form on x is then
        transpose(its NHWC form on transpose(x, [0, 2, 3, 1]), [0, 3, 1, 2]) with these attrs
        permuted, bit for bit, so a pass may switch the layout. None: no such form.

    Scheduling
    schedule: "early" to run as soon as its inputs exist, "late" to run just before its first
        reader, "" for graph order (`engine/scheduling.py`; the split allreduce's start and wait).
    updates_in_place: an optimizer update whose kernel may write the variable and its slots in
        place when it is the run's last op (nothing after it can fail, so a failed run still
        changes no variable); the schedule moves the largest such update to the end where no
        later op needs it (`engine/scheduling.py`). Its variables are named by `shared_name` and
        its slot attrs (`*_name`).

    Gradients
    no_gradient: declared not differentiable (`no_gradient(...)`): a gradient never flows through.
    gradient_takes_none: the gradient rule gets None, not zeros, for outputs no gradient reached
        (If, While skip work for them).

    What it reaches outside the process's memory
    touches: what the kernel reaches when the op runs, beyond the process's memory and its
        standard streams: "" nothing; "files" opens, reads or writes files or directories by
        path (ReadFile, WriteFile, the readers); "network" talks to other processes or machines
        (the MPI collectives); "python" calls Python code of the process that is not graphflow's
        (PyFunc). One of `TOUCHES`, or a rule `rule(attrs) -> one of TOUCHES` when the attrs
        decide (PrintV2 writes to a file only for an output_stream "file://..."); `touches_of`
        gives the value for an op. A graph read from a file runs none of these unless its loader
        is told `allow_io=True` (`fileformat/io_policy.py`); a graph the program builds is free.

    Saving
    unsaveable: why no saved output may need this op (it reads a Python input pipeline); "" if it
        may. The op itself may sit in a saved graph.
    cannot_save: why a graph holding this op cannot be saved at all (it calls Python); "" if it can.

    Build-time values
    static_value: `rule(op, inputs) -> numpy value or None`: the op's output value when shape
        inference can know it without running the graph (Shape of a fully known shape, integer
        arithmetic on such values), None when unknown, never a guess. `inputs` (a
        `static_value.StaticInputs`) gives the inputs' own build-time values (`inputs.value(i)`,
        `inputs.values()`) and 1-D shape vectors (`inputs.vector(i)`) within a bounded depth.
        `ops/static_value.constant_value` asks this rule and nothing else.

    Other systems (plain data: the interop packages interpret it; ops never import them)
    onnx: how the op is written as ONNX (`interop/onnx/export_facts.py`), one of
        "Abs": one ONNX node of that type, the op's inputs and outputs in order, no attrs;
        {"op": "Softmax", "attrs": {"axis": "axis"}}: the same, passing the listed attrs on
            (graphflow attr name -> ONNX attr name; an attr the op does not hold is left out);
        {"converter": "conv"}: the ONNX converter of that name (several nodes, layouts, casts),
            with any further keys read by the converter ({"converter": "pool", "op": "MaxPool"});
        {"none": "why"}: no ONNX form, and why (the exporter's error quotes it; shared reasons
            are in `ops/no_onnx.py`).
        None (not declared) is refused by the exporter and by `tests/interop/onnx/test_export_facts.py`.
    """

    type: str
    infer: Callable
    grad: Optional[Callable] = None
    attrs: str = ""
    elementwise: bool = False
    graph_input: bool = False
    must_feed: bool = False
    control_only: bool = False
    constant: bool = False
    variable: bool = False
    reads_variable: bool = False
    conditional: bool = False
    stateful: bool = False
    random: bool = False
    returns_state: bool = False
    may_alias_input: bool = False
    fresh_output: Optional[bool] = None
    retains_inputs: Optional[bool] = None
    inplace_inputs: tuple = ()
    inplace_any_input: bool = False
    commutative: bool = False
    reads_shape_only: bool = False
    shape_input: Optional[int] = None
    value_dependent_shape: bool = False
    layout_attrs: Optional[tuple] = None
    no_gradient: bool = False
    gradient_takes_none: bool = False
    touches: object = ""
    unsaveable: str = ""
    cannot_save: str = ""
    schedule: str = ""
    updates_in_place: bool = False
    static_value: Optional[Callable] = None
    onnx: object = None
    attr_types: dict = field(init=False, repr=False)

    def __post_init__(self):
        try:
            self.attr_types = parse_attr_spec(self.attrs)
        except ValueError as exc:
            raise ValueError(f"OpDef '{self.type}': bad attrs declaration: {exc}") from None
        if self.schedule not in ("", "early", "late"):
            raise ValueError(f"OpDef '{self.type}': schedule must be '', 'early' or 'late', "
                             f"not {self.schedule!r}")
        if not (callable(self.touches) or self.touches in TOUCHES):
            raise ValueError(f"OpDef '{self.type}': touches must be one of {TOUCHES} or a rule of "
                             f"the attrs, not {self.touches!r}")
        if self.must_feed:
            self.graph_input = True
        if self.fresh_output is None:
            self.fresh_output = self.elementwise and not (self.may_alias_input or self.returns_state
                                                          or self.stateful)
        if self.retains_inputs is None:
            self.retains_inputs = not self.fresh_output

    @property
    def attr_names(self):
        return tuple(self.attr_types)

    def touches_of(self, attrs):
        """What an op of this type with `attrs` reaches outside the process ("" for nothing)."""
        if not callable(self.touches):
            return self.touches
        kind = self.touches(attrs)
        if kind not in TOUCHES:
            raise ValueError(f"OpDef '{self.type}': its touches rule gave {kind!r}, not one of "
                             f"{TOUCHES}")
        return kind

    @property
    def foldable(self):
        """Constant folding may evaluate it at plan time (and CSE may merge it)."""
        return not (self.stateful or self.random or self.graph_input)

    @property
    def runs_kernel(self):
        """A plan calls a kernel for it (not a fed placeholder, not a NoOp)."""
        return not (self.must_feed or self.control_only)


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


install_op_defs(lookup)  # Operation.op_def


def find(op_type):
    """The OpDef registered under `op_type`, or None (for names read from files)."""
    return _REGISTRY.get(op_type)


def constant_value_of(tensor):
    """The value of `tensor` when a `constant` op (Const) produces it, else None."""
    if type(tensor) is EagerTensor:
        VALUE_READS[0] += 1
        return tensor._value
    op = tensor.op
    return op.attrs["value"] if lookup(op.type).constant else None


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


# Gradient functions registered by name (`tf.RegisterGradient("MySquare")`) for the ops that a
# `graph.gradient_override_map({"Square": "MySquare"})` block built; by op type above otherwise.
_NAMED_GRADIENTS = {}


def register_named_gradient(name, fn):
    if not isinstance(name, str):
        raise TypeError(f"the gradient's name must be a string, got {name!r}")
    if name in _NAMED_GRADIENTS:
        raise KeyError(f"Registering two gradient with name '{name}'! (Previous registration was "
                       f"{_NAMED_GRADIENTS[name].__qualname__})")
    _NAMED_GRADIENTS[name] = fn


def gradient_rule(op):
    """The gradient rule of `op`: the named one its graph's override map gave it, else its op
    type's (None when neither exists)."""
    override = gradient_override(op)
    if override is not None:
        if override in _NAMED_GRADIENTS:
            return _NAMED_GRADIENTS[override]
        if override in _REGISTRY and _REGISTRY[override].grad is not None:
            return _REGISTRY[override].grad  # an op type's own rule, e.g. "Identity"
        raise LookupError(f"No gradient registered under the name '{override}' (the gradient "
                          f"override of {op.name}, type {op.type}): define it with "
                          f"@tf.RegisterGradient('{override}')")
    return lookup(op.type).grad


def gradient_override(op):
    """The gradient name a `gradient_override_map` block gave `op`, else None."""
    return op.graph.gradient_overrides.get(op) if op.graph.gradient_overrides else None


def no_gradient(*op_types):
    """Declare ops that have no gradient (integer outputs, comparisons, shape queries)."""
    for t in op_types:
        lookup(t).no_gradient = True


class OpBuildError(ValueError):
    """An op could not be built from its inputs (bad dtypes or shapes)."""


def make_op(op_type, inputs=(), attrs=None, name=None, graph=None):
    """Infer the outputs of a new `op_type` op and add it to the graph; returns the Operation.
    In eager mode the eager graph runs it at once (`engine/eager.py`: `EagerGraph.run_op`)."""
    op_def = lookup(op_type)
    attrs = {} if attrs is None else attrs
    if graph is None:
        graph = graph_for_inputs(inputs)
    if graph.eager:
        return graph.run_op(op_def, inputs, attrs, name)
    specs = infer_outputs(op_def, inputs, attrs, name)
    return graph.add_op(op_type, list(inputs), attrs, specs, name=name)


def infer_outputs(op_def, inputs, attrs, name=None):
    """The op's [(dtype, shape)] by its attr checks and shape rule; errors name the op and the
    user's line."""
    try:
        if attrs:
            check_attrs(op_def.attr_types, attrs)
        return op_def.infer(list(inputs), attrs)
    except (ValueError, TypeError) as exc:
        where = _user_location()
        where = f" (created at {where})" if where is not None else ""
        op_type = op_def.type
        label = (name or op_type).rstrip("/") or op_type
        err = TypeError if isinstance(exc, TypeError) else OpBuildError
        raise err(f"{op_type} op '{label}'{where}: {exc}") from None


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


def normalize_axis(axis, ndims, what="axis"):
    """`axis` in [-ndims, ndims) -> non-negative axis; ValueError naming the bounds otherwise."""
    if not -ndims <= axis < ndims:
        raise ValueError(f"{what} {axis} is out of range for a tensor of rank {ndims} (expected "
                         f"[{-ndims}, {ndims}))")
    return axis % ndims


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
