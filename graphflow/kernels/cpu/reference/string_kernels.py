"""numpy kernels for the string ops (graphflow/ops/string_ops.py): object arrays of `bytes`."""

import itertools
import re

import numpy as np

from graphflow.kernels.cpu import cpu_kernel
from graphflow.kernels.cpu.reference.string_hashing import (
    fingerprint64,
    fingerprint_cat64,
    legacy_hash64,
    siphash24,
)


def _strings_like(shape, items):
    out = np.empty(shape, dtype=object)
    out.reshape(-1)[:] = items if len(items) else []
    return out


@cpu_kernel("StringJoin")
def _string_join(node):
    separator = node.attrs["separator"].encode("utf-8")

    def join(*inputs):
        arrays = np.broadcast_arrays(*[np.asarray(x, dtype=object) for x in inputs])
        flat = [a.reshape(-1) for a in arrays]
        items = [separator.join(parts) for parts in zip(*flat)]
        return _strings_like(arrays[0].shape, items)
    return join


def _sparse_result(rows):
    """(indices int64 [N, 2], values [N], dense_shape int64 [2]) from each row's tokens."""
    indices = [(r, c) for r, tokens in enumerate(rows) for c in range(len(tokens))]
    values = [tok for tokens in rows for tok in tokens]
    width = max((len(t) for t in rows), default=0)
    return (np.array(indices, dtype=np.int64).reshape(-1, 2), _strings_like((len(values),), values),
            np.array([len(rows), width], dtype=np.int64))


@cpu_kernel("StringSplit")
def _string_split(node):
    delimiter = node.attrs["delimiter"].encode("utf-8")
    skip_empty = node.attrs["skip_empty"]
    pattern = re.compile(b"[" + re.escape(delimiter) + b"]") if delimiter else None

    def tokens(s):
        if not s:
            return []
        parts = [s[i:i + 1] for i in range(len(s))] if pattern is None else pattern.split(s)
        return [p for p in parts if p] if skip_empty else parts

    return lambda source: _sparse_result([tokens(s) for s in source.reshape(-1)])


@cpu_kernel("StringSplitV2")
def _string_split_v2(node):
    sep = node.attrs["sep"]
    sep = None if sep is None else sep.encode("utf-8")
    maxsplit = node.attrs["maxsplit"]
    return lambda source: _sparse_result([s.split(sep, maxsplit) for s in source.reshape(-1)])


def _bucket_kernel(hash_of):
    def make(node):
        buckets = node.attrs["num_buckets"]

        def bucket(x):
            ids = [hash_of(node, s) % buckets for s in x.reshape(-1)]
            return np.array(ids, dtype=np.int64).reshape(x.shape)
        return bucket
    return make


cpu_kernel("StringToHashBucketFast")(_bucket_kernel(lambda node, s: fingerprint64(s)))
cpu_kernel("StringToHashBucketStrong")(_bucket_kernel(
    lambda node, s: siphash24(node.attrs["key"][0], node.attrs["key"][1], s)))
cpu_kernel("StringToHashBucket")(_bucket_kernel(lambda node, s: legacy_hash64(s)))


@cpu_kernel("HashCross")
def _hash_cross(node):
    buckets = node.attrs["num_buckets"]
    key = node.attrs["hash_key"] & 0xFFFFFFFFFFFFFFFF

    def value_hashes(x):  # a string's Fingerprint64, an integer as its unsigned 64 bits
        if x.dtype == object:
            return [[fingerprint64(v) for v in row] for row in x]
        return x.astype(np.int64).view(np.uint64).tolist()

    def cross(*xs):
        rows = zip(*(value_hashes(x) for x in xs))
        out = []
        for parts in rows:
            row = []
            for combo in itertools.product(*parts):
                h = key
                for value in combo:
                    h = fingerprint_cat64(h, value)
                row.append(h % buckets)
            out.append(row)
        width = int(np.prod([x.shape[1] for x in xs]))
        return np.array(out, dtype=np.int64).reshape(xs[0].shape[0], width)
    return cross


@cpu_kernel("StringLength")
def _string_length(node):
    chars = node.attrs["unit"] == "UTF8_CHAR"

    def length(x):
        sizes = [len(s.decode("utf-8")) if chars else len(s) for s in x.reshape(-1)]
        return np.array(sizes, dtype=np.int32).reshape(x.shape)
    return length


@cpu_kernel("AsString")
def _as_string(node):
    a = node.attrs
    kind = np.dtype(node.in_dtypes[0]).kind
    if a["fill"] not in ("", " ", "+", "-", "0", "#"):
        raise ValueError(f"AsString: fill argument not supported: {a['fill']!r}")
    if kind != "f" and (a["precision"] > -1 or a["scientific"] or a["shortest"]):
        raise ValueError("AsString: precision, scientific and shortest apply to floats only")
    spec = "%" + a["fill"] + (str(a["width"]) if a["width"] > -1 else "")
    if kind == "f":
        spec += (f".{a['precision']}" if a["precision"] > -1 else "")
        spec += "g" if a["shortest"] else "e" if a["scientific"] else "f"
    elif kind == "b":
        spec += "s"
    else:
        spec += "d"

    def as_string(x):
        if kind == "b":
            items = [(spec % ("true" if v else "false")).encode() for v in x.reshape(-1).tolist()]
        else:
            items = [(spec % v).encode() for v in x.reshape(-1).tolist()]
        return _strings_like(x.shape, items)
    return as_string


def _parse_float(s):
    text = s.decode("utf-8", "replace").strip()
    if "_" in text:
        raise ValueError(text)
    try:
        return float(text)
    except ValueError:
        return float(int(text, 16)) if text.lower().lstrip("+-").startswith("0x") else float(text)


@cpu_kernel("StringToNumber")
def _string_to_number(node):
    out = np.dtype(node.out_dtypes[0])
    info = np.iinfo(out) if out.kind == "i" else None

    def parse(s):
        try:
            if info is None:
                return _parse_float(s)
            text = s.decode("utf-8", "replace").strip()
            value = int(text) if "_" not in text else None
            if value is None or not info.min <= value <= info.max:
                raise ValueError(text)
            return value
        except ValueError:
            raise ValueError(f"StringToNumberOp could not correctly convert string: "
                             f"{s.decode('utf-8', 'replace')}") from None

    return lambda x: np.array([parse(s) for s in x.reshape(-1)], dtype=out).reshape(x.shape)


def _case_kernel(method):
    def build(node):
        utf8 = node.attrs["encoding"] == "utf-8"
        table = bytes.maketrans(b"ABCDEFGHIJKLMNOPQRSTUVWXYZ", b"abcdefghijklmnopqrstuvwxyz")
        if method == "upper":
            table = bytes.maketrans(b"abcdefghijklmnopqrstuvwxyz", b"ABCDEFGHIJKLMNOPQRSTUVWXYZ")

        def change(s):  # '' changes the ASCII letters only, whatever the other bytes are
            if utf8:
                return getattr(s.decode("utf-8"), method)().encode("utf-8")
            return s.translate(table)

        return lambda x: _strings_like(x.shape, [change(s) for s in x.reshape(-1)])
    return build


cpu_kernel("StringLower")(_case_kernel("lower"))
cpu_kernel("StringUpper")(_case_kernel("upper"))


def _full_match(pattern, x):
    try:
        compiled = re.compile(pattern)
    except re.error as exc:
        raise ValueError(f"invalid pattern {pattern!r}: {exc}") from None
    out = np.array([compiled.fullmatch(s.decode("utf-8", "surrogateescape")) is not None
                    for s in x.reshape(-1)], dtype=bool)
    return out.reshape(x.shape)


@cpu_kernel("StaticRegexFullMatch")
def _static_regex_full_match(node):
    pattern = node.attrs["pattern"]
    return lambda x: _full_match(pattern, x)


@cpu_kernel("RegexFullMatch")
def _regex_full_match(node):
    def regex_full_match(x, pattern):
        p = pattern.item() if isinstance(pattern, np.ndarray) else pattern
        return _full_match(p.decode("utf-8") if isinstance(p, bytes) else p, x)
    return regex_full_match
