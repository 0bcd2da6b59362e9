"""graphflow.kernels.cpu.onednn.dnnl: the optional oneDNN binding loads lazily from the onednn-cpu-gomp
distribution, is off with GRAPHFLOW_NO_DNNL=1 or without the library (the numpy kernels then run
unchanged), and turns a failing oneDNN call into an error naming the function and the status."""

import ctypes
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import graphflow as tf
from graphflow.kernels import cpu as cpu_kernels
from graphflow.kernels.cpu.blocked import conv_blocked
from graphflow.kernels.cpu.onednn import dnnl, dnnl_conv, dnnl_conv_grads
from tests.tooling import required

needs_dnnl = pytest.mark.skipif(
    dnnl.library() is None and not required("onednn"),
    reason="oneDNN is not installed (onednn-cpu-gomp) or GRAPHFLOW_NO_DNNL=1; CI provides it")


def _conv_train_step():
    tf.reset_default_graph()
    rng = np.random.default_rng(0)
    x = tf.constant(rng.standard_normal((4, 9, 9, 8)).astype(np.float32))
    w = tf.Variable(rng.standard_normal((3, 3, 8, 4)).astype(np.float32))
    y = tf.nn.conv2d(x, w, [1, 1, 1, 1], "SAME")
    loss = tf.reduce_sum(tf.nn.conv2d(tf.nn.relu(y), tf.ones([3, 3, 4, 8]), [1, 1, 1, 1], "SAME"))
    gx, gw = tf.gradients(loss, [x, w])
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        return sess.run([loss, gx, gw])


def test_without_the_library_the_numpy_kernels_run(monkeypatch):
    monkeypatch.setattr(dnnl, "_library", None)
    monkeypatch.setattr(dnnl, "find_library", lambda: None)
    monkeypatch.setattr(cpu_kernels.TABLE, "_features", {})  # asked again here, restored after
    assert dnnl.library() is None
    assert not dnnl_conv.applies(np.ones(3, np.float32))
    calls = []
    real = conv_blocked.conv2d
    monkeypatch.setattr(conv_blocked, "conv2d", lambda *a: calls.append(1) or real(*a))
    for module, name in ((dnnl_conv, "conv2d"), (dnnl_conv, "conv2d_backprop_input"),
                         (dnnl_conv_grads, "conv2d_backprop_filter"),
                         (dnnl_conv_grads, "conv2d_backprop_input_filter")):
        monkeypatch.setattr(module, name, None)  # would raise if called
    loss, gx, gw = _conv_train_step()
    assert calls and np.isfinite(loss) and gx.shape == (4, 9, 9, 8) and gw.shape == (3, 3, 8, 4)


def test_an_unloadable_library_counts_as_absent(monkeypatch, tmp_path):
    broken = tmp_path / "libdnnl.so.3"
    broken.write_bytes(b"not a shared object")
    monkeypatch.setattr(dnnl, "_library", None)
    monkeypatch.setattr(dnnl, "find_library", lambda: broken)
    assert dnnl.library() is None


def _child(code, **env):
    environment = dict(os.environ, **env)
    out = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=environment,
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    return out.stdout.split()


SWITCH = """
    import numpy as np
    import graphflow as tf
    from graphflow.kernels.cpu.onednn import dnnl, dnnl_conv
    dnnl_conv.MIN_MACS = 0  # this tiny convolution would otherwise stay on the numpy kernels
    x = tf.placeholder(tf.float32, (2, 5, 5, 3))  # (a constant's convolution would be folded)
    y = tf.nn.conv2d(x, tf.ones([3, 3, 3, 2]), [1, 1, 1, 1], "SAME")
    with tf.Session() as sess:
        value = sess.run(y, {x: np.ones((2, 5, 5, 3), np.float32)})
    print(dnnl.library() is None, len(dnnl_conv._plans), value[0, 2, 2, 0], value[0, 0, 0, 0])
"""


def test_graphflow_no_dnnl_switches_it_off():
    off, plans, centre, corner = _child(SWITCH, GRAPHFLOW_NO_DNNL="1")
    assert (off, plans, float(centre), float(corner)) == ("True", "0", 27.0, 12.0)


@needs_dnnl
def test_the_library_loads_lazily_and_runs_the_convolutions():
    code = "import graphflow, sys\nfrom graphflow.kernels.cpu.onednn import dnnl\n" \
           "print(any('libdnnl' in l for l in open('/proc/self/maps')), dnnl._library)\n" + \
           textwrap.dedent(SWITCH)
    before, state, off, plans, centre, corner = _child(code, GRAPHFLOW_NO_DNNL="0")
    assert (before, state) == ("False", "None")  # importing graphflow loads nothing
    assert (off, int(plans) > 0, float(centre), float(corner)) == ("False", True, 27.0, 12.0)


@needs_dnnl
def test_the_library_is_found_through_the_distribution():
    path = dnnl.find_library()
    assert path is not None and path.name == dnnl.LIBRARY and path.exists()


@needs_dnnl
def test_a_failing_call_names_the_function_and_status():
    lib = dnnl.library()
    md = ctypes.c_void_p()
    with pytest.raises(dnnl.DnnlError, match=r"dnnl_memory_desc_create_with_strides failed .*"
                                             r"invalid_arguments"):
        lib.call("dnnl_memory_desc_create_with_strides", ctypes.byref(md), -1, dnnl.dims([]),
                 dnnl.F32, dnnl.dims([]))


@needs_dnnl
def test_an_unsupported_geometry_is_an_error_not_a_wrong_result():
    lib = dnnl.library()
    src = dnnl.Desc.plain(lib, [1, 2, 4, 4], [32, 16, 4, 1])
    wrong = dnnl.Desc.plain(lib, [3, 5, 3, 3], [45, 9, 3, 1])  # 5 input channels, src has 2
    dst = dnnl.Desc.plain(lib, [1, 3, 2, 2], [12, 4, 2, 1])
    pd = ctypes.c_void_p()
    with pytest.raises(dnnl.DnnlError, match="convolution_forward"):
        lib.call("dnnl_convolution_forward_primitive_desc_create", ctypes.byref(pd), lib.engine,
                 dnnl.FORWARD_TRAINING, dnnl.CONVOLUTION_DIRECT, src.handle, wrong.handle, None,
                 dst.handle, dnnl.dims([1, 1]), dnnl.dims([0, 0]), dnnl.dims([0, 0]),
                 dnnl.dims([0, 0]), None)


@needs_dnnl
def test_element_strides_describe_arrays_as_they_lie():
    a = np.zeros((2, 3, 4, 5), np.float32)  # NHWC
    assert dnnl.element_strides(a.shape, (0, 3, 1, 2)) == [60, 1, 20, 5]
    assert [s // 4 for s in a.strides] == dnnl.element_strides(a.shape, (0, 1, 2, 3))


@needs_dnnl
def test_openmp_thread_count_is_restored_after_a_convolution():
    gomp = ctypes.CDLL("libgomp.so.1")
    before = gomp.omp_get_max_threads()
    gomp.omp_set_num_threads(3)
    saved, dnnl_conv.MIN_MACS = dnnl_conv.MIN_MACS, 0
    try:
        loss, _, _ = _conv_train_step()
        assert np.isfinite(loss) and dnnl_conv._plans
        assert gomp.omp_get_max_threads() == 3
    finally:
        gomp.omp_set_num_threads(before)
        dnnl_conv.MIN_MACS = saved


@needs_dnnl
def test_a_primitive_binds_its_memory_objects_once_per_thread_and_argument_list():
    # later calls only point the kept memory objects at their buffers: each call's results are
    # its own buffers', on any thread
    from concurrent.futures import ThreadPoolExecutor

    from graphflow.kernels.cpu.reference.conv_geometry import Geometry
    geo = Geometry(6, 6, 3, 3, 1, 1, 1, 1, "SAME")
    plan = dnnl_conv._plan("forward", geo, 2, 3, 4, bias=True)
    rng = np.random.default_rng(0)
    f = rng.standard_normal((3, 3, 3, 4)).astype(np.float32)
    weights = dnnl_conv._weights_in({2: plan}, f)[2]

    def conv(x, bias):
        out = np.empty((2, 6, 6, 4), np.float32)
        plan.prim.execute({dnnl.ARG_SRC: x, dnnl.ARG_WEIGHTS: weights, dnnl.ARG_DST: out,
                           dnnl.ARG_BIAS: bias})
        return out

    cases = [(rng.standard_normal((2, 6, 6, 3)).astype(np.float32),
              rng.standard_normal(4).astype(np.float32)) for _ in range(6)]
    def reference(x, b):  # SAME 3x3: pad by one, sum the nine shifted products
        xp = np.pad(x, ((0, 0), (1, 1), (1, 1), (0, 0)))
        return sum(xp[:, i:i + 6, j:j + 6] @ f[i, j] for i in range(3) for j in range(3)) + b
    want = [reference(x, b) for x, b in cases]
    for (x, b), w in zip(cases, want):
        np.testing.assert_allclose(conv(x, b), w, rtol=1e-5, atol=1e-5)
    with ThreadPoolExecutor(3) as pool:
        got = list(pool.map(lambda case: conv(*case), cases * 4))
    for g, w in zip(got, want * 4):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5)
    threads = {key[0] for key in plan.prim._bound}
    assert len(plan.prim._bound) == len(threads) >= 2  # one binding per thread, reused
