"""numpy kernels for the random ops. Each op draws from its own per-session numpy Generator
(`SessionState.rng`), seeded from the op's (seed, seed2) attrs, or from fresh entropy when both are 0."""

import numpy as np

from graphflow.kernels.cpu import cpu_kernel

_TRUNCATE_AT = 2.0


def generator(node):
    seed, seed2 = node.attrs.get("seed", 0), node.attrs.get("seed2", 0)
    entropy = None if seed == 0 and seed2 == 0 else [int(seed), int(seed2)]
    return node.state.rng(("random", node.name, seed, seed2), entropy)


def _shape(shape_value):
    shape = np.asarray(shape_value)
    if shape.ndim != 1:
        raise ValueError(f"shape must be a 1-D integer tensor, got a value of shape {shape.shape}")
    dims = tuple(int(d) for d in shape)
    if any(d < 0 for d in dims):
        raise ValueError(f"shape {list(dims)} has a negative dimension")
    return dims


def _draw_dtype(out_dtype):
    """numpy Generators draw float32/float64 directly; float16 is drawn as float32 and cast."""
    return np.float64 if np.dtype(out_dtype) == np.float64 else np.float32


@cpu_kernel("RandomStandardNormal")
def _random_standard_normal(node):
    gen = generator(node)
    out_dtype = node.out_dtypes[0]
    draw = _draw_dtype(out_dtype)

    def random_standard_normal(shape):
        return gen.standard_normal(_shape(shape), dtype=draw).astype(out_dtype, copy=False)
    return random_standard_normal


@cpu_kernel("RandomUniform")
def _random_uniform(node):
    gen = generator(node)
    out_dtype = node.out_dtypes[0]
    draw = _draw_dtype(out_dtype)

    def random_uniform(shape):
        out = gen.random(_shape(shape), dtype=draw).astype(out_dtype, copy=False)
        if out.dtype == np.float16:  # rounding to half precision may reach 1.0
            np.minimum(out, np.nextafter(np.float16(1), np.float16(0)), out=out)
        return out
    return random_uniform


@cpu_kernel("TruncatedNormal")
def _truncated_normal(node):
    gen = generator(node)
    out_dtype = node.out_dtypes[0]
    draw = _draw_dtype(out_dtype)

    def truncated_normal(shape):
        out = gen.standard_normal(_shape(shape), dtype=draw)
        bad = np.flatnonzero(np.abs(out) > _TRUNCATE_AT)
        flat = out.reshape(-1)
        while bad.size:  # ~4.6% of draws per round: resample just those
            redraw = gen.standard_normal(bad.size, dtype=draw)
            flat[bad] = redraw
            bad = bad[np.abs(redraw) > _TRUNCATE_AT]
        return out.astype(out_dtype, copy=False)
    return truncated_normal


@cpu_kernel("RandomUniformInt")
def _random_uniform_int(node):
    gen = generator(node)
    out_dtype = node.out_dtypes[0]

    def random_uniform_int(shape, minval, maxval):
        lo, hi = int(minval), int(maxval)
        if lo >= hi:
            raise ValueError(f"Need minval < maxval, got {lo} >= {hi}")
        return gen.integers(lo, hi, size=_shape(shape), dtype=out_dtype)
    return random_uniform_int


@cpu_kernel("RandomShuffle")
def _random_shuffle(node):
    gen = generator(node)

    def random_shuffle(value):
        if value.ndim == 0 or len(value) <= 1:
            return value.copy()
        return value[gen.permutation(len(value))]
    return random_shuffle


@cpu_kernel("Multinomial")
def _multinomial(node):
    gen = generator(node)
    out_dtype = node.out_dtypes[0]

    def multinomial(logits, num_samples):
        n = int(num_samples)
        if n < 0:
            raise ValueError(f"num_samples should be nonnegative, got {n}")
        batch, classes = logits.shape
        if classes == 0 and n > 0:
            raise ValueError("num_classes should be positive, got 0")
        out = np.empty((batch, n), out_dtype)
        if n == 0 or batch == 0:
            return out
        x = logits.astype(np.float64)
        with np.errstate(invalid="ignore"):  # rows of -inf: every class at probability 0
            p = np.exp(x - x.max(axis=1, keepdims=True))
        cdf = np.cumsum(np.nan_to_num(p), axis=1)
        u = gen.random((batch, n)) * cdf[:, -1:]
        for row in range(batch):  # the first class whose cumulative weight exceeds u
            out[row] = np.minimum(np.searchsorted(cdf[row], u[row], side="right"), classes - 1)
        return out
    return multinomial
