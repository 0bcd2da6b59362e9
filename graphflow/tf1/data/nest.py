"""Nested element structures of `tf.data`: tuples, namedtuples and dicts of components.

As in TF1's `nest`: tuples (and namedtuples) and dicts are structure, dicts flatten in sorted key
order, and everything else (arrays, Tensors, numbers, *lists*) is one component. `flatten` and
`pack_as` convert between a structure and the flat list of its components that the iterator ops
carry. A SparseTensor in an element (a map function parsing a `tf.VarLenFeature`) travels as
`SparseParts`, its three dense parts; the user sees a SparseTensor again in map functions and from
`get_next` (`from_sparse`, `to_sparse`).
"""

import collections

from graphflow.framework import nest
from graphflow.ops.sparse_tensor import SparseTensor

_COMPONENT_SEQUENCES = (tuple,)  # a list is one component, as in TF1's tf.data


def is_structure(value):
    return nest.is_sequence(value, _COMPONENT_SEQUENCES)


def flatten(structure):
    """The components of `structure` in TF1's order (iterative, no recursion limit)."""
    return nest.flatten(structure, _COMPONENT_SEQUENCES)


def pack_as(template, flat):
    """`flat` components arranged like `template` (inverse of `flatten`)."""
    flat = list(flat)
    count = len(flatten(template))
    if count != len(flat):
        raise ValueError(f"structure {template!r} has {count} components, got {len(flat)}")
    return nest.pack_sequence_as(template, flat, _COMPONENT_SEQUENCES)


def map_structure(fn, *structures):
    """`fn` applied to the matching components of `structures` (same structure), repacked."""
    flats = [flatten(s) for s in structures]
    for s in structures[1:]:
        assert_same_structure(structures[0], s)
    return pack_as(structures[0], [fn(*parts) for parts in zip(*flats)])


def assert_same_structure(a, b):
    if _signature(a) != _signature(b):
        raise TypeError(f"The two structures don't have the same nested structure: {a!r} and {b!r}")


def _signature(structure):
    if isinstance(structure, dict):
        return ("dict", tuple((k, _signature(structure[k])) for k in sorted(structure)))
    if isinstance(structure, tuple):
        return ("tuple", tuple(_signature(v) for v in structure))
    return "."


class ComponentSpec:
    """The dtype and static shape of one component of a dataset's elements (a leaf, not a tuple,
    so that element specs nest like elements)."""

    __slots__ = ("dtype", "shape")

    def __init__(self, dtype, shape):
        self.dtype = dtype
        self.shape = shape

    def __repr__(self):
        return f"ComponentSpec({self.dtype.name}, {self.shape})"


class SparseParts(collections.namedtuple("SparseParts", ["indices", "values", "dense_shape"])):
    """A SparseTensor component of an element, carried as its three dense parts."""


def _replace(structure, leaf):
    if isinstance(structure, dict):
        return type(structure)((k, _replace(v, leaf)) for k, v in structure.items())
    if isinstance(structure, SparseParts) or not isinstance(structure, tuple):
        return leaf(structure)
    items = [_replace(v, leaf) for v in structure]
    return type(structure)(*items) if hasattr(structure, "_fields") else tuple(items)


def map_components(structure, fn):
    """`structure` with `fn` applied to each component, a SparseParts counting as one."""
    return _replace(structure, fn)


def sparse_starts(structure):
    """The flat positions (in `flatten` order) where each SparseParts' three components start."""
    starts, count = [], 0
    stack = [structure]
    while stack:
        x = stack.pop()
        if isinstance(x, dict):
            stack.extend(x[k] for k in reversed(sorted(x)))
        elif isinstance(x, SparseParts):
            starts.append(count)
            count += 3
        elif isinstance(x, tuple):
            stack.extend(reversed(x))
        else:
            count += 1
    return starts


def from_sparse(structure):
    """`structure` with each SparseTensor replaced by its SparseParts."""
    return _replace(structure, lambda x: SparseParts(x.indices, x.values, x.dense_shape)
                    if isinstance(x, SparseTensor) else x)


def to_sparse(structure):
    """`structure` with each SparseParts replaced by a SparseTensor of its parts."""
    return _replace(structure, lambda x: SparseTensor(*x) if isinstance(x, SparseParts) else x)


def has_sparse(structure):
    found = []
    _replace(structure, lambda x: found.append(isinstance(x, SparseParts)))
    return any(found)
