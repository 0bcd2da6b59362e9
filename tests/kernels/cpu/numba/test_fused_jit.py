"""Compiled runs of FusedElementwise programs against the numpy instructions, bit for bit: the
programs of the fused op cases and of the threaded-kernel tests, every compiled op type in float32
and float64 with full, scalar and broadcast (periodic) operands, random programs, edge values (NaN
payloads, infinities, signed zeros, denormals, huge values), odd lengths, one and two threads; and
when the numpy instructions are kept (GRAPHFLOW_NO_JIT, errors asked for, strided inputs).
A float32 tanh inside a run is `jit_math`'s, not numpy's (both within 1 ulp of the correctly
rounded tanh, tested in tests/kernels/cpu/numba/test_jit_math.py): there the reference is the numpy
instructions with that tanh in place of numpy's (`_reference`), still bit for bit."""

import numpy as np
import pytest

import graphflow as tf
from graphflow.kernels import KernelNode, SessionState
from graphflow.kernels import cpu as cpu_kernels
from graphflow.kernels.cpu.numba import fused_jit, fused_program, jit_math
from graphflow.kernels.cpu.reference import fused_kernels
from tests.kernels.cpu.reference.test_fused_kernels import CASES as THREAD_CASES
from tests.op_cases import fused_cases

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")  # edge values overflow

CHUNKED = 2 * fused_kernels.CHUNK_ELEMENTS + 4_321           # several chunks and a partial one
PARALLEL = fused_kernels.PARALLEL_MIN_ELEMENTS + 12_345      # chunks shared by threads


def _build(program, dtypes, threads, jit):
    """A FusedProgram with compiled runs (jit) or with numpy instructions only."""
    dts = [np.dtype(d) for d in dtypes]
    if jit:
        if not fused_jit.enabled():
            pytest.skip("numba is not installed (or GRAPHFLOW_NO_JIT=1): numpy only")
        return fused_program.CompiledFusedProgram(program, dts, threads=threads)
    return fused_kernels.FusedProgram(program, dts, threads=threads)


def _runs(f):
    return [run for layout in f._layouts.values() for run in layout.runs]


def _compiled_math(f):
    """True when a compiled run of `f` computes a float32 tanh or sigmoid (jit_math's)."""
    return any(i.op in jit_math.CALLS for run in _runs(f) for i in run.instrs)


def _reference(program, dtypes, threads, f):
    """The numpy instructions of `program`; where compiled kernel `f` computes a float32 tanh or
    sigmoid in a run, the same program with every run computed by its numpy instructions
    (`Run.numpy_run`, whose tanh and sigmoid are `jit_math.array_call`'s): the compiled loops stand
    in for nothing but arithmetic."""
    if not _compiled_math(f):
        return _build(program, dtypes, threads, jit=False)

    def not_compiled(*args, **kwargs):
        def loop(*operands):
            raise TypeError("not compiled: the numpy instructions run")
        return loop
    saved = fused_jit._compile
    fused_jit._compile = not_compiled
    try:
        g = fused_program.CompiledFusedProgram(program, dtypes, threads=threads)
    finally:
        fused_jit._compile = saved

    def run(*inputs):
        fused_jit._compile = not_compiled  # (layouts are built on the first call)
        try:
            return g(*inputs)
        finally:
            fused_jit._compile = saved
    return run


def _check(program, inputs, threads=1, compiled=True, nan_pairs=False):
    """Both kernels on `inputs`, also into a given buffer; returns the compiled kernel.
    `nan_pairs`: two different NaNs may meet in an instruction, where numpy itself returns one or
    the other depending on where the element falls in its loop (see `test_numpy_nan_pairs`): there
    the result need only be a NaN."""
    dtypes = [np.asarray(a).dtype for a in inputs]
    f = _build(program, dtypes, threads, jit=True)
    got = f(*inputs)
    want = _reference(program, dtypes, threads, f)(*inputs)
    assert got.dtype == want.dtype and got.shape == want.shape
    _same(got, want, nan_pairs)
    out = np.empty_like(want)
    assert f(*inputs, out=out) is out
    _same(out, want, nan_pairs)
    if compiled:
        assert _runs(f), "no compiled run was used"
    return f


def _same(got, want, nan_pairs):
    if nan_pairs and want.dtype.kind == "f":
        both = np.isnan(got) & np.isnan(want)
        got, want = np.where(both, 0, got), np.where(both, 0, want)
    assert got.tobytes() == want.tobytes(), _first_difference(got, want)


def test_numpy_nan_pairs():
    """Why `nan_pairs`: numpy's add of two different NaNs gives the first in its vector loop and
    the second in its scalar remainder."""
    a, b = np.ones(67, np.float32), np.ones(67, np.float32)
    a.view(np.uint32)[[10, 66]] = 0x7FC00000
    b.view(np.uint32)[[10, 66]] = 0xFFC00000
    got = np.add(a, b).view(np.uint32)
    assert {int(got[10]), int(got[66])} == {0x7FC00000, 0xFFC00000}


def _first_difference(got, want):
    g, w = got.reshape(-1), want.reshape(-1)
    bits = f"u{got.dtype.itemsize}"
    k = int(np.flatnonzero(g.view(bits) != w.view(bits))[0])
    return f"element {k}: got {g[k]!r} ({g.view(bits)[k]:x}), numpy gives {w[k]!r} ({w.view(bits)[k]:x})"


def _edge_values(dtype):
    dtype = np.dtype(dtype)
    bits = f"u{dtype.itemsize}"
    fi = np.finfo(dtype)
    nan_payloads = (np.array([0x7FC00001, 0xFFC12345, 0x7FA00000], np.uint32).view(np.float32)
                    if dtype == np.float32 else
                    np.array([0x7FF8000000000001, 0xFFF8123456789ABC, 0x7FF4000000000000],
                             np.uint64).view(np.float64))
    special = np.array([np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0, fi.max, -fi.max, fi.tiny,
                        -fi.tiny, fi.smallest_subnormal, -fi.smallest_subnormal,
                        fi.smallest_subnormal * 7, fi.eps, 1.0, -1.0, 2.0, 0.5, fi.max / 2],
                       dtype)
    return np.concatenate([special, nan_payloads.astype(dtype).view(bits).view(dtype)])


def _data(shape, seed, dtype=np.float32, edge_every=7):
    """Uniform values with edge values spread in (every `edge_every`-th element)."""
    rng = np.random.default_rng(seed)
    x = rng.uniform(-4, 4, shape).astype(dtype)
    flat = x.reshape(-1)
    edges = _edge_values(dtype)
    picks = rng.integers(0, len(edges), flat[::edge_every].shape)
    flat[::edge_every] = edges[picks]
    return x


def _program(inputs, instructions):
    n = len(inputs)
    return {"version": 1, "inputs": inputs, "instructions": instructions,
            "output": n + len(instructions) - 1}


# ------------------------------------------------------------------ the existing programs
def _op_case_programs():
    cases = []
    for c in fused_cases.CASES:
        if c.op_type != "FusedElementwise":
            continue
        with tf.Graph().as_default():
            ph = [tf.placeholder(tf.as_dtype(a.dtype), a.shape) for a in c.inputs]
            program = c.build(*ph).op.get_attr("program")
        cases.append(pytest.param(program, c.inputs, id=c.name))
    return cases


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("program,inputs", _op_case_programs())
def test_op_case_programs(program, inputs, threads):
    big = inputs[0].size >= fused_kernels.CHUNKED_MIN_ELEMENTS
    compiled = big and program["inputs"][0] != "int32"
    _check(program, inputs, threads, compiled)
    if compiled:  # and with edge values
        edge = [_data(a.shape, k, a.dtype) for k, a in enumerate(inputs)]
        _check(program, edge, threads, nan_pairs=True)


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("case", list(THREAD_CASES))
def test_threaded_kernel_cases(case, threads):
    program, make = THREAD_CASES[case]
    inputs = make()
    compiled = program["inputs"][0] != "int32"
    _check(program, inputs, threads, compiled)
    if compiled:
        _check(program, [_data(a.shape, 3, a.dtype) for a in inputs], threads, nan_pairs=True)


# ------------------------------------------------------------------ every compiled op type
_ARITH = ["Add", "Sub", "Mul", "RealDiv", "Maximum", "Minimum", "SquaredDifference"]
_COMPARE = ["Greater", "GreaterEqual", "Less", "LessEqual", "Equal", "NotEqual"]
_UNARY = ["Neg", "Abs", "Square", "Relu", "Relu6"]


def _binary_program(op, dtype, second):
    """op(x, second) followed by a Mul by 1 (so that the op is part of a run of two); `second`:
    "input" (a full-size input), "row" (an input broadcast along rows), "const"."""
    if second == "const":
        ins = [["Const", [], {"value": -0.0}, dtype], [op, [0, 1], {}, dtype]]
        inputs = [dtype]
    else:
        ins = [[op, [0, 1], {}, dtype]]
        inputs = [dtype, dtype]
    v = len(inputs) + len(ins) - 1
    ins += [["Const", [], {"value": 1.0}, dtype], ["Mul", [v, v + 1], {}, dtype]]
    return _program(inputs, ins)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("second", ["input", "row", "const"])
@pytest.mark.parametrize("op", _ARITH)
def test_binary_ops(op, dtype, second):
    x = _data((CHUNKED // 37, 37), 1, dtype, edge_every=3)
    program = _binary_program(op, dtype, second)
    if second == "input":
        # every pair of edge values meets somewhere, and random pairs elsewhere
        e = _edge_values(dtype)
        y = _data(x.shape, 2, dtype, edge_every=5)
        pairs = np.array(np.meshgrid(e, e)).reshape(2, -1).astype(dtype)
        x.reshape(-1)[:pairs.shape[1]] = pairs[0]
        y.reshape(-1)[:pairs.shape[1]] = pairs[1]
        inputs = [x, y]
    elif second == "row":
        inputs = [x, _data((37,), 2, dtype, edge_every=2)]
    else:
        inputs = [x]
    _check(program, inputs, nan_pairs=second != "const")


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("threads", [1, 2])
def test_add_n_is_compiled_summing_left_to_right(dtype, threads):
    # a batch norm's input gradient: g*scale + c*(x - mean) + mean_grad, three terms in one AddN
    # (a row operand among them); the sum is ((a + b) + c) rounded at each step, as numpy's
    shape = (CHUNKED // 16, 16)
    program = _program([dtype] * 5, [
        ["Mul", [0, 1], {}, dtype], ["Sub", [2, 3], {}, dtype], ["Mul", [6, 4], {}, dtype],
        ["AddN", [5, 7, 4], {}, dtype]])
    inputs = [_data(shape, 1, dtype, edge_every=5), _data((16,), 2, dtype, edge_every=3),
              _data(shape, 3, dtype, edge_every=7), _data((16,), 4, dtype, edge_every=4),
              _data((16,), 5, dtype, edge_every=6)]
    f = _check(program, inputs, threads, nan_pairs=True)
    assert any(i.op == "AddN" for run in _runs(f) for i in run.instrs)
    big = np.full(shape, 1e8 if dtype == "float32" else 1e17, dtype)
    ones = np.ones((16,), dtype)
    cancel = _program([dtype] * 3, [["Neg", [0], {}, dtype], ["AddN", [0, 1, 3], {}, dtype]])
    got = _check(cancel, [big, ones, big], threads)(big, ones, big)
    assert (got == 0).all()  # (1e8 + 1) - 1e8 is 0 in float32; (1e8 - 1e8) + 1 would give 1


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("op", _ARITH)
def test_binary_ops_keep_the_payload_of_one_nan(op, dtype):
    # one operand NaN (payloads and signs of every kind), the other any non-NaN value
    program = _binary_program(op, dtype, "input")
    x = _data(CHUNKED, 16, dtype, edge_every=2)
    y = _data(CHUNKED, 17, dtype, edge_every=3)
    y[np.isnan(y)] = 1.5
    _check(program, [x, y])
    _check(program, [y, x])


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("op", _COMPARE)
def test_comparisons_select(op, dtype):
    # where(op(x, y), x * y, y - x): the comparison and the select in one run
    program = _program([dtype, dtype], [
        [op, [0, 1], {}, "bool"], ["Mul", [0, 1], {}, dtype], ["Sub", [1, 0], {}, dtype],
        ["Select", [2, 3, 4], {}, dtype]])
    e = _edge_values(dtype)
    x = _data(CHUNKED, 4, dtype, edge_every=2)
    y = _data(CHUNKED, 5, dtype, edge_every=3)
    pairs = np.array(np.meshgrid(e, e)).reshape(2, -1).astype(dtype)
    x[:pairs.shape[1]], y[:pairs.shape[1]] = pairs
    _check(program, [x, y], nan_pairs=True)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("op", _UNARY)
def test_unary_ops(op, dtype):
    program = _program([dtype], [[op, [0], {}, dtype], ["Const", [], {"value": 3.0}, dtype],
                                 ["Add", [1, 2], {}, dtype], ["Neg", [3], {}, dtype]])
    _check(program, [_data(CHUNKED, 6, dtype, edge_every=2)])


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("ops", [["Abs", "Square"], ["Neg", "Neg", "Square"], ["Abs", "Neg", "Abs"],
                                 ["Neg", "Mul"], ["Abs", "Mul"], ["Neg", "Sub"], ["Neg", "Add"]],
                         ids="-".join)
def test_sign_bit_ops_inside_arithmetic(ops, dtype):
    # chains that compilers fold into other arithmetic (fabs(x) * fabs(x) -> x * x, -x + c -> c - x),
    # changing the sign bit of NaNs: each value is read by the next instruction twice, or with x
    ins = []
    for k, op in enumerate(ops):
        v = k  # the previous value (the input for the first)
        if op in ("Mul", "Square") and k:
            ins.append([op, [v, v] if op == "Mul" else [v], {}, dtype])
        elif op in ("Sub", "Add"):
            ins.append([op, [v, 0], {}, dtype])
        else:
            ins.append([op, [v], {}, dtype])
    # (-x + x meets two NaNs of opposite signs: numpy's own pick depends on the loop, see _check)
    _check(_program([dtype], ins), [_data(CHUNKED, 18, dtype, edge_every=2)],
           nan_pairs=ops[-1] in ("Sub", "Add"))


@pytest.mark.parametrize("jit_math_on", ["1", "0"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_a_float32_sigmoid_joins_the_runs_around_it(dtype, jit_math_on, monkeypatch):
    # a float32 sigmoid is jit_math's inside the run (unless GRAPHFLOW_JIT_MATH=0); a float64 one,
    # or with the switch off, is the numpy sigmoid between two runs
    monkeypatch.setenv("GRAPHFLOW_JIT_MATH", jit_math_on)
    program = _program([dtype], [["Const", [], {"value": 2.0}, dtype], ["Mul", [0, 1], {}, dtype],
                                 ["Sigmoid", [2], {}, dtype], ["Mul", [3, 0], {}, dtype],
                                 ["Add", [4, 2], {}, dtype]])
    f = _check(program, [_data(CHUNKED, 7, dtype, edge_every=2)], nan_pairs=True)
    one_loop = dtype == "float32" and jit_math_on == "1"
    assert [run.op for run in _runs(f)] == (["Mul+Sigmoid+Mul+Add"] if one_loop else
                                           ["Mul+Add"])


def test_a_lone_float32_sigmoid_is_compiled():
    # numpy needs six calls for the sigmoid (abs, negative, exp, where, add, divide): alone, it is
    # still one compiled loop
    program = _program(["float32"], [["Exp", [0], {}, "float32"], ["Sigmoid", [1], {}, "float32"],
                                     ["Exp", [2], {}, "float32"]])
    f = _check(program, [_data(CHUNKED, 23, edge_every=3)])
    assert [run.op for run in _runs(f)] == ["Sigmoid"]


@pytest.mark.parametrize("jit_math_on", ["1", "0"])
@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_a_lone_instruction_joins_an_earlier_run(dtype, threads, jit_math_on, monkeypatch):
    # exp(x * 2 + 1) * exp(x * 0.5) - x * x: the x * 0.5, alone between two exp calls, is computed
    # by the first run, which writes two values
    monkeypatch.setenv("GRAPHFLOW_JIT_MATH", jit_math_on)
    one_loop = dtype == "float32" and jit_math_on == "1"
    program = _program([dtype], [
        ["Const", [], {"value": 2.0}, dtype], ["Const", [], {"value": 0.5}, dtype],
        ["Mul", [0, 1], {}, dtype], ["Add", [3, 2], {}, dtype], ["Exp", [4], {}, dtype],
        ["Mul", [0, 2], {}, dtype], ["Exp", [6], {}, dtype], ["Mul", [5, 7], {}, dtype],
        ["Mul", [0, 0], {}, dtype], ["Sub", [8, 9], {}, dtype]])
    x = _data(PARALLEL, 21, dtype, edge_every=3)
    f = _check(program, [x], threads, nan_pairs=True)
    assert [(run.op, len(run.extra_ids)) for run in _runs(f)] == [("Mul+Add+Mul", 1),
                                                                 ("Mul+Mul+Sub", 0)]
    # tanh(x * 2 + 1) * sigmoid(x) - x * x (benchmarks/bench_vs_tf1.py): with the compiled float32
    # tanh and sigmoid the whole chain is one run
    program = _program([dtype], [
        ["Const", [], {"value": 2.0}, dtype], ["Const", [], {"value": 1.0}, dtype],
        ["Mul", [0, 1], {}, dtype], ["Add", [3, 2], {}, dtype], ["Tanh", [4], {}, dtype],
        ["Sigmoid", [0], {}, dtype], ["Mul", [5, 6], {}, dtype], ["Mul", [0, 0], {}, dtype],
        ["Sub", [7, 8], {}, dtype]])
    f = _check(program, [x], threads, nan_pairs=True)
    assert [(run.op, len(run.extra_ids)) for run in _runs(f)] == (
        [("Mul+Add+Tanh+Sigmoid+Mul+Mul+Sub", 0)] if one_loop else
        [("Mul+Add", 0), ("Mul+Mul+Sub", 0)])
    # x * 0.5 of tanh(x) cannot move before the tanh it reads: it stays a numpy call (or the tanh
    # and it join the run before them); the exp stays a numpy call
    program = _program([dtype], [
        ["Const", [], {"value": 2.0}, dtype], ["Mul", [0, 1], {}, dtype], ["Add", [2, 1], {}, dtype],
        ["Tanh", [3], {}, dtype], ["Mul", [4, 1], {}, dtype], ["Exp", [5], {}, dtype],
        ["Add", [6, 0], {}, dtype], ["Mul", [7, 7], {}, dtype]])
    f = _check(program, [x], threads, nan_pairs=True)
    assert [(run.op, len(run.extra_ids)) for run in _runs(f)] == (
        [("Mul+Add+Tanh+Mul", 0), ("Add+Mul", 0)] if one_loop else [("Mul+Add", 0), ("Add+Mul", 0)])


def test_a_lone_tanh_stays_numpys():
    # with no arithmetic around it, numpy's tanh (faster alone than the compiled one) and its bits
    program = _program(["float32"], [["Exp", [0], {}, "float32"], ["Tanh", [1], {}, "float32"],
                                     ["Exp", [2], {}, "float32"]])
    x = _data(CHUNKED, 22)
    f = _build(program, ["float32"], 1, jit=True)
    with np.errstate(all="ignore"):
        assert f(x).tobytes() == np.exp(np.tanh(np.exp(x))).tobytes()
    assert not _runs(f)


# ------------------------------------------------------------------ the small CNN's groups
@pytest.mark.parametrize("threads", [1, 2])
def test_bias_relu_and_relu_gradient(threads):
    # bias + ReLU over NHWC with 16 channels; ReLU's gradient: where(y > 0, g, zeros)
    shape = (64, 28, 28, 16)
    bias_relu = _program(["float32", "float32"], [
        ["Add", [0, 1], {}, "float32"], ["Relu", [2], {}, "float32"]])
    x, b = _data(shape, 8, edge_every=11), _data((16,), 9, edge_every=3)
    f = _check(bias_relu, [x, b], threads, nan_pairs=True)
    assert _runs(f)[0].period == 16
    relu_grad = _program(["float32", "float32", "float32"], [
        ["Const", [], {"value": 0.0}, "float32"], ["Greater", [0, 3], {}, "bool"],
        ["Select", [4, 1, 2], {}, "float32"]])
    y, g = np.maximum(x, 0), _data(shape, 10, edge_every=13)
    _check(relu_grad, [y, g, np.zeros(shape, np.float32)], threads)


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("rows, period", [(1500, 3), (70001, 3), (4001, 48), (9, 1000), (7, 1024),
                                          (5, 1500), (3, 2049), (300, 16)])
def test_periodic_operands_in_segments_of_whole_rows(rows, period, threads):
    """The loops run over segments of whole rows (`fused_jit.SEGMENT_ELEMENTS`, the periodic
    operands repeated to a segment's length): periods that divide the segment and periods that do
    not (a segment of one row where a row is longer), and a last segment shorter than the others."""
    affine_relu = _program(["float32"] * 4, [
        ["Sub", [0, 1], {}, "float32"], ["Mul", [4, 2], {}, "float32"],
        ["Add", [5, 3], {}, "float32"], ["Relu", [6], {}, "float32"]])
    x = _data((rows, period), 30, edge_every=11)
    vectors = [_data((period,), s, edge_every=5) for s in (31, 32, 33)]
    f = _check(affine_relu, [x, *vectors], threads, nan_pairs=True)
    assert _runs(f) and _runs(f)[0].period == period


# ------------------------------------------------------------------ random programs
_RANDOM_OPS = _ARITH + _UNARY + ["Tanh", "Exp", "Sigmoid", "Select"]


def _random_program(rng, dtype, n_inputs, length):
    types = [dtype] * n_inputs
    ins = []
    for _ in range(length):
        op = str(rng.choice(_RANDOM_OPS))
        values = [v for v, t in enumerate(types) if t == dtype]

        def pick(values=values):
            return int(rng.choice(values))
        if op == "Select":
            types.append("bool")
            ins.append([str(rng.choice(_COMPARE)), [pick(), pick()], {}, "bool"])
            ins.append(["Select", [len(types) - 1, pick(), pick()], {}, dtype])
        elif op in _ARITH:
            if rng.random() < 0.3:
                value = float(rng.choice([0.5, -3.0, 1e-3, 0.0, -0.0, 7.25]))
                ins.append(["Const", [], {"value": value}, dtype])
                types.append(dtype)
                ins.append([op, [pick(), len(types) - 1][::int(rng.choice([1, -1]))], {}, dtype])
            else:
                ins.append([op, [pick(), pick()], {}, dtype])
        else:
            ins.append([op, [pick()], {}, dtype])
        types.append(dtype)
    return _program([dtype] * n_inputs, ins)


@pytest.mark.parametrize("seed", range(12))
def test_random_programs(seed):
    rng = np.random.default_rng(seed)
    dtype = ["float32", "float64"][seed % 2]
    n = [CHUNKED, PARALLEL, 4096 * 3 + 1][seed % 3]
    program = _random_program(rng, dtype, 1 + seed % 3, 6 + seed % 7)
    inputs = [_data(n, seed * 10 + k, dtype, edge_every=5) for k in range(len(program["inputs"]))]
    with np.errstate(all="ignore"):
        _check(program, inputs, threads=1 + seed % 2, nan_pairs=True)


# ------------------------------------------------------------------ when numpy is kept
def test_no_jit_switch_keeps_the_numpy_instructions(monkeypatch):
    program = fused_cases.BENCH_PROGRAM
    node = KernelNode("f", "FusedElementwise", {"program": program}, (np.dtype(np.float32),),
                      (np.dtype(np.float32),), ((CHUNKED,),), SessionState(), in_shapes=((CHUNKED,),))
    monkeypatch.setenv("GRAPHFLOW_NO_JIT", "1")
    cpu_kernels.TABLE.forget_features()
    try:
        assert cpu_kernels.TABLE.choose(node).name == "reference"
    finally:
        monkeypatch.delenv("GRAPHFLOW_NO_JIT")
        cpu_kernels.TABLE.forget_features()
    if fused_jit.enabled():
        assert cpu_kernels.TABLE.choose(node).name == "numba"
    with cpu_kernels.TABLE.restricted_to():
        assert cpu_kernels.TABLE.choose(node).name == "reference"
    x = _data(CHUNKED, 11)
    f = fused_kernels.FusedProgram(program, [np.dtype(np.float32)], threads=1)
    got = f(x)
    assert not _runs(f) and [i.op for i in f.instrs].count("Tanh") == 1
    np.testing.assert_allclose(got, fused_cases.bench_reference(x), rtol=2e-6)
    if not fused_jit.enabled():
        return
    monkeypatch.setenv("GRAPHFLOW_JIT_MATH", "0")  # numpy's tanh in the compiled runs: numpy's bits
    assert _build(program, ["float32"], 1, jit=True)(x).tobytes() == got.tobytes()


def test_errors_asked_for_run_the_numpy_instructions():
    if not fused_jit.enabled():
        pytest.skip("numba is not installed (or GRAPHFLOW_NO_JIT=1): numpy only")
    program = _program(["float32"], [["Const", [], {"value": 1e30}, "float32"],
                                     ["Mul", [0, 1], {}, "float32"], ["Mul", [2, 1], {}, "float32"]])
    f = fused_program.CompiledFusedProgram(program, [np.dtype(np.float32)], name="big", threads=1,
                                           provenance={"members": ["scale", "again"],
                                                       "member_types": ["Mul", "Mul"]})
    x = _data(CHUNKED, 12, edge_every=1000)
    with np.errstate(over="raise"):
        with pytest.raises(FloatingPointError, match="in 'scale' \\(Mul\\)"):
            f(x)
    with np.errstate(all="ignore"):
        assert np.isinf(f(x)).any()
    assert [len(layout.runs) for layout in f._layouts.values()] == [0, 1]


def test_strided_inputs_run_the_numpy_instructions():
    x = _data((CHUNKED, 2), 13)[:, 0]
    program = fused_cases.BENCH_PROGRAM
    f = _build(program, ["float32"], 1, jit=True)
    want = _build(program, ["float32"], 1, jit=False)(x)
    assert f(x).tobytes() == want.tobytes() and not _runs(f)


def test_strided_inputs_of_one_chunk_are_copied_and_run_compiled():
    # a recurrent cell's gates come from Split as strided views of one small array
    gates = _data((4096, 4), 14)
    x = gates[:, 1]
    assert not x.flags.c_contiguous and x.size <= fused_kernels.CHUNK_ELEMENTS
    program = fused_cases.BENCH_PROGRAM
    f = _build(program, ["float32"], 1, jit=True)
    want = _build(program, ["float32"], 1, jit=True)(np.ascontiguousarray(x))  # the compiled bits
    assert f(x).tobytes() == want.tobytes() and _runs(f)
    np.testing.assert_allclose(f(x), _build(program, ["float32"], 1, jit=False)(x), rtol=2e-6,
                               atol=1e-6)


def test_registers_kept_between_runs_hold_no_stale_values():
    # each run borrows the register set the previous run gave back; different inputs each time
    program = fused_cases.BENCH_PROGRAM
    f = _build(program, ["float32"], 1, jit=True)
    for seed in range(4):
        x = _data(5000, 20 + seed)
        fresh = _build(program, ["float32"], 1, jit=True)  # new registers
        assert f(x).tobytes() == fresh(x).tobytes()
    assert all(len(layout._spare) <= 2 for layout in f._layouts.values())


def test_a_new_error_setting_is_seen_at_once():
    # errstate_allows keeps its answer per numpy error-state object: a new setting is asked again
    before = fused_jit.errstate_allows()
    assert before == all(v in ("ignore", "warn", "print") for v in np.geterr().values())
    with np.errstate(over="raise"):
        assert not fused_jit.errstate_allows()
        with np.errstate(all="ignore"):
            assert fused_jit.errstate_allows()
        assert not fused_jit.errstate_allows()
    old = np.seterr(invalid="call")
    try:
        assert not fused_jit.errstate_allows()
    finally:
        np.seterr(**old)
    assert fused_jit.errstate_allows() == before


def test_read_only_inputs_and_operands_a_loop_was_not_compiled_for():
    # variables' buffers are read-only; an operand of another layout falls back to numpy calls
    program = _program(["float32", "float32"], [["Add", [0, 1], {}, "float32"],
                                                ["Relu", [2], {}, "float32"]])
    x, b = _data((CHUNKED // 16, 16), 19), _data(16, 20)
    x.setflags(write=False)
    b.setflags(write=False)
    f = _check(program, [x, b], nan_pairs=True)
    (run,) = _runs(f)
    zero = np.zeros((), np.float32)
    want = np.empty((50, 16), np.float32)
    run.fn(x[:50], b, zero, out=want)
    got = np.empty((50, 16), np.float32)
    run.fn(x[:100:2], b, zero, out=got)  # strided rows: not the compiled signature
    assert got.tobytes() == np.maximum(x[:100:2] + b, zero).tobytes()
    assert want.tobytes() == np.maximum(x[:50] + b, zero).tobytes()


def test_loops_compile_once_per_program_signature():
    if not fused_jit.enabled():
        pytest.skip("numba is not installed (or GRAPHFLOW_NO_JIT=1): numpy only")
    program = fused_cases.BENCH_PROGRAM
    x = _data(CHUNKED, 14)
    _build(program, ["float32"], 1, jit=True)(x)
    compiled = dict(fused_jit._compiled)
    f = _build(program, ["float32"], 2, jit=True)
    f(x)
    f(_data((CHUNKED // 3, 3), 15))  # another layout, the same loops
    assert fused_jit._compiled == compiled
    assert len(f._layouts) == 2 and all(layout.runs for layout in f._layouts.values())


# ------------------------------------------------------------------ on the OpenMP team
def _team_programs():
    """(program, inputs, in-place operand or None): a batch norm's affine + ReLU over NHWC (three
    periodic operands; 16 channels and 3), ReLU's gradient (a scalar), a chain without periodic
    operands on an odd length, and a residual add + ReLU written into one of its inputs."""
    shape = (64, 16, 16, 16)
    x, r = _data(shape, 20, edge_every=11), _data(shape, 21, edge_every=13)
    mean, gain, offset = (_data((16,), s, edge_every=5) for s in (22, 23, 24))
    affine_relu = _program(["float32"] * 4, [
        ["Sub", [0, 1], {}, "float32"], ["Mul", [4, 2], {}, "float32"],
        ["Add", [5, 3], {}, "float32"], ["Relu", [6], {}, "float32"]])
    relu_grad = _program(["float32", "float32"], [
        ["Const", [], {"value": 0.0}, "float32"], ["Greater", [0, 2], {}, "bool"],
        ["Select", [3, 1, 2], {}, "float32"]])
    chain = _program(["float64", "float64"], [
        ["Mul", [0, 1], {}, "float64"], ["Const", [], {"value": -3.0}, "float64"],
        ["Add", [2, 3], {}, "float64"], ["Maximum", [4, 1], {}, "float64"]])
    odd = fused_program.TEAM_MIN_ELEMENTS + 4_321
    residual = _program(["float32"] * 5, [
        ["Sub", [0, 1], {}, "float32"], ["Mul", [5, 2], {}, "float32"],
        ["Add", [6, 3], {}, "float32"], ["Add", [7, 4], {}, "float32"], ["Relu", [8], {}, "float32"]])
    x3 = _data((64, 40, 40, 3), 27, edge_every=11)  # 3 channels: rows that do not divide a segment
    vectors3 = [_data((3,), s, edge_every=2) for s in (28, 29, 30)]
    return [(affine_relu, [x, mean, gain, offset], None),
            (affine_relu, [x3, *vectors3], None),
            (relu_grad, [np.maximum(x, 0), r], None),
            (chain, [_data(odd, 25, np.float64), _data(odd, 26, np.float64)], None),
            (residual, [x, mean, gain, offset, r], 4)]


@pytest.mark.parametrize("case", range(5))
def test_one_run_programs_on_the_team_give_the_one_thread_bits(case, monkeypatch):
    """A program that is one compiled run runs on the OpenMP team (`omp_team.py`) while products
    run as a team, into a new buffer or in place into an input, with the numpy instructions'
    bits (where two different NaNs meet, either, as numpy)."""
    from graphflow.kernels.cpu.threads import omp_team
    if not (fused_jit.enabled() and omp_team.usable()):
        pytest.skip("needs numba (omp threading layer) and oneDNN")
    program, inputs, in_place = _team_programs()[case]
    monkeypatch.setenv("GRAPHFLOW_MATMUL_THREADING", "team")
    team = []
    real = omp_team.run
    monkeypatch.setattr(omp_team, "run", lambda *a: team.append(a[3]) or real(*a))
    dtypes = [a.dtype for a in inputs]
    want = _build(program, dtypes, 1, jit=False)(*inputs)
    f = _build(program, dtypes, 2, jit=True)
    if in_place is None:
        got = f(*inputs)
    else:
        got = inputs[in_place].copy()
        assert f(*inputs[:in_place], got, *inputs[in_place + 1:], out=got) is got
    assert team == [2]
    _same(got, want, nan_pairs=True)  # (two different NaNs meeting: either, as numpy)
    monkeypatch.setenv("GRAPHFLOW_MATMUL_THREADING", "blocks")  # the chunked run, same bits
    _same(_build(program, dtypes, 2, jit=True)(*inputs), want, nan_pairs=True)
    assert team == [2]


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("grad_shape", [(64, 1, 1, 64), (64, 8, 1, 64), (64, 8, 8, 1)])
def test_inputs_repeated_along_inner_axes_join_compiled_runs(grad_shape, threads):
    """A ReLU mask of a gradient that repeats along inner axes (a global average pool's, [n, 1, 1,
    c] against [n, h, w, c]): the input is expanded to the output's shape, so the program is a
    compiled run, with the numpy instructions' bits (NaNs, signed zeros and infinities included)."""
    program = _program(["float32", "float32"],
                       [["Const", [], {"value": 0.0}, "float32"], ["Relu", [0], {}, "float32"],
                        ["Greater", [3, 2], {}, "bool"], ["Select", [4, 1, 2], {}, "float32"]])
    x = _data((64, 8, 8, 64), 1)
    g = _data(grad_shape, 2)
    f = _check(program, [x, g], threads=threads)
    assert all(layout.whole_run is not None for layout in f._layouts.values())


def test_one_instruction_reads_an_inner_broadcast_as_numpy_does():
    """With a single computing instruction the input is not expanded (one numpy call reads it as
    well): no compiled run, the same bits."""
    program = _program(["float32", "float32"], [["Mul", [0, 1], {}, "float32"]])
    x, g = _data((64, 8, 8, 64), 3), _data((64, 1, 1, 64), 4)
    f = _check(program, [x, g], compiled=False)
    assert [shapes for shapes, *_ in f._layouts] == [((64, 8, 8, 64), (64, 1, 1, 64))]
