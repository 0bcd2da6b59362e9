"""`tf.decode_csv` (`tf.io.decode_csv`): the DecodeCSV op, one output per column.

`decode_csv(records, record_defaults, field_delim=',', use_quote_delim=True, na_value='',
select_cols=None)`: each string of `records` is one CSV line; column i becomes a tensor of
`records`' shape whose dtype is that of `record_defaults[i]` (float32, float64, int32, int64 or
string). A default given as `[value]` fills an empty (or `na_value`) field; an empty default `[]`
makes the column required. Quoted fields ("a,b" and "" for a quote) follow RFC 4180 when
`use_quote_delim`. Errors are TF1's InvalidArgumentError texts (wrong number of fields, a field
that does not parse, a missing required field)."""

import numpy as np

from graphflow.framework import dtypes
from graphflow.ops import no_onnx
from graphflow.ops.core_ops import convert_to_tensor
from graphflow.ops.registry import define, make_op, no_gradient

_CSV_DTYPES = (dtypes.float32, dtypes.float64, dtypes.int32, dtypes.int64, dtypes.string)


def _decode_csv_infer(inputs, attrs):
    records = inputs[0]
    if records.dtype != dtypes.string:
        raise TypeError(f"records must be strings, got {records.dtype.name}")
    types = [dtypes.as_dtype(t) for t in attrs["out_types"]]
    if len(types) != len(attrs["defaults"]):
        raise ValueError("out_types and defaults must have one entry per column")
    return [(t, records.shape) for t in types]


define("DecodeCSV", _decode_csv_infer,
       attrs="out_types:list(dtype) defaults:list(string) required:list(bool) field_delim:string "
             "use_quote_delim:bool na_value:string select_cols:list(int)",
       onnx=no_onnx.none("parsing CSV text has no ONNX operator"))
no_gradient("DecodeCSV")


def _default(value, dtype, column):
    """(the default's text as stored in the op, whether the column is required)."""
    flat = np.asarray(value, dtype=object).reshape(-1) if not isinstance(value, (str, bytes)) \
        else np.array([value], dtype=object)
    if flat.size == 0:
        return "", True
    if flat.size != 1:
        raise ValueError(f"record_defaults[{column}] must have at most one element, got {value!r}")
    item = flat[0]
    if isinstance(item, bytes):
        item = item.decode()
    if dtype == dtypes.string:
        return str(item), False
    return repr(float(item)) if dtype.is_floating else str(int(item)), False


def decode_csv(records, record_defaults, field_delim=",", use_quote_delim=True, name=None,
               na_value="", select_cols=None):
    """Parse CSV lines into one tensor per column (see the module doc)."""
    records = convert_to_tensor(records, dtype=dtypes.string)
    if len(field_delim) != 1:
        raise ValueError(f"field_delim must be one character, got {field_delim!r}")
    types, defaults, required = [], [], []
    for i, default in enumerate(record_defaults):
        if hasattr(default, "dtype") and hasattr(default, "op"):  # a constant tensor
            from graphflow.ops.static_value import constant_value
            value = constant_value(default)
            if value is None:
                raise ValueError(f"record_defaults[{i}] must be known when the graph is built")
            dtype, default = default.dtype, value
        elif isinstance(default, np.ndarray) and default.dtype.kind in "iuf":
            dtype = dtypes.as_dtype(default.dtype)
        else:
            sample = np.asarray(default, dtype=object).reshape(-1)
            # an empty list is a required float32 column, as TF1 converts [] to float32
            dtype = _infer_dtype(sample[0]) if sample.size else dtypes.float32
        if dtype not in _CSV_DTYPES:
            raise TypeError(f"record_defaults[{i}] has dtype {dtype.name}; decode_csv takes "
                            f"{[t.name for t in _CSV_DTYPES]}")
        text, needed = _default(default, dtype, i)
        types.append(dtype.name)
        defaults.append(text)
        required.append(needed)
    select = [] if select_cols is None else [int(c) for c in select_cols]
    if select and (sorted(set(select)) != select or len(select) != len(types)):
        raise ValueError("select_cols must be strictly increasing and have one entry per "
                         "record_default")
    attrs = {"out_types": types, "defaults": defaults, "required": required,
             "field_delim": field_delim, "use_quote_delim": bool(use_quote_delim),
             "na_value": na_value, "select_cols": select}
    return list(make_op("DecodeCSV", (records,), attrs, name=name or "DecodeCSV").outputs)


def _infer_dtype(value):
    if isinstance(value, (str, bytes)):
        return dtypes.string
    if isinstance(value, (bool, np.bool_)):
        raise TypeError("decode_csv takes no bool columns")
    if isinstance(value, (int, np.integer)):
        return dtypes.int32 if not isinstance(value, np.integer) else dtypes.as_dtype(
            np.asarray(value).dtype)
    return dtypes.float32 if not isinstance(value, np.floating) else dtypes.as_dtype(
        np.asarray(value).dtype)


__all__ = ["decode_csv"]
