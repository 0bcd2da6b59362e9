"""`tf.test`: what TF1 programs' own unit tests use — `tf.test.TestCase` (a unittest.TestCase with
a fresh default graph per test, `test_session`/`session`/`cached_session`, `evaluate` and the
array assertions), `tf.test.main`, `tf.test.compute_gradient` / `compute_gradient_error` (the
Jacobian from `tf.gradients` against central finite differences), and the device queries.
"""

import contextlib
import random
import tempfile
import unittest

import numpy as np

from graphflow.engine.session import Session
from graphflow.framework.default_session import get_default_session
from graphflow.framework.graph import get_default_graph, reset_default_graph
from graphflow.ops import math_ops
from graphflow.ops.core_ops import placeholder
from graphflow.ops.gradients import dense_gradients as gradients


class TestCase(unittest.TestCase):
    """unittest.TestCase with TF1's helpers; each test starts on a fresh default graph."""

    def setUp(self):
        super().setUp()
        reset_default_graph()
        np.random.seed(1)
        random.seed(1)
        self._cached = None

    def tearDown(self):
        if self._cached is not None:
            self._cached.close()
            self._cached = None
        super().tearDown()

    def get_temp_dir(self):
        if not hasattr(self, "_temp_dir"):
            self._temp_dir = tempfile.mkdtemp(prefix="graphflow_test_")
        return self._temp_dir

    @contextlib.contextmanager
    def session(self, graph=None, config=None, use_gpu=False, force_gpu=False):
        graph = graph if graph is not None else get_default_graph()
        sess = Session(graph=graph, config=config)
        with graph.as_default(), sess.as_default():
            try:
                yield sess
            finally:
                sess.close()

    # TF1's old name; a property so that unittest does not collect it as a test method
    test_session = property(lambda self: self.session)

    @contextlib.contextmanager
    def cached_session(self, graph=None, config=None, use_gpu=False, force_gpu=False):
        graph = graph if graph is not None else get_default_graph()
        if self._cached is None or self._cached.graph is not graph:
            if self._cached is not None:
                self._cached.close()
            self._cached = Session(graph=graph, config=config)
        with graph.as_default(), self._cached.as_default():
            yield self._cached

    def evaluate(self, tensors):
        sess = get_default_session()
        if sess is None:
            with self.session() as sess:
                return sess.run(tensors)
        return sess.run(tensors)

    # --- assertions (numpy semantics, TF1's default tolerances) ------------------------------
    def assertAllClose(self, a, b, rtol=1e-6, atol=1e-6, msg=None):  # noqa: N802
        a, b = self._value(a), self._value(b)
        self.assertEqual(np.shape(a), np.shape(b), msg or "shapes differ")
        np.testing.assert_allclose(a, b, rtol=rtol, atol=atol, err_msg=msg or "")

    def assertAllCloseAccordingToType(self, a, b, rtol=1e-6, atol=1e-6,  # noqa: N802
                                      float_rtol=1e-6, float_atol=1e-6, half_rtol=1e-3,
                                      half_atol=1e-3, msg=None):
        dtype = np.asarray(self._value(a)).dtype
        if dtype == np.float32:
            rtol, atol = max(rtol, float_rtol), max(atol, float_atol)
        elif dtype == np.float16:
            rtol, atol = max(rtol, half_rtol), max(atol, half_atol)
        self.assertAllClose(a, b, rtol=rtol, atol=atol, msg=msg)

    def assertAllEqual(self, a, b, msg=None):  # noqa: N802
        a, b = self._value(a), self._value(b)
        self.assertEqual(np.shape(a), np.shape(b), msg or "shapes differ")
        np.testing.assert_array_equal(a, b, err_msg=msg or "")

    def assertNear(self, f1, f2, err, msg=None):  # noqa: N802
        self.assertTrue(abs(f1 - f2) <= err, msg or f"{f1} != {f2} +/- {err}")

    def assertArrayNear(self, farray1, farray2, err, msg=None):  # noqa: N802
        self.assertEqual(len(farray1), len(farray2), msg)
        for f1, f2 in zip(farray1, farray2):
            self.assertNear(float(f1), float(f2), err, msg)

    def assertShapeEqual(self, np_array, tf_tensor, msg=None):  # noqa: N802
        self.assertEqual(list(np.shape(np_array)), tf_tensor.shape.as_list(), msg)

    def assertAllInRange(self, target, lower_bound, upper_bound, open_lower_bound=False,  # noqa: N802
                         open_upper_bound=False):
        t = np.asarray(self._value(target))
        low_ok = t > lower_bound if open_lower_bound else t >= lower_bound
        high_ok = t < upper_bound if open_upper_bound else t <= upper_bound
        self.assertTrue(np.all(low_ok & high_ok), f"values outside [{lower_bound}, {upper_bound}]")

    def assertAllGreater(self, a, comparison_target):  # noqa: N802
        self.assertTrue(np.all(np.asarray(self._value(a)) > comparison_target))

    def assertAllLess(self, a, comparison_target):  # noqa: N802
        self.assertTrue(np.all(np.asarray(self._value(a)) < comparison_target))

    def _value(self, x):
        return self.evaluate(x) if hasattr(x, "graph") else x


def main(argv=None):
    """Run the test cases of the calling module (`tf.test.main()`)."""
    unittest.main(argv=argv)


def _jacobians(x, x_shape, y, y_shape, x_init_value, delta, extra_feed_dict, sess):
    x_size, y_size = int(np.prod(x_shape)), int(np.prod(y_shape))
    dtype = x.dtype.as_numpy_dtype
    x0 = (np.asarray(x_init_value, dtype=dtype) if x_init_value is not None
          else np.random.default_rng(0).random(x_shape).astype(dtype))
    feed = dict(extra_feed_dict or {})
    dy = placeholder(y.dtype, y_shape)
    (dx,) = gradients(y, [x], grad_ys=[dy])
    theoretical = np.zeros((x_size, y_size))
    if dx is not None:
        dx = math_ops.cast(dx, x.dtype) if dx.dtype != x.dtype else dx
        for j in range(y_size):
            seed = np.zeros(y_size, y.dtype.as_numpy_dtype)
            seed[j] = 1
            row = sess.run(dx, {**feed, x: x0, dy: seed.reshape(y_shape)})
            theoretical[:, j] = np.asarray(row).reshape(x_size)
    numerical = np.zeros((x_size, y_size))
    flat = x0.reshape(-1).astype(np.float64)
    for i in range(x_size):
        plus, minus = flat.copy(), flat.copy()
        plus[i] += delta
        minus[i] -= delta
        y_plus = sess.run(y, {**feed, x: plus.reshape(x_shape).astype(dtype)})
        y_minus = sess.run(y, {**feed, x: minus.reshape(x_shape).astype(dtype)})
        numerical[i] = (np.asarray(y_plus, np.float64) - np.asarray(y_minus, np.float64)
                        ).reshape(y_size) / (2 * delta)
    return theoretical, numerical


def compute_gradient(x, x_shape, y, y_shape, x_init_value=None, delta=1e-3, init_targets=None,
                     extra_feed_dict=None):
    """(theoretical, numerical) Jacobians of y with respect to x, each [x size, y size]; x and y
    may be lists (then a list of pairs, one per x). Runs in the default session."""
    sess = get_default_session()
    if sess is None:
        raise ValueError("tf.test.compute_gradient needs a default session (with sess.as_default())")
    for target in init_targets or []:
        sess.run(target)
    if isinstance(x, (list, tuple)):
        inits = x_init_value or [None] * len(x)
        return [_jacobians(xi, si, y, y_shape, vi, delta, extra_feed_dict, sess)
                for xi, si, vi in zip(x, x_shape, inits)]
    return _jacobians(x, x_shape, y, y_shape, x_init_value, delta, extra_feed_dict, sess)


def compute_gradient_error(x, x_shape, y, y_shape, x_init_value=None, delta=1e-3,
                           init_targets=None, extra_feed_dict=None):
    """The largest absolute difference between the theoretical and numerical Jacobians."""
    result = compute_gradient(x, x_shape, y, y_shape, x_init_value, delta, init_targets,
                              extra_feed_dict)
    pairs = result if isinstance(result, list) else [result]
    return max(float(np.max(np.abs(t - n))) if t.size else 0.0 for t, n in pairs)


def is_built_with_cuda():
    """True: graphflow's CUDA kernels are part of it (running them needs a GPU and pycuda)."""
    return True


def is_gpu_available(cuda_only=False, min_cuda_compute_capability=None):
    """Whether a CUDA device can be used now (pycuda importable and a device present)."""
    from graphflow.kernels import cuda
    return cuda.availability()[0]


def gpu_device_name():
    return "/device:GPU:0" if is_gpu_available() else ""


__all__ = ["TestCase", "main", "compute_gradient", "compute_gradient_error", "is_built_with_cuda",
           "is_gpu_available", "gpu_device_name"]
