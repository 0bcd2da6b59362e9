"""Keras's reshaping layers beyond Reshape/Flatten: RepeatVector, Permute, Cropping1D/2D,
ZeroPadding1D/3D and UpSampling1D/3D (nearest: each step repeated), channels_last as in TF1
Keras's defaults (Cropping2D also takes channels_first)."""

from graphflow.ops import array_ops
from graphflow.ops.core_ops import convert_to_tensor
from graphflow.tf1.keras import backend_math
from graphflow.tf1.keras.base_layer import Layer


def _pairs(value, n, what):
    """An int, n ints or n pairs -> n (before, after) pairs."""
    if isinstance(value, int):
        return ((value, value),) * n
    value = tuple(value)
    if len(value) != n:
        raise ValueError(f"{what} should have {n} entries, got {value!r}")
    return tuple((int(v), int(v)) if isinstance(v, int) else (int(v[0]), int(v[1]))
                 for v in value)


def _channels_last(layer, data_format):
    if data_format not in (None, "channels_last"):
        raise NotImplementedError(f"{type(layer).__name__}: only channels_last")
    return "channels_last"


class RepeatVector(Layer):
    """`RepeatVector(n)`: [batch, features] -> [batch, n, features]."""

    def __init__(self, n, **kwargs):
        super().__init__(**kwargs)
        self.n = int(n)

    def call(self, inputs):
        return backend_math.repeat(inputs, self.n)


class Permute(Layer):
    """`Permute(dims)`: the non-batch axes reordered (dims count from 1)."""

    def __init__(self, dims, **kwargs):
        super().__init__(**kwargs)
        self.dims = tuple(int(d) for d in dims)
        if sorted(self.dims) != list(range(1, len(self.dims) + 1)):
            raise ValueError(f"Invalid permutation argument `dims` for Permute Layer. The set of "
                             f"indices in `dims` must be consecutive and start from 1. Received "
                             f"dims={dims!r}")

    def call(self, inputs):
        return array_ops.transpose(inputs, perm=(0,) + self.dims)


class Cropping1D(Layer):
    """`Cropping1D(cropping=(1, 1))`: steps removed at the start and end of axis 1."""

    def __init__(self, cropping=(1, 1), **kwargs):
        super().__init__(**kwargs)
        self.cropping = _pairs([cropping] if isinstance(cropping, int) else [tuple(cropping)], 1,
                               "cropping")[0]

    def call(self, inputs):
        start, end = self.cropping
        x = convert_to_tensor(inputs)
        return x[:, start:-end] if end else x[:, start:]


class Cropping2D(Layer):
    """`Cropping2D(cropping=((0, 0), (0, 0)))`: rows and columns removed at the borders."""

    def __init__(self, cropping=((0, 0), (0, 0)), data_format=None, **kwargs):
        super().__init__(**kwargs)
        self.cropping = _pairs(cropping, 2, "cropping")
        self.data_format = data_format or "channels_last"
        if self.data_format not in ("channels_last", "channels_first"):
            raise ValueError(f"Cropping2D: unknown data_format {data_format!r}")

    def call(self, inputs):
        x = convert_to_tensor(inputs)
        (top, bottom), (left, right) = self.cropping
        rows = slice(top, -bottom if bottom else None)
        cols = slice(left, -right if right else None)
        if self.data_format == "channels_last":
            return x[:, rows, cols, :]
        return x[:, :, rows, cols]


class ZeroPadding1D(Layer):
    """`ZeroPadding1D(padding=1)`: zeros added before and after axis 1."""

    def __init__(self, padding=1, **kwargs):
        super().__init__(**kwargs)
        self.padding = _pairs([padding] if isinstance(padding, int) else [tuple(padding)], 1,
                              "padding")[0]

    def call(self, inputs):
        return backend_math.temporal_padding(inputs, self.padding)


class ZeroPadding3D(Layer):
    """`ZeroPadding3D(padding=(1, 1, 1))`: zeros around the three spatial axes."""

    def __init__(self, padding=(1, 1, 1), data_format=None, **kwargs):
        super().__init__(**kwargs)
        self.padding = _pairs(padding, 3, "padding")
        self.data_format = _channels_last(self, data_format)

    def call(self, inputs):
        return backend_math.spatial_3d_padding(inputs, self.padding)


class UpSampling1D(Layer):
    """`UpSampling1D(size=2)`: each step repeated `size` times."""

    def __init__(self, size=2, **kwargs):
        super().__init__(**kwargs)
        self.size = int(size)

    def call(self, inputs):
        return backend_math.repeat_elements(inputs, self.size, axis=1)


class UpSampling3D(Layer):
    """`UpSampling3D(size=(2, 2, 2))`: each voxel repeated along the three spatial axes."""

    def __init__(self, size=(2, 2, 2), data_format=None, **kwargs):
        super().__init__(**kwargs)
        self.size = tuple(int(s) for s in ((size,) * 3 if isinstance(size, int) else size))
        self.data_format = _channels_last(self, data_format)

    def call(self, inputs):
        out = convert_to_tensor(inputs)
        for axis, rep in zip((1, 2, 3), self.size):
            out = backend_math.repeat_elements(out, rep, axis=axis)
        return out


__all__ = ["RepeatVector", "Permute", "Cropping1D", "Cropping2D", "ZeroPadding1D",
           "ZeroPadding3D", "UpSampling1D", "UpSampling3D"]
