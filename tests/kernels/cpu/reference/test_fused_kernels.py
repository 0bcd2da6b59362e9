"""The fused elementwise CPU kernel on several threads: the same bits as one thread (odd sizes,
broadcasting, loop-invariant values, output over an input), every chunk computed exactly once, the
pool reused, the thread count taken from the session's `tf.ConfigProto`. (Each instruction type on
several threads against its op's own kernel: tests/optimizer_passes/test_fusion.py.)"""

import threading

import numpy as np
import pytest

import graphflow as tf
from graphflow.framework.errors import CheckFailedError
from graphflow.kernels.cpu.reference import fused_kernels, fused_layout
from graphflow.kernels.cpu.threads import intra_op
from tests.op_cases.fused_cases import ACTIVATIONS_PROGRAM, BENCH_PROGRAM, INT_PROGRAM, MIXED_PROGRAM
from tests.tooling import run_on_threads

BIG = fused_kernels.PARALLEL_MIN_ELEMENTS


def _programs(program, dtypes, threads):
    dts = [np.dtype(d) for d in dtypes]
    return (fused_kernels.FusedProgram(program, dts, threads=1),
            fused_kernels.FusedProgram(program, dts, threads=threads))


@pytest.fixture
def chunk_log(monkeypatch):
    """Record which thread computes which chunk. In a threaded run, the first thread to take a chunk
    waits (up to 10 s) until a second thread has taken one too, so that both surely compute some."""
    log = []
    pulled = threading.Condition()

    class Recording(fused_layout.Layout):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            inner = self.loop

            def loop(vals, views, registers, constants, t, starts):
                threaded = not isinstance(starts, range)  # one thread gets the whole range

                def tracked():
                    for c0 in starts:
                        with pulled:
                            log.append((threading.get_ident(), c0))
                            pulled.notify_all()
                            if threaded:
                                pulled.wait_for(lambda: len({tid for tid, _ in log}) > 1, 10)
                        yield c0
                inner(vals, views, registers, constants, t, tracked())
            self.loop = loop

    monkeypatch.setattr(fused_kernels, "Layout", Recording)
    return log


def _bits(a):
    return a.dtype, a.shape, a.tobytes()


def _uniform(shape, seed, dtype=np.float32, low=-3.0, high=3.0):
    return np.random.default_rng(seed).uniform(low, high, shape).astype(dtype)


CASES = {
    "bench, 1-d odd length": (BENCH_PROGRAM, lambda: [_uniform(BIG + 12_345, 0)]),
    "bench, 3-d": (BENCH_PROGRAM, lambda: [_uniform((7, 331, 97), 1)]),
    "mixed, row vector broadcast": (MIXED_PROGRAM, lambda: [
        _uniform((613, 331), 2, np.float64), _uniform(331, 3, np.float64)]),
    "int, outer product (rows x 1) * (1 x cols)": (INT_PROGRAM, lambda: [
        np.random.default_rng(4).integers(-50, 50, (1999, 1), dtype=np.int32),
        np.random.default_rng(5).integers(-9, 9, (1, 211), dtype=np.int32)]),
    "activations, non-aliasing instructions": (ACTIVATIONS_PROGRAM, lambda: [
        _uniform((BIG // 100 + 3, 101), 6)]),
}


@pytest.mark.parametrize("case", list(CASES))
def test_threads_compute_the_same_bits_as_one_thread(case, chunk_log):
    program, make = CASES[case]
    inputs = make()
    serial, threaded = _programs(program, program["inputs"], threads=2)
    want = serial(*inputs)
    assert len({tid for tid, _ in chunk_log}) == 1
    chunk_log.clear()
    got = threaded(*inputs)
    assert _bits(got) == _bits(want)
    assert len({tid for tid, _ in chunk_log}) == 2          # both threads computed chunks
    (layout,) = threaded._layouts.values()
    assert layout.rows > list(serial._layouts.values())[0].rows  # larger chunks than one thread's
    assert sorted(c0 for _, c0 in chunk_log) == list(layout.chunk_starts())  # each chunk once
    out = np.empty_like(want)                                # into a given buffer
    assert threaded(*inputs, out=out) is out
    assert _bits(out) == _bits(want)


def test_threads_writing_over_their_input(chunk_log):
    x = _uniform((BIG // 64 + 5, 64), 7)
    serial, threaded = _programs(ACTIVATIONS_PROGRAM, ["float32"], threads=3)
    want = serial(x)
    buf = x.copy()
    assert threaded(buf, out=buf) is buf
    assert _bits(buf) == _bits(want)
    assert len({tid for tid, _ in chunk_log}) >= 2


def test_loop_invariant_values_are_shared_by_the_threads(chunk_log):
    # tanh(x) * (b * 2 + 1) with b broadcast over x's rows: b * 2 + 1 is computed once, before the loop
    program = {"version": 1, "inputs": ["float64", "float64"], "output": 7, "instructions": [
        ["Const", [], {"value": 2.0}, "float64"],   # 2
        ["Mul", [1, 2], {}, "float64"],              # 3
        ["Const", [], {"value": 1.0}, "float64"],   # 4
        ["Add", [3, 4], {}, "float64"],              # 5
        ["Tanh", [0], {}, "float64"],                # 6
        ["Mul", [6, 5], {}, "float64"]]}             # 7
    x, b = _uniform((BIG // 50 + 1, 50), 8, np.float64), _uniform((1, 50), 9, np.float64)
    serial, threaded = _programs(program, program["inputs"], threads=2)
    want = serial(x, b)
    np.testing.assert_allclose(want, np.tanh(x) * (b * 2 + 1), rtol=1e-15)
    chunk_log.clear()
    assert _bits(threaded(x, b)) == _bits(want)
    assert len({tid for tid, _ in chunk_log}) == 2


def test_small_outputs_stay_on_the_calling_thread(chunk_log):
    n = fused_kernels.PARALLEL_MIN_ELEMENTS - 1  # chunked (several chunks) but not worth the threads
    assert n >= 2 * fused_kernels.CHUNK_ELEMENTS
    _, threaded = _programs(BENCH_PROGRAM, ["float32"], threads=4)
    threaded(_uniform(n, 10))
    assert {tid for tid, _ in chunk_log} == {threading.get_ident()}


@pytest.mark.parametrize("steps", [1, 2])
def test_a_program_goes_on_threads_only_when_its_work_is_large_enough(chunk_log, monkeypatch,
                                                                      steps):
    # threads from PARALLEL_MIN_WORK output elements times computing instructions on (a static
    # rule: the same choice on every call, whatever the machine's load)
    monkeypatch.setattr(fused_kernels, "PARALLEL_MIN_WORK", 2 * (BIG * 2) - 1)
    instructions = [["Tanh", [0], {}, "float32"], ["Neg", [1], {}, "float32"]][:steps]
    program = {"version": 1, "inputs": ["float32"], "output": steps, "instructions": instructions}
    _, threaded = _programs(program, ["float32"], threads=2)
    x = _uniform(BIG * 2, 12)
    want = _bits(threaded(x))
    for _ in range(3):
        chunk_log.clear()
        assert _bits(threaded(x)) == want
        assert len({tid for tid, _ in chunk_log}) == (2 if steps == 2 else 1)
    assert threaded.threads_for(BIG * 2) == (2 if steps == 2 else 1)
    assert threaded.threads_for(BIG - 1) == 1  # below PARALLEL_MIN_ELEMENTS: never


def test_callers_on_several_threads_each_get_their_own_registers():
    # one program run by several Python threads at once (sessions sharing a plan): the register
    # sets a run borrows are never shared by two running calls
    single, _ = _programs(ACTIVATIONS_PROGRAM, ["float32"], threads=1)
    inputs = [_uniform((64, 200), 30 + k) for k in range(4)]
    want = [_bits(single(x)) for x in inputs]

    def caller(k):
        for _ in range(200):
            assert _bits(single(inputs[k])) == want[k]
    assert run_on_threads(caller, 4) == []


def test_the_pool_is_started_once_and_reused():
    _, threaded = _programs(BENCH_PROGRAM, ["float32"], threads=3)
    x = _uniform(BIG * 2, 11)
    threaded(x)
    pool = intra_op.POOL
    workers = list(pool._workers)
    assert 2 <= len(workers) and all(w.is_alive() and w.daemon for w in workers)
    active = threading.active_count()
    helped = pool.helper_calls
    for _ in range(20):
        threaded(x)
    assert intra_op.POOL is pool and pool._workers == workers
    assert threading.active_count() == active  # no thread was started for these runs
    assert pool.helper_calls > helped          # and the workers did take part


def test_errors_on_any_thread_name_the_users_op(chunk_log):
    x = np.zeros((BIG * 2 // 1000, 1000), np.float32)
    x[:, -1] = 1000.0  # exp overflows in every chunk, whichever thread computes it
    program = {"version": 1, "inputs": ["float32"], "output": 1,
               "instructions": [["Exp", [0], {}, "float32"]]}
    f = fused_kernels.FusedProgram(program, [np.dtype(np.float32)], name="expo",
                                   provenance={"members": ["my_exp"], "member_types": ["Exp"]},
                                   threads=2)
    with np.errstate(over="raise"):  # the caller's numpy error handling, on every thread
        with pytest.raises(FloatingPointError, match="in 'my_exp' \\(Exp\\)"):
            f(x)
    with np.errstate(over="ignore"):
        assert np.isinf(f(x)[:, -1]).all()


def test_session_config_sets_the_thread_count():
    x = tf.placeholder(tf.float32, [None], name="x")
    y = tf.tanh(x * 1.5 + 0.25) * 0.5 + tf.nn.relu(x) - tf.exp(-x * x)
    xv = _uniform(BIG + 7, 12)
    results = {}
    for threads in (1, 3):
        config = tf.ConfigProto(intra_op_parallelism_threads=threads)
        with tf.Session(config=config) as sess:
            meta = type("Meta", (), {})()
            results[threads] = sess.run(y, {x: xv}, run_metadata=meta)
            (kernel,) = [k for k in meta.plan.kernels if isinstance(k, fused_kernels.FusedProgram)]
            assert kernel.threads == threads
    assert _bits(results[1]) == _bits(results[3])
    tf.config.set_intra_op_parallelism_threads(2)
    try:
        with tf.Session() as sess:
            assert sess._state.intra_op_threads == 2
    finally:
        tf.config.set_intra_op_parallelism_threads(0)


def test_integer_division_by_zero_in_any_chunk_raises_naming_the_users_op(chunk_log):
    # a zero divisor computed inside the program ((y * 2) // ...), in the last chunk only
    program = {"version": 1, "inputs": ["int32", "int32"], "output": 5,
               "instructions": [["Const", [], {"value": 2}, "int32"],  # 2
                                ["Mul", [1, 2], {}, "int32"],          # 3
                                ["FloorDiv", [0, 3], {}, "int32"],     # 4
                                ["FloorMod", [4, 3], {}, "int32"]]}    # 5
    f = fused_kernels.FusedProgram(program, [np.dtype(np.int32)] * 2, name="divs",
                                   provenance={"members": ["mul", "my_div", "my_mod"],
                                               "member_types": ["Mul", "FloorDiv", "FloorMod"],
                                               "member_sources": ["", "prog.py:7", ""]},
                                   threads=2)
    x = np.arange(BIG * 2, dtype=np.int32)
    y = np.ones(BIG * 2, np.int32)
    np.testing.assert_array_equal(f(x, y), (x // 2) % 2)
    y[-1] = 0
    with pytest.raises(CheckFailedError,
                       match=r"in 'my_div' \(FloorDiv\) created at prog.py:7: Integer division by "
                             "zero"):
        f(x, y)
    small = f.__class__(program, [np.dtype(np.int32)] * 2)  # whole arrays, no provenance
    with pytest.raises(CheckFailedError, match="^Integer division by zero$"):
        small(np.arange(3, dtype=np.int32), np.array([1, 0, 1], np.int32))


def test_a_fused_integer_division_by_zero_is_tfs_invalid_argument_error():
    x = tf.placeholder(tf.int32, [None])
    y = tf.placeholder(tf.int32, [None])
    z = (x + 1) // (y * 2) + 3
    with tf.Session() as sess:  # the optimizer fuses the four ops into one program
        assert sess.run(z, {x: [1, 2], y: [1, 1]}).tolist() == [4, 4]
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match=r"\(FloorDiv\) created at .*test_fused_kernels.py:\d+.*: Integer "
                                 "division by zero"):
            sess.run(z, {x: [1, 2], y: [0, 1]})
    # float programs are not checked: IEEE infinities
    u = tf.placeholder(tf.float32, [None])
    with tf.Session() as sess:
        assert sess.run((u + 1) // (u * 0) + 3, {u: [1.0]}).tolist() == [np.inf]


def test_a_long_chain_on_small_arrays_runs_as_one_generated_function():
    """3,000 ops on 4 elements fuse into programs run on whole arrays: one generated straight-line
    function each, so a run's Python-level calls are a small fraction of its ops (the loop that
    interpreted each instruction made over two per op), with the same values as the unfused ops."""
    import sys

    x = tf.placeholder(tf.float32, [4])
    h = x
    for i in range(1000):
        h = tf.tanh(h) * 1.01 + 0.1 if i % 2 else tf.sin(h)
    value = np.linspace(-1, 1, 4).astype(np.float32)
    with tf.Session() as sess:
        got = sess.run(h, {x: value})
        calls = []
        sys.setprofile(lambda frame, event, arg: calls.append(1) if event in ("call", "c_call")
                       else None)
        try:
            sess.run(h, {x: value})
        finally:
            sys.setprofile(None)
    with tf.Session(optimize=False) as sess:
        want = sess.run(h, {x: value})
    np.testing.assert_array_equal(got, want)
    assert len(calls) < 3000 / 4, len(calls)
