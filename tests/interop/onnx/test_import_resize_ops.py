"""graphflow.interop.onnx.import_resize_ops: Resize with sizes, scales and roi fed at run time, in
every mode, coordinate transformation and nearest rounding, and antialiased, against onnx's own
reference evaluator; sizes known at build time in a TF mode still become TF1's resize op."""

import numpy as np
import pytest
from onnx import TensorProto, helper
from onnx.reference import ReferenceEvaluator

import graphflow as tf
from graphflow.interop import onnx as gf_onnx

X = np.random.default_rng(1).standard_normal((1, 2, 5, 7)).astype(np.float32)


def _model(inputs, opset=19, **attrs):
    names = ["X", "roi", "scales", "sizes"]
    used = [n if n in inputs else "" for n in names]
    while used and not used[-1]:
        used.pop()
    types = {"X": TensorProto.FLOAT, "roi": TensorProto.FLOAT, "scales": TensorProto.FLOAT,
             "sizes": TensorProto.INT64}
    graph = helper.make_graph(
        [helper.make_node("Resize", used, ["Y"], **attrs)], "g",
        [helper.make_tensor_value_info(n, types[n], np.shape(inputs[n])) for n in names
         if n in inputs],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def _check(inputs, **attrs):
    model = _model(inputs, **attrs)
    (want,) = ReferenceEvaluator(model).run(None, inputs)
    got = gf_onnx.import_model(model.SerializeToString()).run(inputs)["Y"]
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("mode,coords,nearest", [
    ("nearest", "half_pixel", "round_prefer_floor"), ("nearest", "asymmetric", "round_prefer_ceil"),
    ("nearest", "align_corners", "floor"), ("nearest", "half_pixel", "ceil"),
    ("linear", "half_pixel", None), ("linear", "pytorch_half_pixel", None),
    ("linear", "half_pixel_symmetric", None), ("linear", "align_corners", None),
    ("cubic", "half_pixel", None), ("cubic", "asymmetric", None), ("cubic", "align_corners", None),
])
# (no scale here puts a source coordinate within rounding of an integer: there the reference takes
# its neighbours from the coordinate plus one, rounded, and may pick the pair one to the left)
@pytest.mark.parametrize("scales", [[1.0, 1.0, 1.6, 0.6], [1.0, 1.0, 0.5, 1.75]])
def test_resize_with_scales_fed(mode, coords, nearest, scales):
    attrs = {"mode": mode, "coordinate_transformation_mode": coords}
    if nearest:
        attrs["nearest_mode"] = nearest
    _check({"X": X, "scales": np.array(scales, np.float32)}, **attrs)


@pytest.mark.parametrize("policy", ["stretch", "not_larger", "not_smaller"])
def test_resize_with_sizes_fed_over_axes(policy):
    _check({"X": X, "sizes": np.array([3, 9], np.int64)}, mode="linear", axes=[3, 2],
           keep_aspect_ratio_policy=policy)


def test_resize_cubic_excluding_outside_taps():
    _check({"X": X, "scales": np.array([1.0, 1.0, 0.8, 1.4], np.float32)}, mode="cubic",
           cubic_coeff_a=-0.5, exclude_outside=1)


def test_resize_tf_crop_and_resize_extrapolates_outside_the_roi():
    roi = np.array([0.2, -0.3, 0.9, 1.1], np.float32)  # starts of axes 2, 3, then ends
    _check({"X": X, "roi": roi, "sizes": np.array([4, 6], np.int64)}, mode="linear",
           coordinate_transformation_mode="tf_crop_and_resize", axes=[2, 3],
           extrapolation_value=-7.0)


def test_sizes_known_at_build_time_in_a_tf_mode_use_tf1_resize():
    model = _model({"X": X, "sizes": np.array([1, 2, 10, 14], np.int64)}, mode="linear",
                   coordinate_transformation_mode="half_pixel")
    graph = model.graph
    graph.initializer.append(helper.make_tensor("sizes", TensorProto.INT64, [4], [1, 2, 10, 14]))
    del graph.input[1]
    imported = gf_onnx.import_model(model.SerializeToString())
    assert "ResizeBilinear" in {op.type for op in imported.graph.get_operations()}
    want = ReferenceEvaluator(model).run(None, {"X": X})[0]
    np.testing.assert_allclose(imported.run({"X": X})["Y"], want, rtol=1e-5, atol=1e-5)


def test_resize_fed_at_run_time_has_a_gradient():
    model = _model({"X": X, "scales": np.array([1.0, 1.0, 2.0, 0.5], np.float32)}, mode="cubic")
    imported = gf_onnx.import_model(model.SerializeToString())
    with imported.graph.as_default():
        (grad,) = tf.gradients(tf.reduce_sum(imported.outputs["Y"]), [imported.inputs["X"]])
        grad = tf.convert_to_tensor(grad)  # a gather's gradient is an IndexedSlices, as in TF
    feeds = {imported.inputs["X"]: X, imported.inputs["scales"]: [1.0, 1.0, 2.0, 0.5]}
    g = imported.session.run(grad, feeds)
    assert g.shape == X.shape and np.isfinite(g).all() and np.abs(g).sum() > 0


@pytest.mark.parametrize("mode", ["linear", "cubic"])
@pytest.mark.parametrize("exclude_outside", [0, 1])
@pytest.mark.parametrize("scales", [[1.0, 1.0, 0.6, 0.3], [1.0, 1.0, 1.5, 0.45]])
def test_resize_antialiased_widens_the_kernel_when_downscaling(mode, exclude_outside, scales):
    _check({"X": X, "scales": np.array(scales, np.float32)}, mode=mode, antialias=1,
           exclude_outside=exclude_outside)
