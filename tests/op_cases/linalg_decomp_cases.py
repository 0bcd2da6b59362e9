"""Cases for the matrix decompositions (Svd, Qr, SelfAdjointEigV2). Singular and eigen vectors
are defined up to sign: the cases fix each vector's sign (by the sign of its first entry) in
the graph and in the numpy reference alike, so values and finite differences are sign-free (the
sign's own gradient is zero)."""

import numpy as np

import graphflow as tf
from tests.op_cases import OpCase, rand


def _signs(u):
    return np.where(u[..., :1, :] < 0, -1.0, 1.0)


def _tf_signs(u):
    return tf.sign(u[..., :1, :])


def _svd_ref(a, full_matrices=False):
    u, s, vt = np.linalg.svd(a, full_matrices=full_matrices)
    v = np.swapaxes(vt, -1, -2)
    return s, u * _signs(u), v * _signs(v)


def _svd_build(full_matrices=False):
    def build(a):
        s, u, v = tf.svd(a, full_matrices=full_matrices)
        return s, u * _tf_signs(u), v * _tf_signs(v)
    return build


def _eigh_ref(a):
    e, v = np.linalg.eigh(a, UPLO="L")
    return e, v * _signs(v)


def _eigh_build(a):
    e, v = tf.self_adjoint_eig(a)
    return e, v * _tf_signs(v)


def _qr_ref(a, full_matrices=False):
    return np.linalg.qr(a, mode="complete" if full_matrices else "reduced")


def _distinct_singular_values(*shape, seed=0):
    """A matrix with well-separated singular values (finite differences stay accurate)."""
    rng = np.random.default_rng(seed)
    m, n = shape[-2:]
    p = min(m, n)
    u, _ = np.linalg.qr(rng.standard_normal(shape[:-2] + (m, m)))
    v, _ = np.linalg.qr(rng.standard_normal(shape[:-2] + (n, n)))
    s = np.zeros(shape)
    s[..., range(p), range(p)] = np.linspace(3.0, 1.0, p)
    return u @ s @ np.swapaxes(v, -1, -2)


CASES = [
    OpCase("Svd", lambda a: tf.svd(a, compute_uv=False), [rand(2, 4, 3)],
           lambda a: np.linalg.svd(a, compute_uv=False), name="Svd[singular values]"),
    OpCase("Svd", _svd_build(), [_distinct_singular_values(2, 3, 3)], _svd_ref,
           unknown_shapes=False, name="Svd[square]"),
    OpCase("Svd", _svd_build(), [_distinct_singular_values(4, 2, seed=1)], _svd_ref,
           unknown_shapes=False, name="Svd[deep]"),
    OpCase("Svd", _svd_build(), [_distinct_singular_values(2, 2, 4, seed=2)], _svd_ref,
           unknown_shapes=False, name="Svd[wide]"),
    OpCase("Svd", _svd_build(full_matrices=True), [_distinct_singular_values(3, 4, seed=3)],
           lambda a: _svd_ref(a, True), unknown_shapes=False, name="Svd[full_matrices wide]"),
    OpCase("Svd", _svd_build(full_matrices=True), [_distinct_singular_values(4, 3, seed=4)],
           lambda a: _svd_ref(a, True), unknown_shapes=False, name="Svd[full_matrices deep]"),
    OpCase("Qr", tf.qr, [rand(2, 4, 3)], _qr_ref, unknown_shapes=False, name="Qr[deep]"),
    OpCase("Qr", tf.linalg.qr, [rand(3, 3) + 2 * np.eye(3)], _qr_ref, unknown_shapes=False,
           name="Qr[square]"),
    OpCase("Qr", tf.qr, [rand(2, 3, 5)], _qr_ref, unknown_shapes=False, name="Qr[wide]"),
    OpCase("Qr", lambda a: tf.qr(a, full_matrices=True), [rand(2, 4)],
           lambda a: _qr_ref(a, True), unknown_shapes=False, name="Qr[full_matrices wide]"),
    OpCase("Qr", lambda a: tf.qr(a, full_matrices=True), [rand(4, 2)],
           lambda a: _qr_ref(a, True), grad=False, name="Qr[full_matrices deep, no gradient]"),
    # the kernel reads the lower triangle and the gradient lands there: any direction works
    OpCase("SelfAdjointEigV2", _eigh_build, [rand(2, 3, 3)], _eigh_ref, name="SelfAdjointEigV2"),
    OpCase("SelfAdjointEigV2", tf.linalg.eigvalsh, [rand(4, 4)],
           lambda a: np.linalg.eigvalsh(a, UPLO="L"), name="SelfAdjointEigV2[values only]"),
]
