"""numpy kernel of DecodeCSV (graphflow/ops/csv_ops.py): Python's `csv` module splits each line
(RFC 4180 quoting when `use_quote_delim`), then each field is converted to its column's dtype."""

import csv

import numpy as np

from graphflow.framework import dtypes
from graphflow.framework.errors import InvalidArgumentError
from graphflow.kernels.cpu import cpu_kernel

_PARSE = {"float32": float, "float64": float, "int32": int, "int64": int, "string": str}


def _fields(line, delim, quoting):
    text = line.decode() if isinstance(line, bytes) else str(line)
    if not quoting:
        return text.split(delim)
    return next(csv.reader([text], delimiter=delim, quotechar='"', doublequote=True,
                           strict=True), [""])


@cpu_kernel("DecodeCSV")
def _decode_csv(node):
    a = node.attrs
    types, defaults, required = a["out_types"], a["defaults"], a["required"]
    delim, quoting, na_value = a["field_delim"], a["use_quote_delim"], a["na_value"]
    select = a["select_cols"] or None
    n_cols = len(types)

    def convert(field, column, line_no):
        if field == "" or (na_value and field == na_value):
            if required[column]:
                raise InvalidArgumentError(None, None, f"Field {column} is required but missing "
                                           f"in record {line_no}! ('{node.name}')")
            field = defaults[column]
        if types[column] == "string":
            return field.encode()
        try:
            return _PARSE[types[column]](field)
        except ValueError:
            raise InvalidArgumentError(None, None, f"Field {column} in record {line_no} is not a "
                                       f"valid {types[column]}: {field} ('{node.name}')") from None

    def decode_csv(records):
        lines = np.asarray(records, dtype=object)
        flat = lines.reshape(-1)
        columns = [[] for _ in range(n_cols)]
        for line_no, line in enumerate(flat):
            try:
                fields = _fields(line, delim, quoting)
            except csv.Error as exc:
                raise InvalidArgumentError(None, None, f"Quoted field in record {line_no} is "
                                           f"malformed: {exc} ('{node.name}')") from None
            if select is not None:
                if len(fields) <= select[-1]:
                    raise InvalidArgumentError(None, None, f"Expect {select[-1] + 1} fields but "
                                               f"have {len(fields)} in record {line_no}")
                fields = [fields[c] for c in select]
            elif len(fields) != n_cols:
                raise InvalidArgumentError(None, None, f"Expect {n_cols} fields but have "
                                           f"{len(fields)} in record {line_no} ('{node.name}')")
            for c, field in enumerate(fields):
                columns[c].append(convert(field, c, line_no))
        outs = []
        for c, values in enumerate(columns):
            dtype = dtypes.as_dtype(types[c]).as_numpy_dtype
            outs.append(np.array(values, dtype=dtype).reshape(lines.shape))
        return outs[0] if n_cols == 1 else tuple(outs)
    return decode_csv
