"""graphflow.kernels.registry: implementations chosen by preference, required libraries and
predicates, once per node; the reference is the last candidate; tests can restrict the choice."""

import numpy as np
import pytest

import graphflow as tf
from graphflow.kernels import KernelNode, SessionState
from graphflow.kernels import cpu as cpu_kernels
from graphflow.kernels.registry import BY_SHAPE, REFERENCE, KernelTable, NoKernelError


def _table(have_fast=True):
    table = KernelTable("TEST", features={"fast": lambda: have_fast})
    table.register("Op")(lambda node: "reference")
    table.register("Op", name="big", preference=10,
                   applies=lambda node: node.in_shapes[0] is not None
                   and None not in node.in_shapes[0] and np.prod(node.in_shapes[0]) >= 100)(
        lambda node: "big")
    table.register("Op", name="fast", preference=20, requires=("fast",),
                   applies=lambda node: node.in_dtypes[0] == np.float32)(lambda node: "fast")
    return table


def _node(shape, dtype=np.float32):
    return KernelNode("op", "Op", {}, (np.dtype(dtype),), (np.dtype(dtype),), (shape,),
                      SessionState(), in_shapes=(shape,))


def test_the_most_preferred_applicable_implementation_is_chosen():
    table = _table()
    assert table.choose(_node((10, 10))).name == "fast"
    assert table.choose(_node((10, 10), np.float64)).name == "big"
    assert table.choose(_node((2, 2), np.float64)).name == REFERENCE
    assert [i.name for i in table.implementations("Op")] == ["fast", "big", REFERENCE]


def test_unknown_input_shapes_get_the_choice_made_per_shapes_at_run_time():
    table = KernelTable("TEST")
    calls = []
    table.register("Op")(lambda node: lambda x: ("reference", x.shape))
    table.register("Op", name="big", preference=10,
                   applies=lambda node: node.in_shapes[0][0] is not None
                   and node.in_shapes[0][0] >= 100)(
        lambda node: calls.append(node.in_shapes) or (lambda x: ("big", x.shape)))
    impl = table.choose(_node((None, 10), np.float64))
    assert impl.name == BY_SHAPE
    kernel = impl.build(_node((None, 10), np.float64))
    assert kernel(np.zeros((200, 10))) == ("big", (200, 10))
    assert kernel(np.zeros((2, 10))) == ("reference", (2, 10))
    assert kernel(np.zeros((200, 10))) == ("big", (200, 10))
    assert calls == [((200, 10),)]  # built once per shape
    # one usable implementation: no choice to defer
    with table.restricted_to():
        assert table.choose(_node((None, 10), np.float64)).name == REFERENCE


def test_a_missing_library_removes_its_implementations():
    table = _table(have_fast=False)
    assert table.choose(_node((10, 10))).name == "big"


def test_restricted_to_limits_the_choice_within_the_block():
    table = _table()
    with table.restricted_to():
        assert table.choose(_node((10, 10))).name == REFERENCE
    with table.restricted_to({"big"}):
        assert table.choose(_node((10, 10))).name == "big"
    assert table.choose(_node((10, 10))).name == "fast"


def test_registration_errors_are_clear():
    table = _table()
    with pytest.raises(ValueError, match="registered twice"):
        table.register("Op", name="big")(lambda node: None)
    with pytest.raises(ValueError, match="unknown kernel feature"):
        table.register("Op", name="gpu", requires=("cuda",))(lambda node: None)
    with pytest.raises(ValueError, match="reference implementation runs every node"):
        table.register("Other", applies=lambda node: True)(lambda node: None)
    with pytest.raises(NoKernelError, match="'Missing'"):
        table.choose(KernelNode("m", "Missing", {}, (), (), (), None))


def test_a_table_loads_its_modules_on_the_first_question_only():
    loads = []
    table = KernelTable("TEST", load=lambda: loads.append(1))
    table.register("Op")(lambda node: "reference")
    assert loads == []
    assert "Op" in table and table.op_types() == ["Op"]
    table.implementations("Op")
    assert loads == [1]


def test_every_cpu_op_type_has_a_reference_implementation():
    missing = [t for t in cpu_kernels.TABLE.op_types()
               if REFERENCE not in [i.name for i in cpu_kernels.TABLE.implementations(t)]]
    assert not missing, f"op types without a numpy reference: {missing}"


def test_the_plan_records_its_choices():
    x = tf.placeholder(tf.float32, [4, 3])
    y = tf.nn.relu(tf.matmul(x, tf.ones([3, 2])))
    with tf.Session(optimize=False) as sess:
        sess.run(y, {x: np.ones((4, 3), np.float32)})
        plan = next(iter(sess._plans.values()))
        plan = getattr(plan, "plan", plan)
    choices = {op_type: impl for _, op_type, _, impl in plan.kernel_choices()}
    assert set(choices) >= {"MatMul", "Relu"}
    for op_type, impl in choices.items():
        assert impl in [i.name for i in cpu_kernels.TABLE.implementations(op_type)]
