"""`batch` and `padded_batch`: consecutive elements stacked along a new first dimension.

As TF1: the last batch may be smaller unless `drop_remainder=True` (then the batch dimension is
static); `batch` needs every component to have one shape within a batch; `padded_batch` pads each
component to `padded_shapes` (a `None`/-1 dimension pads to the longest in the batch) with
`padding_values` (default 0). `batch` stacks a SparseTensor component into one SparseTensor of
rank + 1 (its dense shape the largest of each dimension), as TF1 does.
"""

import numpy as np

from graphflow.framework import dtypes
from graphflow.framework.graph import Tensor
from graphflow.framework.tensor_shape import TensorShape, as_shape
from graphflow.tf1.data import nest
from graphflow.tf1.data.dataset import Dataset, ElementError, first_error, scalar_arg
from graphflow.tf1.data.nest import ComponentSpec


def _batched_spec(spec, batch_size, drop_remainder, shape=None):
    shape = spec.shape if shape is None else shape
    rows = batch_size if drop_remainder and not isinstance(batch_size, Tensor) else None
    return ComponentSpec(spec.dtype, TensorShape([rows]).concatenate(shape))


class _Batcher(Dataset):
    def __init__(self, input_dataset, batch_size, drop_remainder, spec):
        self._batch_size = batch_size
        self._drop_remainder = bool(drop_remainder)
        super().__init__(spec, inputs=[input_dataset], captures=[batch_size])

    def _iterate(self, ctx):
        size = ctx.count(self._batch_size)
        if size <= 0:
            raise ValueError(f"batch_size must be greater than zero, got {size}")
        upstream = self._inputs[0]._iterate(ctx)
        try:
            batch = []
            for element in upstream:
                batch.append(element)
                if len(batch) == size:
                    yield self._stack_or_error(batch)
                    batch = []
            if batch and not self._drop_remainder:
                yield self._stack_or_error(batch)
        finally:
            upstream.close()

    def _stack_or_error(self, batch):
        """The batch, or its first failed element in its place (TF: the batch's get_next raises
        that error; its elements are consumed); an error stacking it fails this batch only."""
        error = first_error(batch)
        if error is not None:
            return error
        try:
            return self._stack(batch)
        except Exception as exc:
            return ElementError(exc)


def _batched_sparse_spec(parts):
    """A batch of SparseTensors is one SparseTensor of rank + 1 (TF1's `batch`)."""
    dims = parts.dense_shape.shape.dims
    rank = None if not dims or dims[0] is None else dims[0] + 1
    return nest.SparseParts(ComponentSpec(dtypes.int64, TensorShape([None, rank])),
                            ComponentSpec(parts.values.dtype, TensorShape([None])),
                            ComponentSpec(dtypes.int64, TensorShape([rank])))


def _batch_sparse(indices, values, shapes):
    """Stack SparseTensor values (indices [n, r], values [n], dense_shape [r]) along a new first
    dimension; the dense shape is the largest of each dimension."""
    if len({len(s) for s in shapes}) != 1:
        raise ValueError(f"Cannot batch SparseTensors of different ranks: dense shapes "
                         f"{[list(s) for s in shapes]}")
    rank = len(shapes[0])
    rows = [np.concatenate([np.full((len(ix), 1), b, np.int64),
                            np.asarray(ix, np.int64).reshape(len(ix), rank)], 1)
            for b, ix in enumerate(indices)]
    shape = np.concatenate([[len(shapes)], np.max(np.stack(shapes), axis=0)]).astype(np.int64)
    return np.concatenate(rows), np.concatenate(values), shape


class BatchDataset(_Batcher):
    def __init__(self, input_dataset, batch_size, drop_remainder=False):
        batch_size = scalar_arg(batch_size, "batch_size")
        spec = nest.map_components(
            input_dataset.element_spec,
            lambda s: _batched_sparse_spec(s) if isinstance(s, nest.SparseParts)
            else _batched_spec(s, batch_size, drop_remainder))
        self._sparse = set(nest.sparse_starts(input_dataset.element_spec))
        super().__init__(input_dataset, batch_size, drop_remainder, spec)

    def _stack(self, batch):
        out, skip = [], 0
        columns = list(zip(*batch))
        for index, parts in enumerate(columns):
            if skip:
                skip -= 1
                continue
            if index in self._sparse:
                out.extend(_batch_sparse(parts, columns[index + 1], columns[index + 2]))
                skip = 2
                continue
            first = parts[0].shape
            for position, part in enumerate(parts):
                if part.shape != first:
                    raise ValueError(
                        f"Cannot batch tensors with different shapes in component {index}. "
                        f"First element had shape {list(first)} and element {position} had "
                        f"shape {list(part.shape)}; use padded_batch")
            out.append(np.stack(parts))
        return tuple(out)


class PaddedBatchDataset(_Batcher):
    def __init__(self, input_dataset, batch_size, padded_shapes=None, padding_values=None,
                 drop_remainder=False):
        batch_size = scalar_arg(batch_size, "batch_size")
        element_spec = input_dataset.element_spec
        if nest.has_sparse(element_spec):
            raise TypeError("padded_batch: elements holding a SparseTensor cannot be padded; use "
                            "batch (which stacks SparseTensors) or make them dense first")
        specs = nest.flatten(element_spec)
        if padded_shapes is None:
            shapes = [s.shape for s in specs]
        else:
            shapes = _flat_shapes(element_spec, padded_shapes)
        for spec, shape in zip(specs, shapes):
            if spec.shape.dims is None or shape.dims is None:
                raise ValueError(f"padded_batch needs components of known rank, got {spec.shape}")
            if not spec.shape.is_compatible_with(TensorShape([None] * len(shape.dims))):
                raise ValueError(f"padded shape {shape} has a different rank than the component "
                                 f"shape {spec.shape}")
        if padding_values is None:
            values = [0] * len(specs)
        else:
            nest.assert_same_structure(element_spec, padding_values)
            values = nest.flatten(padding_values)
        self._targets = [shape.dims for shape in shapes]
        self._pad_values = [np.asarray(v, dtype=s.dtype.as_numpy_dtype)
                            for v, s in zip(values, specs)]
        spec = nest.pack_as(element_spec, [_batched_spec(s, batch_size, drop_remainder, shape)
                                           for s, shape in zip(specs, shapes)])
        super().__init__(input_dataset, batch_size, drop_remainder, spec)

    def _stack(self, batch):
        out = []
        for parts, target, pad in zip(zip(*batch), self._targets, self._pad_values):
            longest = np.max([p.shape for p in parts], axis=0) if parts[0].ndim else ()
            shape = [int(m) if t is None else t for t, m in zip(target, longest)]
            padded = np.full([len(parts)] + shape, pad, dtype=pad.dtype)
            for i, part in enumerate(parts):
                if any(d > s for d, s in zip(part.shape, shape)):
                    raise ValueError(f"Attempted to pad to a smaller size than the input element: "
                                     f"element of shape {list(part.shape)}, padded shape {shape}")
                padded[(i,) + tuple(slice(0, d) for d in part.shape)] = part
            out.append(padded)
        return tuple(out)


def _flat_shapes(element_spec, padded_shapes):
    """Padded shapes given per component (lists, tuples of ints, TensorShapes; -1 = None)."""
    def leaf(value):
        if isinstance(value, (list, tuple)):
            value = [None if d == -1 else d for d in value]
        return as_shape(value)

    def structure(value, spec):
        if isinstance(spec, dict):
            return {k: structure(value[k], spec[k]) for k in spec}
        if isinstance(spec, tuple):
            if len(value) != len(spec):
                raise ValueError(f"padded_shapes {padded_shapes!r} does not match the element "
                                 "structure")
            return tuple(structure(v, s) for v, s in zip(value, spec))
        return leaf(value)
    return nest.flatten(structure(padded_shapes, element_spec))
