"""ONNX convolution and pooling at import against direct numpy references: 3-D Conv with groups,
dilations and asymmetric pads, MaxPool with dilations, AveragePool with ceil_mode and
count_include_pad."""

import itertools

import numpy as np
import pytest
from onnx import TensorProto, helper

from graphflow.interop import onnx as gf_onnx
from tests.interop.onnx.onnx_nodes import check_against_reference

F = TensorProto.DOUBLE


def _run(node, x, extra=()):
    inputs = [helper.make_tensor_value_info("x", F, list(x.shape))]
    graph = helper.make_graph([node], "g", inputs, [helper.make_tensor_value_info("y", F, None)],
                              initializer=list(extra))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)])
    return gf_onnx.import_model(model).run({"x": x})["y"]


def _windows(x, kernel, strides, dilations, pads, ceil=False, fill=np.nan):
    """{output index: window values (padding as `fill`)} over NC + spatial `x`, ONNX's rule."""
    spatial = x.shape[2:]
    xp = np.pad(x, [(0, 0), (0, 0)] + [tuple(p) for p in pads], constant_values=fill)
    outs = []
    for size, k, s, d, (lo, hi) in zip(spatial, kernel, strides, dilations, pads):
        span = size + lo + hi - (k - 1) * d - 1
        out = (-(-span // s) if ceil else span // s) + 1
        if ceil and (out - 1) * s >= size + lo:
            out -= 1
        outs.append(out)
    big = np.pad(xp, [(0, 0), (0, 0)] + [(0, 2 * k * d) for k, d in zip(kernel, dilations)],
                 constant_values=np.inf)  # beyond the pads: marks a ceil_mode overhang
    result = {}
    for o in itertools.product(*(range(n) for n in outs)):
        taps = [big[(slice(None), slice(None), *(oi * s + t * d for oi, s, t, d in
                                                 zip(o, strides, tap, dilations)))]
                for tap in itertools.product(*(range(k) for k in kernel))]
        result[o] = np.stack(taps, axis=-1)
    return outs, result


def test_conv3d_with_groups_dilations_and_asymmetric_pads():
    rng = np.random.default_rng(0)
    x, w = rng.normal(size=(2, 4, 5, 6, 5)), rng.normal(size=(6, 2, 2, 3, 2))
    b = rng.normal(size=6)
    pads, strides, dilations = [1, 0, 2, 0, 1, 1], [1, 2, 1], [2, 1, 2]
    node = helper.make_node("Conv", ["x", "w", "b"], ["y"], group=2, pads=pads, strides=strides,
                            dilations=dilations)
    got = _run(node, x, [helper.make_tensor("w", F, w.shape, w.ravel()),
                         helper.make_tensor("b", F, b.shape, b)])
    pairs = [[pads[i], pads[i + 3]] for i in range(3)]
    outs, wins = _windows(x, w.shape[2:], strides, dilations, pairs, fill=0.0)
    want = np.zeros((2, 6, *outs))
    for o, win in wins.items():  # win: [n, c, taps]
        for g in range(2):
            part = win[:, 2 * g:2 * g + 2].reshape(2, -1)
            want[(slice(None), slice(3 * g, 3 * g + 3), *o)] = part @ w[3 * g:3 * g + 3].reshape(3, -1).T
    np.testing.assert_allclose(got, want + b.reshape(1, -1, 1, 1, 1), rtol=1e-10)


@pytest.mark.parametrize("shape, kernel, strides, dilations, pads", [
    ((1, 2, 9), [3], [2], [2], [[1, 2]]),
    ((2, 1, 7, 8), [2, 3], [2, 1], [3, 2], [[1, 0], [2, 1]]),
    ((1, 2, 5, 6, 5), [2, 2, 2], [1, 2, 2], [2, 1, 2], [[0, 1], [1, 1], [0, 0]]),
])
def test_max_pool_with_dilations(shape, kernel, strides, dilations, pads):
    x = np.random.default_rng(1).normal(size=shape)
    flat = [p[0] for p in pads] + [p[1] for p in pads]
    node = helper.make_node("MaxPool", ["x"], ["y"], kernel_shape=kernel, strides=strides,
                            dilations=dilations, pads=flat)
    outs, wins = _windows(x, kernel, strides, dilations, pads, fill=-np.inf)
    want = np.zeros(shape[:2] + tuple(outs))
    for o, win in wins.items():
        want[(slice(None), slice(None), *o)] = win.max(axis=-1)
    np.testing.assert_array_equal(_run(node, x), want)


@pytest.mark.parametrize("count_include_pad", [0, 1])
@pytest.mark.parametrize("dilations", [[1, 1], [2, 1]])
def test_average_pool_ceil_mode(count_include_pad, dilations):
    x = np.random.default_rng(2).normal(size=(1, 2, 7, 7))
    pads = [[1, 0], [0, 0]]
    node = helper.make_node("AveragePool", ["x"], ["y"], kernel_shape=[3, 2], strides=[2, 2],
                            pads=[1, 0, 0, 0], ceil_mode=1, dilations=dilations,
                            count_include_pad=count_include_pad)
    outs, wins = _windows(x, [3, 2], [2, 2], dilations, pads, ceil=True, fill=np.nan)
    assert any(np.isinf(w).any() for w in wins.values())  # some windows overhang the end
    want = np.zeros((1, 2) + tuple(outs))
    for o, win in wins.items():
        inside = win[..., ~np.isinf(win[0, 0])]  # drop the ceil_mode overhang
        counted = inside if count_include_pad else inside[..., ~np.isnan(inside[0, 0])]
        want[(0, slice(None), *o)] = np.nansum(counted, axis=-1)[0] / counted.shape[-1]
    got = _run(node, x)
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-12)


@pytest.mark.parametrize("shape", [(2, 3, 4, 5), (3, 2)])
def test_batch_normalization_in_training_mode_gives_the_running_statistics(shape):
    rng = np.random.default_rng(4)
    channels = shape[1]
    feeds = {"x": rng.standard_normal(shape).astype(np.float32),
             "scale": rng.uniform(0.5, 1.5, channels).astype(np.float32),
             "bias": rng.standard_normal(channels).astype(np.float32),
             "mean": rng.standard_normal(channels).astype(np.float32),
             "var": rng.uniform(0.5, 1.5, channels).astype(np.float32)}
    check_against_reference("BatchNormalization", feeds, n_out=3, opset=15, training_mode=1,
                            momentum=0.8, epsilon=1e-3)


@pytest.mark.parametrize("attrs", [
    {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1], "strides": [2, 2]},
    {"kernel_shape": [2, 3], "strides": [1, 2], "storage_order": 1},
    {"kernel_shape": [2, 2], "dilations": [2, 1], "pads": [0, 1, 1, 0]},
    {"kernel_shape": [3], "strides": [2]},
])
def test_max_pool_indices_as_the_reference(attrs):
    rng = np.random.default_rng(5)
    shape = (2, 3, 6) if len(attrs["kernel_shape"]) == 1 else (2, 3, 6, 7)
    x = rng.integers(0, 4, shape).astype(np.float32)  # few values: ties pick the first
    check_against_reference("MaxPool", {"x": x}, n_out=2, opset=12, **attrs)
