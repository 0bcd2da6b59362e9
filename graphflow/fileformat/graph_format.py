"""The graph file's JSON vocabulary: typed attr values, tensors, shapes, and the document's text form.

A saved graph is a JSON document (`graph.json`) next to an `.npz` of tensor data. Attr values are
written generically — the format knows no op types:

    null, true/false, 3, "SAME", 0.25     None, bool, int, str and finite float keep JSON's own types
                                          (a float is always written with '.' or an exponent)
    {"float": "nan"|"inf"|"-inf"}         non-finite Python floats
    {"list": [...]}, {"tuple": [...]}     sequences (the two stay distinct: kernels may care)
    {"dict": {"key": ...}}                string-keyed mappings
    {"dtype": "float32"}                  a graphflow DType object
    {"shape": [null, 3]} / {"shape": null}   a TensorShape object (null: unknown rank)
    {"tensor": {"dtype", "shape", "data": KEY}}   a numpy array stored in the .npz under KEY
    {"tensor": {"dtype", "shape", "values": [...]}}  a small array (<= 16 elements, no NaN) inline
    {"scalar": {...same as tensor, shape []}}       a numpy scalar (np.float32(0.5))

A `tf.string` tensor (an object array of bytes; never pickled) is written explicitly: inline, each
element is a JSON string when its bytes are UTF-8, else {"base64": "..."}; in the .npz, KEY.bytes
holds all elements' bytes concatenated (uint8) and KEY.lengths their byte lengths (int64).

Inline values are exact: integers and booleans as JSON numbers/booleans, floats in their shortest
decimal form when that reads back bit-identical (the float64 repr otherwise), and +-inf as strings.
Decoding checks every tag, type, dtype, shape and range and raises `GraphFormatError`.
"""

import base64
import binascii
import json
import math

import numpy as np

from graphflow.framework import dtypes
from graphflow.framework.errors import GraphFormatError
from graphflow.framework.tensor_shape import TensorShape

FORMAT = "graphflow-graph"
VERSION = 1
INLINE_MAX_ELEMENTS = 16

_NON_FINITE = {"nan": math.nan, "inf": math.inf, "-inf": -math.inf}
_INT_RANGES = {d.name: (int(np.iinfo(d.as_numpy_dtype).min), int(np.iinfo(d.as_numpy_dtype).max))
               for d in dtypes.ALL_DTYPES if d.is_integer}


# ------------------------------------------------------------------------------------ encoding
def encode_value(value, key, arrays, depth=0):
    """JSON form of one attr value; arrays too big to inline are added to `arrays` under `key`."""
    kind = type(value)
    if value is None or kind is bool or kind is int or kind is str:
        return value
    if kind is float:
        return value if math.isfinite(value) else {"float": repr(value)}
    if depth > 32:
        raise TypeError("attr value is nested more than 32 levels deep")
    if isinstance(value, np.ndarray):
        return {"tensor": encode_tensor(value, key, arrays)}
    if isinstance(value, np.generic):
        return {"scalar": encode_tensor(np.asarray(value), key, arrays)}
    if isinstance(value, dtypes.DType):
        return {"dtype": value.name}
    if isinstance(value, TensorShape):
        return {"shape": None if value.dims is None else list(value.dims)}
    if isinstance(value, (list, tuple)):
        items = [encode_value(v, f"{key}/{i}", arrays, depth + 1) for i, v in enumerate(value)]
        return {"list" if isinstance(value, list) else "tuple": items}
    if isinstance(value, dict) and all(type(k) is str for k in value):
        return {"dict": {k: encode_value(v, f"{key}/{k}", arrays, depth + 1)
                         for k, v in value.items()}}
    raise TypeError(f"attr values of type {kind.__name__} cannot be saved (attrs hold None, bool, "
                    "int, float, str, lists/tuples/dicts of those, DTypes, TensorShapes and numpy "
                    "arrays)")


def encode_tensor(array, key, arrays):
    """{"dtype", "shape", "values"|"data"} for a numpy array of a graphflow dtype."""
    dt = dtypes.as_dtype(array.dtype)  # TypeError for anything else
    spec = {"dtype": dt.name, "shape": list(array.shape)}
    if dt == dtypes.string:
        return _encode_strings(array, key, arrays, spec)
    values = _inline_values(array) if array.size <= INLINE_MAX_ELEMENTS else None
    if values is None:
        arrays[key] = np.ascontiguousarray(array)
        spec["data"] = key
    else:
        spec["values"] = values
    return spec


def _encode_strings(array, key, arrays, spec):
    items = dtypes.string_array(array).reshape(-1).tolist()
    if len(items) <= INLINE_MAX_ELEMENTS:
        spec["values"] = [_string_json(b) for b in items]
    else:
        arrays[key + ".bytes"] = np.frombuffer(b"".join(items), dtype=np.uint8)
        arrays[key + ".lengths"] = np.array([len(b) for b in items], dtype=np.int64)
        spec["data"] = key
    return spec


def _string_json(item):
    try:
        return item.decode("utf-8")
    except UnicodeDecodeError:
        return {"base64": base64.b64encode(item).decode("ascii")}


def _inline_values(array):
    flat = array.reshape(-1)
    if array.dtype.kind == "c":
        return None  # complex values live in the .npz
    if array.dtype.kind != "f":
        return flat.tolist()
    if np.isnan(flat).any():
        return None  # NaN payloads survive only in the binary .npz
    if array.dtype == np.float64:  # Python's float repr is already the shortest exact form
        return [v if math.isfinite(v) else repr(v) for v in flat.tolist()]
    short = [float(str(x)) for x in flat]
    if np.array(short, dtype=array.dtype).tobytes() != flat.tobytes():
        short = flat.tolist()  # float64 values of the exact elements: always read back exactly
    return [v if math.isfinite(v) else repr(v) for v in short]


def shape_json(shape):
    """TensorShape -> JSON: list of ints/null, or null for unknown rank."""
    return None if shape.dims is None else list(shape.dims)


def dumps_document(doc, one_per_line=("variables", "ops")):
    """The document as JSON text: header fields first, then one op (or variable) per line, so a
    saved graph reads well in an editor and diffs line by line."""
    dump = json.JSONEncoder(separators=(", ", ": "), allow_nan=False, ensure_ascii=False).encode

    parts = []
    for key, value in doc.items():
        if key in one_per_line and value:
            rows = ",\n".join("  " + dump(v) for v in value)
            parts.append(f" {dump(key)}: [\n{rows}\n ]")
        else:
            parts.append(f" {dump(key)}: {dump(value)}")
    return "{\n" + ",\n".join(parts) + "\n}\n"


# ------------------------------------------------------------------------------------ decoding
def fail(message):
    raise GraphFormatError(message)


def _no_duplicate_keys(pairs):
    out = dict(pairs)
    if len(out) != len(pairs):
        seen = set()
        for k, _ in pairs:
            if k in seen:
                fail(f"JSON object has the key {k!r} twice")
            seen.add(k)
    return out


def _reject_constant(name):
    fail(f"JSON contains the non-standard constant {name}")


def parse_document(raw, what):
    """Parse the JSON bytes of a graph document (strict: UTF-8, no duplicate keys, no NaN)."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        fail(f"{what} is not UTF-8 text: {exc}")
    try:
        doc = json.loads(text, object_pairs_hook=_no_duplicate_keys, parse_constant=_reject_constant)
    except GraphFormatError as exc:
        fail(f"{what}: {exc}")
    except (ValueError, RecursionError) as exc:
        fail(f"{what} is not valid JSON: {type(exc).__name__}: {exc}")
    if type(doc) is not dict:
        fail(f"{what} must hold a JSON object, found {type(doc).__name__}")
    fmt = doc.get("format")
    if fmt != FORMAT:
        fail(f"{what} is not a graphflow graph (format {fmt!r}, expected {FORMAT!r})")
    version = doc.get("version")
    if type(version) is not int or version < 1:
        fail(f"{what} has an invalid format version {version!r}")
    if version > VERSION:
        fail(f"{what} was written in graph format version {version} by a newer graphflow; this "
             f"graphflow reads versions up to {VERSION}. Upgrade graphflow to load it.")
    return doc


def expect(value, kinds, where):
    """`value` if its exact type is one of `kinds` (bool is not accepted as int), else fail."""
    if type(value) not in kinds:
        names = " or ".join(k.__name__ if k is not type(None) else "null" for k in kinds)
        fail(f"{where}: expected {names}, found {type(value).__name__} {_short(value)}")
    return value


def _short(value):
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def decode_shape(value, where, limits):
    """JSON shape (list of ints/null, or null) -> TensorShape, with rank and size bounds."""
    if value is None:
        return TensorShape(None)
    expect(value, (list,), where)
    if len(value) > limits.max_rank:
        fail(f"{where}: rank {len(value)} exceeds the limit of {limits.max_rank}")
    for d in value:
        if d is not None and (type(d) is not int or d < 0 or d > limits.max_dim):
            fail(f"{where}: invalid dimension {_short(d)} in shape {_short(value)}")
    return TensorShape(value)


def decode_dtype(value, where):
    expect(value, (str,), where)
    try:
        return dtypes.as_dtype(value)
    except (TypeError, ValueError):
        fail(f"{where}: unknown dtype {_short(value)}")


def decode_value(value, where, tensors, limits, depth=0):
    """Inverse of `encode_value`, validating as it goes. `tensors` is the file's {key: array}."""
    kind = type(value)
    if value is None or kind is bool or kind is int or kind is str or kind is float:
        return value
    if kind is not dict or len(value) != 1:
        fail(f"{where}: expected a plain value or a one-key tagged object, found {_short(value)}")
    if depth >= limits.max_nesting:
        fail(f"{where}: attr value nested deeper than {limits.max_nesting} levels")
    ((tag, body),) = value.items()
    if tag == "float":
        if body not in _NON_FINITE:
            fail(f"{where}: {{'float': ...}} holds {_short(body)}, expected 'nan', 'inf' or '-inf'")
        return _NON_FINITE[body]
    if tag in ("list", "tuple"):
        expect(body, (list,), where)
        items = [decode_value(v, f"{where}[{i}]", tensors, limits, depth + 1)
                 for i, v in enumerate(body)]
        return items if tag == "list" else tuple(items)
    if tag == "dict":
        expect(body, (dict,), where)
        return {k: decode_value(v, f"{where}.{k}", tensors, limits, depth + 1)
                for k, v in body.items()}
    if tag == "dtype":
        return decode_dtype(body, where)
    if tag == "shape":
        return decode_shape(body, where, limits)
    if tag == "tensor":
        return decode_tensor(body, where, tensors, limits)
    if tag == "scalar":
        array = decode_tensor(body, where, tensors, limits)
        if array.shape != ():
            fail(f"{where}: a scalar must have shape [], found {list(array.shape)}")
        return array[()]
    fail(f"{where}: unknown value tag {_short(tag)}")


def decode_tensor(spec, where, tensors, limits):
    """A read-only numpy array from a tensor spec (inline values or a reference into the .npz)."""
    expect(spec, (dict,), where)
    keys = set(spec)
    if keys not in ({"dtype", "shape", "values"}, {"dtype", "shape", "data"}):
        fail(f"{where}: a tensor needs 'dtype', 'shape' and one of 'values'/'data', found "
             f"{sorted(keys)}")
    dt = decode_dtype(spec["dtype"], f"{where}.dtype")
    shape = decode_shape(spec["shape"], f"{where}.shape", limits)
    if shape.dims is None or not shape.is_fully_defined():
        fail(f"{where}: a tensor's shape must be fully known, found {spec['shape']}")
    if dt == dtypes.string:
        return _decode_strings(spec, where, tensors, shape.dims)
    if "data" in spec:
        key = expect(spec["data"], (str,), f"{where}.data")
        array = tensors.get(key)
        if array is None:
            fail(f"{where}: tensor data '{key}' is missing from the file's tensors.npz")
        if array.dtype != dt.as_numpy_dtype or array.shape != shape.dims:
            fail(f"{where}: tensor data '{key}' is {array.dtype}{list(array.shape)} but the graph "
                 f"declares {dt.name}{list(shape.dims)}")
        return array
    values = expect(spec["values"], (list,), f"{where}.values")
    count = shape.num_elements()
    if count > INLINE_MAX_ELEMENTS or len(values) != count:
        fail(f"{where}: {len(values)} inline values for shape {list(shape.dims)} (inline tensors "
             f"hold at most {INLINE_MAX_ELEMENTS} elements, exactly one per element)")
    check = _value_checker(dt)
    for v in values:
        check(v, where)
    try:
        array = np.array([_NON_FINITE.get(v, v) if type(v) is str else v for v in values],
                         dtype=dt.as_numpy_dtype).reshape(shape.dims)
    except (ValueError, OverflowError, TypeError) as exc:
        fail(f"{where}: inline values do not fit dtype {dt.name}: {exc}")
    array.flags.writeable = False
    return array


def _decode_strings(spec, where, tensors, dims):
    count = int(np.prod(dims, dtype=np.int64))
    if "data" in spec:
        key = expect(spec["data"], (str,), f"{where}.data")
        data, lengths = tensors.get(key + ".bytes"), tensors.get(key + ".lengths")
        if data is None or lengths is None:
            fail(f"{where}: string data '{key}.bytes'/'{key}.lengths' is missing from the file's "
                 "tensors.npz")
        if data.dtype != np.uint8 or data.ndim != 1 or lengths.dtype != np.int64 \
                or lengths.shape != (count,) or (lengths < 0).any() or lengths.sum() != data.size:
            fail(f"{where}: string data '{key}' is inconsistent: {data.size} bytes of "
                 f"{data.dtype}, lengths {lengths.dtype}{list(lengths.shape)} for {count} strings")
        raw = data.tobytes()
        ends = np.cumsum(lengths).tolist()
        starts = [0] + ends[:-1]
        items = [raw[a:b] for a, b in zip(starts, ends)]
    else:
        values = expect(spec["values"], (list,), f"{where}.values")
        if count > INLINE_MAX_ELEMENTS or len(values) != count:
            fail(f"{where}: {len(values)} inline strings for shape {list(dims)}")
        items = [_string_from_json(v, where) for v in values]
    array = np.empty(dims, dtype=object)
    array.reshape(-1)[:] = items if count else []
    array.flags.writeable = False
    return array


def _string_from_json(value, where):
    if type(value) is str:
        return value.encode("utf-8")
    if type(value) is dict and set(value) == {"base64"} and type(value["base64"]) is str:
        try:
            return base64.b64decode(value["base64"], validate=True)
        except (binascii.Error, ValueError):
            pass
    fail(f"{where}: a string tensor holds {_short(value)} (expected a string or {{'base64': ...}})")


def _value_checker(dt):
    if dt.is_bool:
        def check(v, where):
            if type(v) is not bool:
                fail(f"{where}: bool tensor holds {_short(v)}")
    elif dt.is_integer:
        lo, hi = _INT_RANGES[dt.name]

        def check(v, where):
            if type(v) is not int or not lo <= v <= hi:
                fail(f"{where}: {dt.name} tensor holds {_short(v)}")
    else:
        def check(v, where):
            if type(v) is str:
                if v not in ("inf", "-inf"):
                    fail(f"{where}: {dt.name} tensor holds the string {_short(v)}")
            elif type(v) not in (int, float) or (type(v) is float and not math.isfinite(v)):
                fail(f"{where}: {dt.name} tensor holds {_short(v)}")
    return check
