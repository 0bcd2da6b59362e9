"""How the polynomials of graphflow's compiled float32 tanh and sigmoid (`graphflow/kernels/cpu/
jit_math.py`, `_EXP_Q` and `_SMALL`) were fitted: minimax fits by Lawson's iteratively reweighted
least squares in float64, the coefficients then rounded to float32. Prints each fit's coefficients
and its model error (with the float32 coefficients, before any float32 evaluation error).

    python benchmarks/fit_jit_math_polynomials.py

  e^r = 1 + r + r^2 Q(r) on |r| <= ln(2)/2 (the range left by e^y = 2^k e^r), Q of degree 4,
      the error relative to e^r;
  tanh(x) = x + x^3 P(x^2) on 0 < x <= 0.625 (the small-|x| branch), P of degree 4, the error in
      ulps of tanh(x) in float32.

`benchmarks/check_jit_math_accuracy.py` then checks the functions over every float32 input.
"""

import math

import numpy as np


def lawson(basis, target, weight, iterations=300):
    """Coefficients c minimizing max |weight * (basis @ c - target)| (approximately)."""
    lw = np.ones_like(target)
    for _ in range(iterations):
        w = weight * np.sqrt(lw)
        c = np.linalg.lstsq(basis * w[:, None], target * w, rcond=None)[0]
        err = np.abs((basis @ c - target) * weight)
        lw = lw * err
        lw /= lw.sum()
    return np.array([np.float32(v) for v in c], np.float64)


def fit_exp(degree=4, nodes=20001):
    h = math.log(2.0) / 2 * 1.0001
    r = h * np.cos(np.linspace(0, np.pi, nodes))
    r = r[np.abs(r) > 1e-6]
    target = (np.expm1(r) - r) / r ** 2
    weight = r ** 2 / np.exp(r)  # relative error of e^r
    basis = np.vander(r, degree + 1, increasing=True)
    c = lawson(basis, target, weight)
    return c, np.max(np.abs(basis @ c - target) * weight)


def fit_tanh_small(degree=4, points=200001):
    a = np.linspace(1e-4, 0.625, points)
    z = a * a
    target = (np.tanh(a) - a) / a ** 3
    ulp = np.spacing(np.tanh(a).astype(np.float32)).astype(np.float64)
    weight = a ** 3 / ulp  # error in ulps of tanh(a)
    basis = np.vander(z, degree + 1, increasing=True)
    c = lawson(basis, target, weight)
    return c, np.max(np.abs(basis @ c - target) * weight)


def main():
    for name, (c, err) in (("_EXP_Q (relative error)", fit_exp()),
                           ("_SMALL (ulps of tanh)", fit_tanh_small())):
        print(f"{name}: {tuple(float(v) for v in c)}  model error {err:.3g}")


if __name__ == "__main__":
    main()
