"""Nested element structures of `tf.data`: tuples, namedtuples and dicts of components.

As in TF1's `nest`: tuples (and namedtuples) and dicts are structure, dicts flatten in sorted key
order, and everything else (arrays, Tensors, numbers, *lists*) is one component. `flatten` and
`pack_as` convert between a structure and the flat list of its components that the iterator ops
carry.
"""

from graphflow.framework import nest

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
