"""The accuracy claim of graphflow's compiled float32 tanh (`graphflow/kernels/cpu/jit_math.py`),
checked over every float32 input: its distance in ulps from float64 tanh rounded to float32
(the correctly rounded result, up to double rounding) and from numpy's float32 tanh, and numpy's
own distance from the correctly rounded result.

    python benchmarks/check_tanh_accuracy.py            # all 2^32 bit patterns (a few minutes)
    python benchmarks/check_tanh_accuracy.py --step 97  # every 97th pattern (a quick look)

Prints, per reference, how many inputs are 0, 1, 2 and more ulps off (NaNs excluded; a NaN input
must give a NaN, counted separately).
"""

import argparse
import collections

import numpy as np

from graphflow.kernels.cpu import jit_math

CHUNK = 1 << 24


def ordered(a):
    """float32 bits as integers ordered like the values, so that a difference counts ulps."""
    i = a.view(np.int32).astype(np.int64)
    return np.where(i < 0, -(i & 0x7FFFFFFF), i)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--step", type=int, default=1, help="check every STEP-th bit pattern")
    args = parser.parse_args()
    exact, numpy_, numpy_exact = collections.Counter(), collections.Counter(), collections.Counter()
    nan_ok = nan_bad = 0
    for start in range(0, 1 << 32, CHUNK * args.step):
        bits = np.arange(start, min(start + CHUNK * args.step, 1 << 32), args.step,
                         dtype=np.uint64).astype(np.uint32)
        x = bits.view(np.float32)
        got = jit_math.tanh32(x)
        nan = np.isnan(x)
        nan_ok += int(np.isnan(got[nan]).sum())
        nan_bad += int((~np.isnan(got[nan])).sum())
        x, got = x[~nan], got[~nan]
        rounded, numpys = np.tanh(x.astype(np.float64)).astype(np.float32), np.tanh(x)
        for counter, have, want in ((exact, got, rounded), (numpy_, got, numpys),
                                    (numpy_exact, numpys, rounded)):
            off = np.abs(ordered(have) - ordered(want))
            counter.update({k: int((off == k).sum()) for k in (0, 1, 2)})
            counter["more"] += int((off > 2).sum())
    total = sum(exact.values())
    print(f"{total} non-NaN inputs checked (every {args.step}th bit pattern); NaN inputs: "
          f"{nan_ok} gave NaN, {nan_bad} did not")
    for name, counter in (("graphflow's against the correctly rounded (float64 tanh)", exact),
                          ("graphflow's against numpy's float32 tanh", numpy_),
                          ("numpy's against the correctly rounded", numpy_exact)):
        print(f"{name}: " + ", ".join(
            f"{k} ulp: {counter[k]} ({100 * counter[k] / total:.3f}%)" for k in (0, 1, 2))
            + f", more: {counter['more']}")


if __name__ == "__main__":
    main()
