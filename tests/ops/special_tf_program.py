"""One TF1 program over the special functions and zero-guarded divisions of
ops/elementwise_special.py and ops/special_math_ops.py: values in float64 and float32 at a grid
of points that includes the edges of each domain (0, negative, inf, NaN), and gradients at
interior points. It runs under graphflow and under TensorFlow alike;
tests/ops/data/make_tf_special_reference.py records TensorFlow's numbers
(tests/ops/data/tf_special_reference.json) and tests/ops/test_special_math_ops.py compares."""

import pathlib


def special_program(tf, np):
    edges = np.array([-3.0, -2.5, -1.0, -0.5, 0.0, 1e-3, 0.3, 1.0, 1.5, 2.0, 5.0, 10.0, 30.0,
                      np.inf, np.nan])
    a, x = [v.ravel() for v in np.meshgrid(edges, edges, indexing="ij")]
    unit = np.concatenate([np.linspace(-1.0, 1.0, 41), [-0.999999, 0.999999, 1e-8, -2.0, np.nan]])
    b3 = np.array([0.0, 0.5, 1.0, 2.0, -1.0, np.nan])
    x3 = np.array([-0.1, 0.0, 0.2, 0.5, 1.0, 1.2, np.nan])
    ba, bb, bx = [v.ravel() for v in np.meshgrid(edges, b3, x3, indexing="ij")]
    m = tf.math
    out = {}
    for dt in (np.float64, np.float32):
        name = np.dtype(dt).name

        def c(v, dt=dt):
            return tf.constant(np.asarray(v, dt))
        binary = {"atan2": m.atan2, "xlogy": m.xlogy, "xlog1py": m.xlog1py, "xdivy": m.xdivy,
                  "divide_no_nan": m.divide_no_nan, "multiply_no_nan": m.multiply_no_nan,
                  "igamma": m.igamma, "igammac": m.igammac, "zeta": m.zeta,
                  "nextafter": m.nextafter}
        for key, fn in binary.items():
            out[key + "/" + name] = fn(c(a), c(x))
        unary = {"acos": (m.acos, unit), "asin": (m.asin, unit), "atan": (m.atan, edges),
                 "acosh": (m.acosh, edges), "asinh": (m.asinh, edges), "atanh": (m.atanh, unit),
                 "cosh": (m.cosh, edges), "sinh": (m.sinh, edges), "erfc": (m.erfc, edges),
                 "erfinv": (m.erfinv, unit), "ndtri": (m.ndtri, (unit + 1) / 2),
                 "erfcinv": (m.erfcinv, unit + 1), "bessel_i0e": (m.bessel_i0e, edges),
                 "bessel_i1e": (m.bessel_i1e, edges), "bessel_i0": (m.bessel_i0, edges),
                 "bessel_i1": (m.bessel_i1, edges), "rint": (m.rint, edges * 1.25),
                 "is_inf": (m.is_inf, edges), "reciprocal_no_nan": (m.reciprocal_no_nan, edges)}
        for key, (fn, values) in unary.items():
            out[key + "/" + name] = fn(c(values))
        out["betainc/" + name] = m.betainc(c(ba), c(bb), c(bx))
        out["polyval/" + name] = m.polyval([c(2.0), c(-1.0), c(0.5)], c(edges))
        out["scalar_mul/" + name] = m.scalar_mul(c(-1.5), c(edges))
    # gradients at interior points (float64)
    pa = tf.constant(np.array([0.5, 1.0, 2.5, 4.0, 10.0, 0.7, 3.0]))
    px = tf.constant(np.array([0.3, 2.0, 1.0, 9.0, 4.0, 30.0, 3.0]))
    pu = tf.constant(np.array([-0.8, -0.3, 0.0, 0.2, 0.6, 0.9, 0.45]))
    pb = tf.constant(np.array([0.4, 1.5, 2.0, 0.8, 3.0, 1.2, 0.9]))
    fns = {"igamma": lambda: m.igamma(pa, px), "igammac": lambda: m.igammac(pa, px),
           "zeta": lambda: m.zeta(pa + 1.2, px), "atan2": lambda: m.atan2(pu, pb),
           "xlogy": lambda: m.xlogy(pu, pb), "xlog1py": lambda: m.xlog1py(pu, pb),
           "xdivy": lambda: m.xdivy(pu, pb), "divide_no_nan": lambda: m.divide_no_nan(pu, pb),
           "multiply_no_nan": lambda: m.multiply_no_nan(pu, pb),
           "betainc": lambda: m.betainc(pa, pb, (pu + 1) / 2.5),
           "acos": lambda: m.acos(pu), "asin": lambda: m.asin(pu), "atan": lambda: m.atan(pu),
           "acosh": lambda: m.acosh(px + 1), "asinh": lambda: m.asinh(pu),
           "atanh": lambda: m.atanh(pu), "cosh": lambda: m.cosh(pu), "sinh": lambda: m.sinh(pu),
           "erfc": lambda: m.erfc(pu), "erfinv": lambda: m.erfinv(pu),
           "ndtri": lambda: m.ndtri((pu + 1) / 2.5), "erfcinv": lambda: m.erfcinv(pu + 1),
           "bessel_i0e": lambda: m.bessel_i0e(pu * 10), "bessel_i1e": lambda: m.bessel_i1e(pu * 10),
           "bessel_i0": lambda: m.bessel_i0(pu * 3), "bessel_i1": lambda: m.bessel_i1(pu * 3)}
    for key, fn in fns.items():
        y = fn()
        for wrt, t in (("a", pa), ("x", px), ("u", pu), ("b", pb)):
            g = tf.gradients(y, [t])[0]
            if g is not None:
                out["grad_" + key + "/d" + wrt] = g
    with tf.Session() as sess:
        values = sess.run(out)
    return {k: np.asarray(v) for k, v in values.items()}


REFERENCE = pathlib.Path(__file__).parent / "data" / "tf_special_reference.json"
