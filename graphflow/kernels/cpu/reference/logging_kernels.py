"""numpy kernels for tf.Print, tf.print, tf.Assert, tf.check_numerics and tf.py_func, and the text
forms of tensor values they print (TF's Tensor::SummarizeValue)."""

import sys

import numpy as np

from graphflow.framework.errors import CheckFailedError
from graphflow.kernels.cpu import cpu_kernel
from graphflow.ops.script_ops import FUNCTIONS


def _element(value):
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    if isinstance(value, (float, np.floating)):
        for digits in ((6, 9) if np.asarray(value).dtype.itemsize <= 4 else (15, 17)):
            text = f"{float(value):.{digits}g}"
            if type(value)(float(text)) == value or value != value:
                return text
        return text
    if isinstance(value, (bool, np.bool_)):
        return "1" if value else "0"
    return str(value)


def summarize(value, limit):
    """TF1's `SummarizeValue`: the first `limit` values in nested brackets, '...' when cut
    (`tf.Print`, `tf.Assert`). A negative limit prints everything."""
    array = np.asarray(value)
    flat = array.ravel()
    limit = flat.size if limit < 0 else min(limit, flat.size)
    if array.ndim == 0:
        return _element(flat[0]) if flat.size else ""
    if flat.size == 0:
        return ""
    out, index = [], [0]

    def one_dim(dim):
        if index[0] >= limit:
            return
        count = array.shape[dim]
        if dim == array.ndim - 1:
            for i in range(count):
                if index[0] >= limit:
                    if dim != 0:
                        out.append("...")
                    return
                if i > 0:
                    out.append(" ")
                out.append(_element(flat[index[0]]))
                index[0] += 1
            return
        for _ in range(count):
            opened = index[0] < limit
            if opened:
                out.append("[")
            one_dim(dim + 1)
            if index[0] < limit or opened:
                out.append("]")
    one_dim(0)
    if limit < flat.size:
        out.append("...")
    return "".join(out)


def format_v2(value, limit):
    """`tf.print`'s form of a tensor: numpy-style nested brackets showing the first and last
    `limit` entries of each dimension ('[0 1 2 ... 7 8 9]'); strings as they are."""
    array = np.asarray(value)
    if array.dtype == object:
        if array.ndim == 0:
            return _element(array[()])
        array = np.vectorize(_element, otypes=[object])(array)
    threshold = sys.maxsize if limit < 0 else max(1, 2 * limit)
    edge = 3 if limit < 0 else max(limit, 1)
    return np.array2string(array, separator=" ", threshold=threshold, edgeitems=edge,
                           formatter={"object": str, "bool": lambda b: str(bool(b)),
                                      "float_kind": _element})


def _fill(template, texts):
    pieces = template.split("{}")
    out = [pieces[0]]
    for text, piece in zip(texts, pieces[1:]):
        out.append(text)
        out.append(piece)
    return "".join(out)


@cpu_kernel("Print")
def _print(node):
    message, first_n, limit = (node.attrs[k] for k in ("message", "first_n", "summarize"))
    counters, key = node.state.counters, ("Print", node.name)

    def run(x, *data):
        count = counters.get(key, 0)
        if first_n < 0 or count < first_n:
            counters[key] = count + 1
            sys.stderr.write(message + "".join(f"[{summarize(d, limit)}]" for d in data) + "\n")
        return x
    return run


@cpu_kernel("PrintV2")
def _print_v2(node):
    template, stream, limit, end = (node.attrs[k] for k in ("template", "output_stream",
                                                            "summarize", "end"))

    def run(*tensors):
        text = _fill(template, [format_v2(t, limit) for t in tensors]) + end
        if stream.startswith("file://"):
            with open(stream[len("file://"):], "a", encoding="utf-8") as out:
                out.write(text)
        else:
            target = sys.stderr if stream == "stderr" else sys.stdout
            target.write(text)
    return run


@cpu_kernel("Assert")
def _assert(node):
    template, limit = node.attrs["template"], node.attrs["summarize"]

    def run(condition, *data):
        if not bool(np.asarray(condition).reshape(())):
            raise CheckFailedError("assertion failed: "
                                   + _fill(template, [summarize(d, limit) for d in data]))
    return run


@cpu_kernel("CheckNumerics")
def _check_numerics(node):
    message = node.attrs["message"]

    def run(x):
        if not np.all(np.isfinite(x)):
            kinds = [what for what, bad in (("NaN", np.isnan(x).any()), ("Inf", np.isinf(x).any()))
                     if bad]
            raise CheckFailedError(f"{message} : Tensor had {' and '.join(kinds)} values")
        return x
    return run


@cpu_kernel("PyFunc")
def _py_func(node):
    token, out_dtypes = node.attrs["token"], node.out_dtypes

    def run(*args):
        func = FUNCTIONS.get(token)
        if func is None:
            raise CheckFailedError(
                f"could not find callback with key={token} in the registry: no Python function "
                "of this process is registered under that token (a py_func's function stays in "
                "the process that built it, and lives as long as its graph)")
        result = func(*args)
        if len(out_dtypes) == 1 and not isinstance(result, (list, tuple)):
            result = [result]
        result = list(result) if isinstance(result, (list, tuple)) else [result]
        if len(result) != len(out_dtypes):
            raise CheckFailedError(f"py_func's function returned {len(result)} values, Tout "
                                   f"declares {len(out_dtypes)}")
        outs = []
        for i, (value, dtype) in enumerate(zip(result, out_dtypes)):
            array = np.asarray(value)
            if array.dtype != dtype:
                if not np.can_cast(array.dtype, dtype, casting="same_kind"):
                    raise CheckFailedError(f"py_func's function returned {array.dtype} for output "
                                           f"{i}, Tout declares {np.dtype(dtype).name}")
                array = array.astype(dtype)
            outs.append(array)
        if not outs:
            return None
        return outs[0] if len(outs) == 1 else tuple(outs)
    return run
