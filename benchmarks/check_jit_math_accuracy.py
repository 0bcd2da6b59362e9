"""The accuracy claims of graphflow's compiled float32 tanh and sigmoid
(`graphflow/kernels/cpu/numba/jit_math.py`), checked over every float32 input: their distance in ulps from
the float64 function rounded to float32 (the correctly rounded result, up to double rounding) and
from the numpy function graphflow uses without the compiled one (numpy's float32 tanh;
`elementwise_spec._sigmoid`), and that numpy function's own distance from the correctly rounded
result.

    python benchmarks/check_jit_math_accuracy.py tanh            # all 2^32 bit patterns (minutes)
    python benchmarks/check_jit_math_accuracy.py sigmoid --step 97  # every 97th pattern (a quick look)

Prints, per reference, how many inputs are 0, 1, 2 and more ulps off (NaNs excluded; a NaN input
must give a NaN, counted separately).
"""

import argparse
import collections

import numpy as np

from graphflow.kernels.cpu.numba import jit_math
from graphflow.ops.elementwise_spec import _sigmoid

CHUNK = 1 << 24


def _sigmoid64(x):
    m = np.exp(-np.abs(x))
    return np.where(x >= 0, 1.0, m) / (1.0 + m)


# function -> (op type of the compiled function, float64 function, numpy float32 function)
FUNCTIONS = {"tanh": ("Tanh", np.tanh, np.tanh), "sigmoid": ("Sigmoid", _sigmoid64, _sigmoid)}


def ordered(a):
    """float32 bits as integers ordered like the values, so that a difference counts ulps."""
    i = a.view(np.int32).astype(np.int64)
    return np.where(i < 0, -(i & 0x7FFFFFFF), i)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("function", choices=sorted(FUNCTIONS))
    parser.add_argument("--step", type=int, default=1, help="check every STEP-th bit pattern")
    args = parser.parse_args()
    op, exact_fn, numpy_fn = FUNCTIONS[args.function]
    exact, numpy_, numpy_exact = collections.Counter(), collections.Counter(), collections.Counter()
    nan_ok = nan_bad = 0
    for start in range(0, 1 << 32, CHUNK * args.step):
        bits = np.arange(start, min(start + CHUNK * args.step, 1 << 32), args.step,
                         dtype=np.uint64).astype(np.uint32)
        x = bits.view(np.float32)
        got = jit_math.array_call(op, x)
        nan = np.isnan(x)
        nan_ok += int(np.isnan(got[nan]).sum())
        nan_bad += int((~np.isnan(got[nan])).sum())
        x, got = x[~nan], got[~nan]
        rounded, numpys = exact_fn(x.astype(np.float64)).astype(np.float32), numpy_fn(x)
        for counter, have, want in ((exact, got, rounded), (numpy_, got, numpys),
                                    (numpy_exact, numpys, rounded)):
            off = np.abs(ordered(have) - ordered(want))
            counter.update({k: int((off == k).sum()) for k in (0, 1, 2)})
            counter["more"] += int((off > 2).sum())
            counter["max"] = max(counter["max"], int(off.max(initial=0)))
    total = sum(exact[k] for k in (0, 1, 2, "more"))
    print(f"{args.function}: {total} non-NaN inputs checked (every {args.step}th bit pattern); "
          f"NaN inputs: {nan_ok} gave NaN, {nan_bad} did not")
    for name, counter in ((f"graphflow's against the correctly rounded (float64 {args.function})",
                           exact),
                          ("graphflow's against the numpy one", numpy_),
                          ("the numpy one against the correctly rounded", numpy_exact)):
        print(f"{name}: " + ", ".join(
            f"{k} ulp: {counter[k]} ({100 * counter[k] / total:.3f}%)" for k in (0, 1, 2))
            + f", more: {counter['more']} (at most {counter['max']})")


if __name__ == "__main__":
    main()
