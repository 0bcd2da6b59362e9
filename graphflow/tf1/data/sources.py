"""Dataset sources: `from_tensor_slices`, `from_tensors`, `from_generator`, `range`.

Components given as numpy/Python data keep their value (dtypes as `tf.constant` infers them:
Python floats are float32, numpy arrays keep their dtype); components given as Tensors are
captured and read when the pipeline starts. Elements of `from_tensor_slices` are views of the
source arrays (no copy per element); `IteratorGetNext` copies what it hands to the user.
"""

import numpy as np

from graphflow.framework import dtypes
from graphflow.framework.graph import Tensor
from graphflow.framework.tensor_shape import TensorShape, as_shape
from graphflow.ops import core_ops
from graphflow.tf1.data import nest
from graphflow.tf1.data.dataset import Dataset, scalar_arg
from graphflow.tf1.data.nest import ComponentSpec


def _component(value):
    """(value: numpy array or captured Tensor, ComponentSpec) for one component."""
    if isinstance(value, Tensor) or core_ops._contains_tensor(value):
        tensor = core_ops.convert_to_tensor(value)
        return tensor, ComponentSpec(tensor.dtype, tensor.shape)
    if isinstance(value, Dataset):
        raise TypeError("A Dataset cannot be a component of another dataset's elements")
    array, dtype = core_ops._to_numpy(value, None)
    array = np.array(array, order="C")
    array.flags.writeable = False
    return array, ComponentSpec(dtype, TensorShape(array.shape))


def _components(tensors):
    pairs = [_component(v) for v in nest.flatten(tensors)]
    values = [v for v, _ in pairs]
    return values, nest.pack_as(tensors, [s for _, s in pairs])


class TensorDataset(Dataset):
    """`Dataset.from_tensors(t)`: one element, `t` itself."""

    def __init__(self, tensors):
        self._values, spec = _components(tensors)
        super().__init__(spec, captures=self._values)

    def _iterate(self, ctx):
        yield tuple(ctx.value(v) for v in self._values)


class TensorSliceDataset(Dataset):
    """`Dataset.from_tensor_slices(t)`: element i holds row i of every component."""

    def __init__(self, tensors):
        self._values, whole = _components(tensors)
        rows = None
        for spec in nest.flatten(whole):
            if spec.shape.ndims == 0:
                raise ValueError("from_tensor_slices needs components of rank >= 1, got a scalar")
            if spec.shape.ndims is not None and spec.shape.dims[0] is not None:
                if rows is not None and rows != spec.shape.dims[0]:
                    raise ValueError(f"from_tensor_slices: all components must have the same "
                                     f"size in dimension 0, got {rows} and {spec.shape.dims[0]}")
                rows = spec.shape.dims[0]
        spec = nest.map_structure(
            lambda s: ComponentSpec(s.dtype, TensorShape(None if s.shape.dims is None
                                                         else s.shape.dims[1:])), whole)
        super().__init__(spec, captures=self._values)

    def _iterate(self, ctx):
        arrays = [np.asarray(ctx.value(v)) for v in self._values]
        sizes = {a.shape[0] if a.ndim else None for a in arrays}
        if len(sizes) != 1 or None in sizes:
            shapes = [a.shape for a in arrays]
            raise ValueError(f"from_tensor_slices: components of shapes {shapes} do not all have "
                             "the same size in dimension 0")
        for i in range(sizes.pop()):
            yield tuple(a[i, ...] for a in arrays)


class GeneratorDataset(Dataset):
    """`Dataset.from_generator(generator, output_types, output_shapes, args)`: the elements a new
    call `generator(*args)` yields, each converted to `output_types` and checked against
    `output_shapes`. Each pass (a new iterator, another `repeat` epoch) calls `generator` again."""

    def __init__(self, generator, output_types, output_shapes=None, args=None):
        if not callable(generator):
            raise TypeError("from_generator: `generator` must be callable (a generator function)")
        types = nest.map_structure(dtypes.as_dtype, output_types)
        flat_types = nest.flatten(types)
        if output_shapes is None:
            flat_shapes = [TensorShape(None)] * len(flat_types)
        else:
            nest.assert_same_structure(output_types, _shape_structure(output_shapes))
            flat_shapes = [as_shape(s) for s in nest.flatten(_shape_structure(output_shapes))]
        spec = nest.pack_as(types, [ComponentSpec(t, s) for t, s in zip(flat_types, flat_shapes)])
        self._generator = generator
        self._args = tuple(args) if args is not None else ()
        super().__init__(spec, captures=self._args)

    def _iterate(self, ctx):
        specs = nest.flatten(self._element_spec)
        args = [ctx.value(a) for a in self._args]
        for item in self._generator(*args):
            try:
                flat = nest.flatten(_as_structure_of(self._element_spec, item))
            except (TypeError, ValueError):
                raise TypeError(f"`generator` yielded an element {item!r} that does not match "
                                f"the expected structure {self.output_types}") from None
            yield tuple(_checked(v, s) for v, s in zip(flat, specs))


def _shape_structure(shapes):
    """Shapes given as lists ([None, 3]) are leaves of the structure, not tuples of dims."""
    if isinstance(shapes, dict):
        return {k: _shape_structure(v) for k, v in shapes.items()}
    if isinstance(shapes, tuple) and not all(d is None or isinstance(d, int) for d in shapes):
        return tuple(_shape_structure(s) for s in shapes)
    return as_shape(shapes)


def _as_structure_of(spec, item):
    if isinstance(spec, tuple) and isinstance(item, list):
        item = tuple(item)
    nest.assert_same_structure(spec, item)
    return item


def _checked(value, spec):
    np_dtype = spec.dtype.as_numpy_dtype
    array = np.asarray(value)
    if array.dtype != np_dtype:
        source, target = array.dtype, np.dtype(np_dtype)
        convertible = source.kind not in "OUS" and (
            np.can_cast(source, target, casting="same_kind")
            or (source.kind in "iub" and target.kind in "iuf"))
        if not convertible:
            raise TypeError(f"`generator` yielded an element of dtype {array.dtype} where "
                            f"{spec.dtype.name} was expected")
        array = array.astype(np_dtype)
    if not spec.shape.is_compatible_with(array.shape):
        raise ValueError(f"`generator` yielded an element of shape {array.shape} where an "
                         f"element of shape {spec.shape} was expected")
    return array


class RangeDataset(Dataset):
    """`Dataset.range(stop)`, `range(start, stop[, step])`: int64 scalars like Python's range."""

    def __init__(self, *args, output_type=None):
        if not 1 <= len(args) <= 3:
            raise ValueError(f"Dataset.range takes 1 to 3 arguments (start, stop, step), got "
                             f"{len(args)}")
        args = [scalar_arg(a, "range argument") for a in args]
        if len(args) == 1:
            args = [0] + args
        self._args = args + [1] * (3 - len(args))
        if isinstance(self._args[2], int) and self._args[2] == 0:
            raise ValueError("Dataset.range: step must not be 0")
        dtype = dtypes.as_dtype(output_type or dtypes.int64)
        super().__init__(ComponentSpec(dtype, TensorShape([])), captures=self._args)

    def _iterate(self, ctx):
        start, stop, step = (ctx.count(a) for a in self._args)
        np_dtype = self._element_spec.dtype.as_numpy_dtype
        for i in range(start, stop, step):
            yield (np.array(i, dtype=np_dtype),)
