"""One TF1 program over the decompositions and solvers (svd, qr, self_adjoint_eig, the solves,
matrix_solve_ls, slogdet, cholesky_solve): values and gradients, written against the TF1 API so
that it runs under graphflow and under TensorFlow alike. Singular and eigen vectors enter only
squared, so the numbers do not depend on the sign conventions of the two LAPACK routes.

tests/ops/data/make_tf_linalg_reference.py records TensorFlow's numbers
(tests/ops/data/tf_linalg_reference.json); tests/ops/test_linalg_decomp_ops.py and
test_linalg_solve_ops.py compare graphflow's with them (and with TensorFlow live when
GRAPHFLOW_TF_PYTHON is set)."""

import pathlib


def linalg_program(tf, np):
    deep = np.array([[1.0, 2.0], [3.0, -1.0], [0.5, 4.0]])
    wide = np.array([[2.0, -1.0, 0.5, 1.0], [0.3, 1.5, -2.0, 0.7]])
    square = np.array([[4.0, 1.0, -0.5], [2.0, 5.0, 1.0], [-1.0, 0.5, 3.0]])
    rhs = np.array([[1.0, -2.0], [0.5, 3.0], [2.0, 1.0]])
    out = {}
    grads = {}

    def weights(t, seed):
        n = int(np.prod(t.shape.as_list()))
        return np.cos(np.arange(n) * 0.7 + seed).reshape(t.shape.as_list())

    def record(key, value, inputs):
        out[key] = value
        f = tf.reduce_sum(value * weights(value, len(out)))
        for name, x in inputs.items():
            grads[key + "/d" + name] = tf.gradients(f, x)[0]

    for label, a in (("deep", deep), ("wide", wide), ("square", square)):
        x = tf.constant(a)
        s, u, v = tf.svd(x)
        record("svd_s_" + label, s, {"a": x})
        record("svd_uv_" + label, tf.concat([tf.reshape(tf.square(u), [-1]),
                                             tf.reshape(tf.square(v), [-1])], 0), {"a": x})
        record("svd_values_" + label, tf.svd(x, compute_uv=False), {"a": x})
        q, r = tf.qr(x)
        record("qr_" + label, tf.concat([tf.reshape(q, [-1]), tf.reshape(r, [-1])], 0), {"a": x})
    x = tf.constant(np.array([[1.0, 2.0, 3.0], [-2.0, 0.5, 1.0]]))
    q, r = tf.qr(x, full_matrices=True)
    record("qr_full_wide", tf.concat([tf.reshape(q, [-1]), tf.reshape(r, [-1])], 0), {"a": x})
    s, u, v = tf.svd(tf.constant(deep), full_matrices=True)
    out["svd_full_uv_deep"] = tf.concat([tf.reshape(tf.square(u), [-1]),
                                         tf.reshape(tf.square(v), [-1])], 0)
    sym = tf.constant(square)
    e, ev = tf.self_adjoint_eig(sym)  # reads the lower triangle of a non-symmetric input
    record("eig_e", e, {"a": sym})
    record("eig_v2", tf.square(ev), {"a": sym})
    record("eigvals", tf.self_adjoint_eigvals(sym), {"a": sym})
    a, b = tf.constant(square), tf.constant(rhs)
    record("solve", tf.matrix_solve(a, b), {"a": a, "b": b})
    record("solve_adjoint", tf.matrix_solve(a, b, adjoint=True), {"a": a, "b": b})
    for lower in (True, False):
        for adjoint in (False, True):
            key = "tri_%s_%s" % ("lower" if lower else "upper", "adj" if adjoint else "plain")
            record(key, tf.matrix_triangular_solve(a, b, lower=lower, adjoint=adjoint),
                   {"a": a, "b": b})
    sign, logabs = tf.linalg.slogdet(a)
    out["slogdet_sign"] = sign
    record("slogdet", logabs, {"a": a})
    record("logdet_neg", tf.linalg.slogdet(-a)[1], {"a": a})
    chol = tf.cholesky(tf.matmul(a, a, transpose_b=True))
    record("cholesky_solve", tf.cholesky_solve(chol, b), {"b": b})
    d, w = tf.constant(deep), tf.constant(wide)
    db = tf.constant(rhs)
    wb = tf.constant(rhs[:2])
    record("lstsq_deep", tf.matrix_solve_ls(d, db), {"a": d, "b": db})
    record("lstsq_deep_l2", tf.matrix_solve_ls(d, db, l2_regularizer=0.3), {"a": d, "b": db})
    record("lstsq_wide", tf.matrix_solve_ls(w, wb), {"a": w, "b": wb})
    record("lstsq_wide_l2", tf.matrix_solve_ls(w, wb, l2_regularizer=0.3), {"a": w, "b": wb})
    out["lstsq_deep_slow"] = tf.matrix_solve_ls(d, db, fast=False)
    out["lstsq_wide_slow"] = tf.matrix_solve_ls(w, wb, fast=False)
    rank1 = tf.constant(np.array([[1.0, 2.0], [2.0, 4.0], [3.0, 6.0]]))
    out["lstsq_rank_deficient_slow"] = tf.matrix_solve_ls(rank1, db, l2_regularizer=5.0, fast=False)
    with tf.Session() as sess:
        values = sess.run({**out, **grads})
    return {k: np.asarray(v) for k, v in values.items()}


REFERENCE = pathlib.Path(__file__).parent / "data" / "tf_linalg_reference.json"
