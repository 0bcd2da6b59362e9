"""String ops on `tf.string` tensors (object arrays of bytes): join, split, length, conversion to
and from numbers, case change, regular-expression matches. TF1 names: `tf.strings.join` /
`tf.string_join`, `tf.string_split` (a SparseTensor), `tf.strings.split` (Python's `str.split`
rules), `tf.strings.length`, `tf.as_string`, `tf.strings.to_number` / `tf.string_to_number`,
`tf.strings.lower` / `upper`, `tf.strings.regex_full_match`, `tf.string_to_hash_bucket_fast` /
`tf.strings.to_hash_bucket_fast` (FarmHash's Fingerprint64 modulo the bucket count, as TensorFlow),
`tf.string_to_hash_bucket_strong` (keyed SipHash-2-4) and the legacy `tf.string_to_hash_bucket`
(TensorFlow's Hash64): each string lands in the bucket TensorFlow gives it
(graphflow/kernels/cpu/reference/string_hashing.py); `HashCross`, the feature crosses of
`tf.feature_column.crossed_column` in TensorFlow's buckets (FingerprintCat64). None has a
gradient (strings are not differentiable).
"""

from graphflow.framework import dtypes
from graphflow.framework.tensor_shape import TensorShape
from graphflow.ops import no_onnx
from graphflow.ops.core_ops import convert_to_tensor
from graphflow.ops.registry import define, make_op, make_tensor, no_gradient, require_dtype
from graphflow.ops.sparse_tensor import SparseTensor

STRING = (dtypes.string,)
_AS_STRING_INPUTS = (dtypes.float16, dtypes.float32, dtypes.float64, dtypes.int8, dtypes.int16,
                     dtypes.int32, dtypes.int64, dtypes.uint8, dtypes.uint16, dtypes.uint32,
                     dtypes.uint64, dtypes.bool_)
_TO_NUMBER_OUTPUTS = (dtypes.float32, dtypes.float64, dtypes.int32, dtypes.int64)


def _strings(values, what):
    tensors = [convert_to_tensor(v, dtype=dtypes.string) if not hasattr(v, "dtype") else
               convert_to_tensor(v) for v in values]
    for t in tensors:
        require_dtype(t, STRING, what)
    return tensors


# ---------------------------------------------------------------- join
def _join_infer(inputs, attrs):
    shape = TensorShape([])
    for t in inputs:
        require_dtype(t, STRING, "tf.strings.join inputs")
        if t.shape.ndims == 0:
            continue
        if shape.ndims == 0:
            shape = t.shape
        elif not shape.is_compatible_with(t.shape):
            raise ValueError(f"tf.strings.join inputs must be scalars or of one shape, got "
                             f"{shape} and {t.shape}")
        else:
            shape = shape.merge_with(t.shape)
    return [(dtypes.string, shape)]


define("StringJoin", _join_infer, attrs="separator:string", onnx=no_onnx.STRING)


def string_join(inputs, separator="", name=None):
    """Elementwise concatenation of string tensors (scalars broadcast), with `separator` between."""
    if not isinstance(inputs, (list, tuple)) or not inputs:
        raise TypeError("tf.strings.join expects a non-empty list of string tensors")
    tensors = _strings(inputs, "tf.strings.join inputs")
    return make_tensor("StringJoin", tensors, {"separator": _text(separator, "separator")},
                       name=name or "StringJoin")


def _text(value, what):
    if isinstance(value, bytes):
        return value.decode("utf-8")
    if not isinstance(value, str):
        raise TypeError(f"{what} must be a Python str (graphflow takes it as a constant), got "
                        f"{value!r}")
    return value


# ---------------------------------------------------------------- split
def _split_infer(inputs, attrs):
    (source,) = inputs
    require_dtype(source, STRING, "the source of a string split")
    if source.shape.ndims not in (None, 1):
        raise ValueError(f"the source of a string split must be a vector, got shape {source.shape}")
    return [(dtypes.int64, TensorShape([None, 2])), (dtypes.string, TensorShape([None])),
            (dtypes.int64, TensorShape([2]))]


define("StringSplit", _split_infer, attrs="delimiter:string skip_empty:bool",
       value_dependent_shape=True, onnx=no_onnx.STRING)
define("StringSplitV2", _split_infer, attrs="sep:none|string maxsplit:int",
       value_dependent_shape=True, onnx=no_onnx.STRING)


def string_split(source, delimiter=" ", skip_empty=True):
    """TF1's `tf.string_split`: split each element of a string vector at any of the characters of
    `delimiter` (each byte when it is empty), dropping empty tokens when `skip_empty`; a
    `SparseTensor` with one row per element."""
    (source,) = _strings([source], "tf.string_split source")
    indices, values, shape = make_op(
        "StringSplit", (source,), {"delimiter": _text(delimiter, "delimiter"),
                                   "skip_empty": bool(skip_empty)}, name="StringSplit").outputs
    return SparseTensor(indices, values, shape)


def split(source, sep=None, maxsplit=-1, result_type="SparseTensor", name=None):
    """`tf.strings.split` (TF1.14+): Python's `str.split(sep, maxsplit)` on each element of a string
    vector (sep None: runs of whitespace). Only `result_type="SparseTensor"` (no RaggedTensor)."""
    if result_type != "SparseTensor":
        raise ValueError("graphflow's tf.strings.split returns a SparseTensor only "
                         "(result_type='SparseTensor'); RaggedTensor is not implemented")
    (source,) = _strings([source], "tf.strings.split source")
    attrs = {"sep": None if sep is None else _text(sep, "sep"), "maxsplit": int(maxsplit)}
    if attrs["sep"] == "":
        raise ValueError("tf.strings.split: sep must not be empty (use None for whitespace)")
    indices, values, shape = make_op("StringSplitV2", (source,), attrs,
                                     name=name or "StringSplit").outputs
    return SparseTensor(indices, values, shape)


# ---------------------------------------------------------------- length, conversions
def _length_infer(inputs, attrs):
    require_dtype(inputs[0], STRING, "tf.strings.length input")
    if attrs["unit"] not in ("BYTE", "UTF8_CHAR"):
        raise ValueError(f"unit must be 'BYTE' or 'UTF8_CHAR', got {attrs['unit']!r}")
    return [(dtypes.int32, inputs[0].shape)]


define("StringLength", _length_infer, attrs="unit:enum(BYTE,UTF8_CHAR)", onnx=no_onnx.STRING)


def length(input, name=None, unit="BYTE"):
    """`tf.strings.length`: the length of each string in bytes (or UTF-8 characters)."""
    (t,) = _strings([input], "tf.strings.length input")
    return make_tensor("StringLength", (t,), {"unit": unit}, name=name or "StringLength")


def _as_string_infer(inputs, attrs):
    require_dtype(inputs[0], _AS_STRING_INPUTS, "tf.as_string input")
    if len(attrs["fill"]) > 1:
        raise ValueError(f"fill must be at most one character, got {attrs['fill']!r}")
    if attrs["scientific"] and attrs["shortest"]:
        raise ValueError("cannot select both scientific and shortest notation")
    if attrs["precision"] > -1 and attrs["shortest"]:
        raise ValueError("cannot select both precision and shortest notation")
    return [(dtypes.string, inputs[0].shape)]


define("AsString", _as_string_infer,
       attrs="precision:int scientific:bool shortest:bool width:int fill:string", onnx=no_onnx.STRING)


def as_string(input, precision=-1, scientific=False, shortest=False, width=-1, fill="", name=None):
    """`tf.as_string`: numbers and bools as text, formatted as TF's kernel does (floats "%.6f" by
    default; `precision`, `scientific` ("%e"), `shortest` ("%g"), `width` padded with `fill`)."""
    t = convert_to_tensor(input)
    attrs = {"precision": int(precision), "scientific": bool(scientific),
             "shortest": bool(shortest), "width": int(width), "fill": _text(fill, "fill")}
    return make_tensor("AsString", (t,), attrs, name=name or "AsString")


def _to_number_infer(inputs, attrs):
    require_dtype(inputs[0], STRING, "tf.strings.to_number input")
    return [(dtypes.as_dtype(attrs["out_type"]), inputs[0].shape)]


define("StringToNumber", _to_number_infer, attrs="out_type:dtype", onnx=no_onnx.STRING)


def to_number(string_tensor, out_type=dtypes.float32, name=None):
    """`tf.strings.to_number`: parse each string as a number of `out_type` (an error names the
    string that is not one)."""
    out_type = dtypes.as_dtype(out_type)
    if out_type not in _TO_NUMBER_OUTPUTS:
        raise TypeError(f"out_type must be one of float32, float64, int32, int64, got "
                        f"{out_type.name}")
    (t,) = _strings([string_tensor], "tf.strings.to_number input")
    return make_tensor("StringToNumber", (t,), {"out_type": out_type.name},
                       name=name or "StringToNumber")


# ---------------------------------------------------------------- case, regular expressions
def _case_infer(inputs, attrs):
    require_dtype(inputs[0], STRING, "tf.strings.lower/upper input")
    if attrs["encoding"] not in ("", "utf-8"):
        raise ValueError(f"encoding must be '' or 'utf-8', got {attrs['encoding']!r}")
    return [(dtypes.string, inputs[0].shape)]


define("StringLower", _case_infer, attrs="encoding:string", onnx=no_onnx.CASE)
define("StringUpper", _case_infer, attrs="encoding:string", onnx=no_onnx.CASE)


def _case(op_type, input, encoding, name):
    encoding = (encoding or "").lower()
    if encoding not in ("", "utf-8"):
        raise ValueError(f"encoding must be '' (ASCII letters only) or 'utf-8', got {encoding!r}")
    (t,) = _strings([input], f"tf.strings.{op_type[6:].lower()} input")
    return make_tensor(op_type, (t,), {"encoding": encoding}, name=name or op_type)


def lower(input, encoding="", name=None):
    """`tf.strings.lower`: each string lowercased; with encoding '' only the ASCII letters A-Z
    change (locale-free, any bytes), with 'utf-8' every Unicode letter (Python's rules)."""
    return _case("StringLower", input, encoding, name)


def upper(input, encoding="", name=None):
    """`tf.strings.upper`: each string uppercased (the rules of `lower`)."""
    return _case("StringUpper", input, encoding, name)


def _match_infer(inputs, attrs):
    require_dtype(inputs[0], STRING, "tf.strings.regex_full_match input")
    if len(inputs) > 1:
        require_dtype(inputs[1], STRING, "tf.strings.regex_full_match pattern")
        if inputs[1].shape.ndims not in (None, 0):
            raise ValueError(f"pattern must be a scalar, got shape {inputs[1].shape}")
    return [(dtypes.bool_, inputs[0].shape)]


define("RegexFullMatch", _match_infer, onnx=no_onnx.REGEX)
define("StaticRegexFullMatch", _match_infer, attrs="pattern:string", onnx=no_onnx.REGEX)


def regex_full_match(input, pattern, name=None):
    """`tf.strings.regex_full_match`: whether each whole string matches `pattern` (Python's `re`
    syntax, which agrees with TF's RE2 for the common constructs). A Python string pattern is an
    attribute (StaticRegexFullMatch), a tensor one an input read at run time (RegexFullMatch)."""
    (t,) = _strings([input], "tf.strings.regex_full_match input")
    if isinstance(pattern, (str, bytes)):
        return make_tensor("StaticRegexFullMatch", (t,), {"pattern": _text(pattern, "pattern")},
                           name=name or "StaticRegexFullMatch")
    (p,) = _strings([pattern], "tf.strings.regex_full_match pattern")
    return make_tensor("RegexFullMatch", (t, p), name=name or "RegexFullMatch")


def _hash_infer(inputs, attrs):
    require_dtype(inputs[0], STRING, "tf.string_to_hash_bucket input")
    if attrs["num_buckets"] < 1:
        raise ValueError(f"num_buckets must be at least 1, got {attrs['num_buckets']}")
    if "key" in attrs and len(attrs["key"]) != 2:
        raise ValueError(f"key must have exactly two elements, got {attrs['key']}")
    return [(dtypes.int64, inputs[0].shape)]


define("StringToHashBucketFast", _hash_infer, attrs="num_buckets:int", onnx=no_onnx.STRING)
define("StringToHashBucketStrong", _hash_infer, attrs="num_buckets:int key:list(int)",
       onnx=no_onnx.STRING)
define("StringToHashBucket", _hash_infer, attrs="num_buckets:int", onnx=no_onnx.STRING)


def string_to_hash_bucket_fast(input, num_buckets, name=None):
    """`tf.string_to_hash_bucket_fast`: FarmHash Fingerprint64(string) % num_buckets as int64,
    TensorFlow's buckets."""
    (t,) = _strings([input], "tf.string_to_hash_bucket_fast input")
    return make_tensor("StringToHashBucketFast", (t,), {"num_buckets": int(num_buckets)},
                       name=name or "StringToHashBucketFast")


def string_to_hash_bucket_strong(input, num_buckets, key, name=None):
    """`tf.string_to_hash_bucket_strong`: SipHash-2-4(string) under `key` (two ints)
    % num_buckets as int64, TensorFlow's buckets."""
    (t,) = _strings([input], "tf.string_to_hash_bucket_strong input")
    key = [int(k) for k in key]
    return make_tensor("StringToHashBucketStrong", (t,), {"num_buckets": int(num_buckets),
                                                          "key": key},
                       name=name or "StringToHashBucketStrong")


def string_to_hash_bucket(string_tensor, num_buckets, name=None):
    """The legacy `tf.string_to_hash_bucket`: TensorFlow's Hash64(string) % num_buckets as int64
    (prefer string_to_hash_bucket_fast, as TensorFlow says)."""
    (t,) = _strings([string_tensor], "tf.string_to_hash_bucket input")
    return make_tensor("StringToHashBucket", (t,), {"num_buckets": int(num_buckets)},
                       name=name or "StringToHashBucket")


# ---------------------------------------------------------------- feature crosses
DEFAULT_HASH_KEY = 0xDECAFCAFFE  # TensorFlow's crossed_column hash_key default


def _hash_cross_infer(inputs, attrs):
    if len(inputs) < 2:
        raise ValueError(f"HashCross crosses at least two inputs, got {len(inputs)}")
    if attrs["num_buckets"] < 1:
        raise ValueError(f"num_buckets must be at least 1, got {attrs['num_buckets']}")
    batch, width = None, 1
    for t in inputs:
        require_dtype(t, (dtypes.string, dtypes.int64), "HashCross inputs")
        dims = t.shape.dims
        if dims is not None and len(dims) != 2:
            raise ValueError(f"HashCross inputs are [batch, n] matrices, got shape {t.shape}")
        if dims is None:
            width = None
            continue
        if batch is None:
            batch = dims[0]
        elif dims[0] is not None and dims[0] != batch:
            raise ValueError(f"HashCross inputs differ in batch size: {batch} and {dims[0]}")
        width = None if width is None or dims[1] is None else width * dims[1]
    return [(dtypes.int64, TensorShape([batch, width]))]


define("HashCross", _hash_cross_infer, attrs="num_buckets:int hash_key:int", onnx=no_onnx.STRING)


def hash_cross(inputs, num_buckets, hash_key=DEFAULT_HASH_KEY, name=None):
    """Every combination of one value of each input row ([batch, n_i] strings or int64, the last
    input varying fastest) hashed as TensorFlow's `sparse_cross_hashed` does: FingerprintCat64 of
    `hash_key` and each value's hash (FarmHash Fingerprint64 of a string, an integer as itself),
    modulo `num_buckets`; [batch, n_1 * n_2 * ...] int64 (`tf.feature_column.crossed_column`)."""
    tensors = [convert_to_tensor(t) for t in inputs]
    return make_tensor("HashCross", tensors, {"num_buckets": int(num_buckets),
                                              "hash_key": int(hash_key)},
                       name=name or "HashCross")


to_hash_bucket_fast = string_to_hash_bucket_fast
to_hash_bucket_strong = string_to_hash_bucket_strong
to_hash_bucket = string_to_hash_bucket

no_gradient("HashCross", "StringToHashBucketFast", "StringToHashBucketStrong", "StringToHashBucket",
            "StringJoin", "StringSplit", "StringSplitV2", "StringLength",
            "AsString",
            "StringToNumber", "StringLower", "StringUpper", "RegexFullMatch",
            "StaticRegexFullMatch")

string_to_number = to_number
join = string_join

__all__ = ["as_string", "string_join", "string_split", "string_to_number",
           "string_to_hash_bucket_fast", "string_to_hash_bucket_strong", "string_to_hash_bucket"]
