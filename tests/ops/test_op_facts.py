"""Op facts live on the OpDef: the passes, the planner, the executor and the file format query them
and never name op types. This file scans the package for op-type comparisons outside `ops/`, checks
that each fact is consistent with what the ops do, and that the passes honour the facts."""

import ast
import dataclasses
import importlib
import pathlib

import numpy as np
import pytest

import graphflow as tf
from graphflow.engine import memory_plan as memory_planning
from graphflow.framework import dtypes
from graphflow.ops import registry
from graphflow.optimizer_passes import cse

PACKAGE = pathlib.Path(tf.__file__).parent


# ------------------------------------------------------------------ no op-type comparisons
def _type_side(node):
    """An op's type: `<anything>.type`, a variable named `op_type`, or `<mapping>["type"]`."""
    if isinstance(node, ast.Attribute) and node.attr == "type":
        return True
    if isinstance(node, ast.Name) and node.id == "op_type":
        return True
    return (isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant)
            and node.slice.value == "type")


def _names(value):
    """A fixed op-type name or a fixed collection of them (a mapping is a table: allowed)."""
    if isinstance(value, str):
        return True
    return (isinstance(value, (tuple, list, set, frozenset)) and len(value) > 0
            and all(isinstance(v, str) for v in value))


def _resolve(module, node):
    if module is None:
        return None
    if isinstance(node, ast.Name):
        return getattr(module, node.id, None)
    if isinstance(node, ast.Attribute):
        base = _resolve(module, node.value)
        return None if base is None else getattr(base, node.attr, None)
    return None


def _fixed_names(module, node):
    if isinstance(node, ast.Constant):
        return isinstance(node.value, str)
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return len(node.elts) > 0 and all(_fixed_names(module, e) for e in node.elts)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("set",
                                                                                          "frozenset"):
        return len(node.args) == 1 and _fixed_names(module, node.args[0])
    if isinstance(node, (ast.Name, ast.Attribute)):
        return _names(_resolve(module, node))
    return False


def op_type_comparisons(source, module=None, filename="<source>"):
    """`file:line: expression` for each comparison of an op type with a fixed name or set of names
    (`op.type == "Const"`, `t.op.type in ("NoOp", "Placeholder")`, `op.type in SOME_NAMES`,
    `op.type.startswith("Fused")`). Names are resolved in `module` when given."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Compare):
            sides = [node.left] + node.comparators
            if any(_type_side(s) for s in sides) and any(
                    _fixed_names(module, s) for s in sides if not _type_side(s)):
                found.append(f"{filename}:{node.lineno}: {ast.unparse(node)}")
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
              and node.func.attr in ("startswith", "endswith") and _type_side(node.func.value)):
            found.append(f"{filename}:{node.lineno}: {ast.unparse(node)}")
    return found


def _package_modules():
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE)
        name = ".".join(("graphflow",) + rel.with_suffix("").parts)
        yield path, rel, name[:-len(".__init__")] if name.endswith(".__init__") else name


def _optional_import(name):
    try:
        return importlib.import_module(name)
    except ImportError:  # an optional dependency (onnx, mpi4py) is missing: literals still count
        return None


def test_no_op_type_comparisons_outside_ops():
    found = []
    for path, rel, name in _package_modules():
        if rel.parts[0] == "ops":
            continue
        source = path.read_text()
        if ".type" not in source and "op_type" not in source and '"type"' not in source:
            continue
        found += op_type_comparisons(source, _optional_import(name), f"graphflow/{rel}")
    assert not found, ("op types compared outside graphflow/ops/ (declare an OpDef fact and query "
                       "it, or use a predicate of graphflow/ops/):\n  " + "\n  ".join(found))


@pytest.mark.parametrize("line", [
    'op.type == "Placeholder"',
    't.op.type in ("NoOp", "Placeholder")',
    '"Const" != x.op.type',
    'op_type not in {"Add", "Mul"}',
    'op.type in frozenset(["MatMul"])',
    'meta["type"] == "VariableV2"',
    'node.type.startswith("Fused")',
    'op.type in NAMES',
    'op.type == types.VARIABLE',
])
def test_the_scan_finds_each_form(line):
    import types
    module = types.SimpleNamespace(NAMES=frozenset(["Shape", "Size"]),
                                   types=types.SimpleNamespace(VARIABLE="VariableV2"))
    assert len(op_type_comparisons(line, module)) == 1


@pytest.mark.parametrize("line", [
    "op_def.constant and t.op.type in KERNELS",  # a table keyed by op type
    "a.op.type == b.op.type",
    'kind == "value"',
    'x.dtype == "float32"',
])
def test_the_scan_leaves_tables_and_other_comparisons(line):
    import types
    module = types.SimpleNamespace(KERNELS={"Add": None})
    assert op_type_comparisons(line, module) == []


# ------------------------------------------------------------------ the facts are typed
def test_op_defs_hold_typed_facts_only():
    assert "extra" not in {f.name for f in dataclasses.fields(registry.OpDef)}
    bool_facts = [f.name for f in dataclasses.fields(registry.OpDef) if f.type in (bool, "bool")
                  or f.name in ("fresh_output", "retains_inputs")]
    assert {"commutative", "fresh_output", "retains_inputs", "reads_shape_only", "graph_input",
            "must_feed", "control_only", "constant", "variable", "stateful"} <= set(bool_facts)
    for op_type in registry.registered_types():
        op_def = registry.lookup(op_type)
        for name in bool_facts:
            assert type(getattr(op_def, name)) is bool, (op_type, name)
        assert isinstance(op_def.unsaveable, str) and isinstance(op_def.cannot_save, str)
        doc = registry.OpDef.__doc__
    for name in bool_facts + ["unsaveable", "cannot_save", "inplace_inputs"]:
        assert f"    {name}:" in doc, f"OpDef fact '{name}' is not documented in the OpDef docstring"


def _with(fact):
    return [t for t in registry.registered_types() if getattr(registry.lookup(t), fact)]


def test_facts_that_imply_others():
    for op_type in registry.registered_types():
        d = registry.lookup(op_type)
        if d.must_feed:
            assert d.graph_input and not d.runs_kernel
        if d.graph_input:
            assert not d.foldable
        if d.control_only:
            assert not d.runs_kernel
        if d.fresh_output:
            assert not d.may_alias_input and not d.returns_state and not d.retains_inputs, op_type
        if d.inplace_inputs or d.inplace_any_input:
            assert d.fresh_output, f"{op_type} writes into an input's buffer but is not fresh_output"
        if d.constant:
            assert d.attr_names == ("value",) and d.returns_state
        if d.variable or d.reads_variable:
            assert "shared_name" in d.attr_names and d.stateful and d.returns_state
        if d.conditional:
            assert {"then_branch", "else_branch"} <= set(d.attr_names) and d.stateful
    assert _with("must_feed") == ["Placeholder"]
    assert _with("control_only") == ["NoOp"]
    assert _with("constant") == ["Const"]
    assert _with("variable") == ["VariableV2"]


def test_constant_control_only_and_placeholder_ops_build_as_declared():
    g = tf.Graph()
    with g.as_default():
        c = tf.constant([1.0, 2.0])
        p = tf.placeholder(tf.float32, [2])
        n = tf.no_op()
    assert registry.constant_value_of(c) is c.op.attrs["value"]
    assert registry.constant_value_of(p) is None
    assert n.outputs == [] or len(n.outputs) == 0


def _inputs_for(dtype):
    rng = np.random.default_rng(3)
    if dtype == dtypes.bool_:
        return rng.random(16) < 0.5, rng.random(16) < 0.5
    np_dtype = dtype.as_numpy_dtype
    if np.issubdtype(np_dtype, np.floating):
        a = rng.normal(size=16).astype(np_dtype)
        b = rng.normal(size=16).astype(np_dtype)
        b[:4] = a[:4]  # some equal pairs, for the (in)equality ops
        a[4], b[5] = np.inf, -0.0
        return a, b
    return rng.integers(-5, 5, 16).astype(np_dtype), rng.integers(-5, 5, 16).astype(np_dtype)


@pytest.mark.parametrize("op_type", _with("commutative"))
def test_commutative_ops_take_two_inputs_of_one_dtype_and_swap_bit_exactly(op_type):
    from graphflow.ops.registry import OpBuildError
    op_def = registry.lookup(op_type)
    candidates = [dtypes.float32, dtypes.float64, dtypes.int32, dtypes.bool_]
    tried = 0
    for dt in candidates:
        g = tf.Graph()
        with g.as_default():
            a = tf.placeholder(dt, [16], name="a")
            b = tf.placeholder(dt, [16], name="b")
            try:
                ab = registry.make_tensor(op_type, (a, b))
            except (TypeError, OpBuildError):
                continue
            ba = registry.make_tensor(op_type, (b, a))
            assert op_def.infer([a, b], {}) == op_def.infer([b, a], {})
            other = tf.placeholder(tf.int64 if dt != dtypes.int64 else tf.int32, [16])
            with pytest.raises(TypeError):  # one dtype for both inputs: no promotion to undo
                registry.make_tensor(op_type, (a, other))
            av, bv = _inputs_for(dt)
            with tf.Session(graph=g, optimize=False) as sess:
                x, y = sess.run([ab, ba], {a: av, b: bv})
            assert x.dtype == y.dtype
            assert x.tobytes() == y.tobytes(), f"{op_type} on {dt.name} is not commutative"
            tried += 1
    assert tried, f"{op_type}: no dtype of {[d.name for d in candidates]} builds"


@pytest.mark.parametrize("op_type", _with("reads_shape_only"))
def test_shape_readers_do_not_read_values(op_type):
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [2, 3])
        attrs = {"out_type": dtypes.int32} if "out_type" in registry.lookup(op_type).attr_names else {}
        y = registry.make_tensor(op_type, (x,), attrs)
    with tf.Session(graph=g, optimize=False) as sess:
        first = sess.run(y, {x: np.zeros((2, 3), np.float32)})
        second = sess.run(y, {x: np.full((2, 3), 7.5, np.float32)})
    np.testing.assert_array_equal(first, second)


# ------------------------------------------------------------------ the passes honour the facts
@pytest.fixture
def flipped():
    """flipped(op_type, fact, value): set a fact for the test, restored afterwards."""
    saved = []

    def flip(op_type, fact, value):
        op_def = registry.lookup(op_type)
        saved.append((op_def, fact, getattr(op_def, fact)))
        setattr(op_def, fact, value)
    yield flip
    for op_def, fact, value in reversed(saved):
        setattr(op_def, fact, value)
    cse._ELIGIBLE.clear()


def _matmul_tanh_graph():
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [8, 8], name="x")
        h = tf.matmul(x, tf.constant(np.eye(8, dtype=np.float32)), name="mm")
        y = tf.tanh(h, name="tanh")
    return g, y


def _inplace_names(graph, fetch):
    plan = memory_planning.plan_memory(graph.get_operations(), {fetch})
    return {op.name for op in plan.inplace}


def test_memory_planning_writes_over_a_fresh_output_only(flipped):
    g, y = _matmul_tanh_graph()
    assert registry.lookup("MatMul").fresh_output
    assert _inplace_names(g, y) == {"tanh"}  # tanh writes over the product's buffer
    flipped("MatMul", "fresh_output", False)
    assert _inplace_names(g, y) == set()


def test_memory_planning_keeps_buffers_a_retaining_reader_holds(flipped):
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [8], name="x")
        h = tf.exp(x, name="h")
        r = tf.reshape(h, [8], name="view")   # a view of h's buffer
        s = tf.reduce_sum(r, name="total")    # reads the view, keeps no reference
        y = tf.sin(h, name="sin")              # the last reader of h: may write over it
        out = y + s
    assert not registry.lookup("Sum").retains_inputs
    assert "sin" in _inplace_names(g, out)
    flipped("Sum", "retains_inputs", True)
    assert "sin" not in _inplace_names(g, out)


def test_cse_merges_swapped_inputs_of_commutative_ops_only(flipped):
    def merged():
        g = tf.Graph()
        with g.as_default():
            a = tf.placeholder(tf.float64, [3], name="a")
            b = tf.placeholder(tf.float64, [3], name="b")
            out = tf.add(a, b) * tf.add(b, a)
        preserve = {a, b, out}
        cse.run(g, preserve)
        return sum(op.type == "Add" for op in g.get_operations())
    assert merged() == 1
    flipped("Add", "commutative", False)
    cse._ELIGIBLE.clear()
    assert merged() == 2
