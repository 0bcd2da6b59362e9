"""`tensorflow.python.framework.dtypes`: the dtype objects and `as_dtype`."""

from graphflow.framework.dtypes import (
                                        DType,
                                        as_dtype,
                                        complex64,
                                        complex128,
                                        double,
                                        float16,
                                        float32,
                                        float64,
                                        half,
                                        int8,
                                        int16,
                                        int32,
                                        int64,
                                        string,
                                        uint8,
                                        uint16,
                                        uint32,
                                        uint64,
                                        variant,
)
from graphflow.framework.dtypes import bool_ as bool  # noqa: A004

__all__ = ["DType", "as_dtype", "bool", "complex64", "complex128", "double", "float16", "float32",
           "float64", "half", "int8", "int16", "int32", "int64", "string", "uint8", "uint16",
           "uint32", "uint64", "variant"]
