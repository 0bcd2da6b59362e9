"""graphflow.kernels.cpu.numba.fused_program: the plan chooses the compiled FusedElementwise and
FusedElementwiseSum programs where they compile something (float instructions in a chunked output,
or a float32 Sigmoid), the numpy reference otherwise and under `TABLE.restricted_to()`; their values
are the reference's (bit for bit per instruction type: tests/optimizer_passes/test_fusion.py and
tests/kernels/cpu/numba/test_fused_jit.py), and float32 Sigmoid's own kernel is the compiled one."""

import numpy as np
import pytest

import graphflow as tf
from graphflow.kernels import KernelNode, SessionState
from graphflow.kernels import cpu as cpu_kernels
from graphflow.kernels.cpu.numba import fused_program
from graphflow.ops import fused_ops
from tests.op_cases.fused_cases import BENCH_PROGRAM, INT_PROGRAM

pytestmark = pytest.mark.skipif(not cpu_kernels.TABLE.feature("numba"),
                                reason="numba is not installed (or GRAPHFLOW_NO_JIT=1)")


def _choice(t):
    return cpu_kernels.TABLE.choose(KernelNode.describing(t.op, SessionState())).name


def test_the_plan_chooses_the_compiled_program_where_it_compiles_something():
    x = tf.placeholder(tf.float32, [256, 256])
    unknown = tf.placeholder(tf.float32, [None, 256])
    small = tf.placeholder(tf.float32, [4, 4])
    assert _choice(fused_ops.fused_elementwise([x], BENCH_PROGRAM)) == "numba"
    assert _choice(fused_ops.fused_elementwise([unknown], BENCH_PROGRAM)) == "numba"
    assert _choice(fused_ops.fused_elementwise([small], BENCH_PROGRAM)) == "reference"  # whole arrays
    sigmoid = {"version": 1, "inputs": ["float32"], "output": 1,
               "instructions": [["Sigmoid", [0], {}, "float32"]]}
    assert _choice(fused_ops.fused_elementwise([small], sigmoid)) == "numba"  # compiled function
    ints = tf.placeholder(tf.as_dtype(INT_PROGRAM["inputs"][0]), [256, 256])
    assert _choice(fused_ops.fused_elementwise([ints] * len(INT_PROGRAM["inputs"]),
                                               INT_PROGRAM)) == "reference"
    assert _choice(fused_ops.fused_elementwise_sum([x], BENCH_PROGRAM, 1)) == "numba"
    with cpu_kernels.TABLE.restricted_to():
        assert _choice(fused_ops.fused_elementwise([x], BENCH_PROGRAM)) == "reference"
    assert _choice(tf.sigmoid(x)) == "numba"
    assert _choice(tf.sigmoid(tf.cast(x, tf.float64))) == "reference"


@pytest.mark.parametrize("op_type", ["FusedElementwise", "FusedElementwiseSum"])
def test_compiled_programs_match_the_reference(op_type):
    xv = np.random.default_rng(0).uniform(-3, 3, (300, 256)).astype(np.float32)
    x = tf.placeholder(tf.float32, xv.shape)
    t = (fused_ops.fused_elementwise([x], BENCH_PROGRAM) if op_type == "FusedElementwise"
         else fused_ops.fused_elementwise_sum([x], BENCH_PROGRAM, 1))
    node = KernelNode.describing(t.op, SessionState())
    impl = next(i for i in cpu_kernels.TABLE.implementations(op_type) if i.name == "numba")
    kernel = impl.build(node)
    if op_type == "FusedElementwise":
        assert isinstance(kernel, fused_program.CompiledFusedProgram)
    want = cpu_kernels.reference_builder(op_type)(node)(xv)
    np.testing.assert_allclose(kernel(xv), want, rtol=1e-5, atol=1e-5)  # (jit_math's tanh)
    meta = type("Meta", (), {})()
    with tf.Session() as sess:
        np.testing.assert_allclose(sess.run(t, {x: xv}, run_metadata=meta), want, rtol=1e-5,
                                   atol=1e-5)
    assert [c[3] for c in meta.plan.kernel_choices() if c[1] == op_type] == ["numba"]
