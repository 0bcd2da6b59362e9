"""TensorShape: a static, possibly partial shape (unknown rank, or `None` for unknown dimensions)."""


_INT64_MAX = 2**63 - 1


class TensorShape:
    """A static shape. `dims` is a tuple of ints/None, or None when even the rank is unknown."""

    __slots__ = ("dims",)

    def __init__(self, dims):
        if isinstance(dims, TensorShape):
            dims = dims.dims
        if dims is None:
            self.dims = None
        else:
            if isinstance(dims, int):
                dims = (dims,)
            out = []
            for d in dims:
                d = getattr(d, "value", d)  # accept Dimension-like objects
                if d is None or d == -1:
                    out.append(None)
                else:
                    d = int(d)
                    if d < 0:
                        raise ValueError(f"negative dimension {d} in shape {tuple(dims)}")
                    if d > _INT64_MAX:
                        raise ValueError(f"dimension {d} in shape {tuple(dims)} does not fit "
                                         "int64")
                    out.append(d)
            self.dims = tuple(out)

    @staticmethod
    def unknown():
        return TensorShape(None)

    @property
    def ndims(self):
        return None if self.dims is None else len(self.dims)

    rank = ndims

    def as_list(self):
        if self.dims is None:
            raise ValueError("as_list() is not defined on an unknown TensorShape.")
        return list(self.dims)

    def is_fully_defined(self):
        return self.dims is not None and all(d is not None for d in self.dims)

    def num_elements(self):
        if not self.is_fully_defined():
            return None
        n = 1
        for d in self.dims:
            n *= d
        return n

    def is_compatible_with(self, other):
        other = as_shape(other)
        if self.dims is None or other.dims is None:
            return True
        if len(self.dims) != len(other.dims):
            return False
        return all(a is None or b is None or a == b for a, b in zip(self.dims, other.dims))

    def merge_with(self, other):
        """The most specific shape compatible with both; ValueError if they conflict."""
        other = as_shape(other)
        if self.dims is None:
            return other
        if other.dims is None:
            return self
        if not self.is_compatible_with(other):
            raise ValueError(f"Shapes {self} and {other} are not compatible")
        return TensorShape([a if a is not None else b for a, b in zip(self.dims, other.dims)])

    def with_rank(self, rank):
        if self.dims is None:
            return TensorShape([None] * rank)
        if len(self.dims) != rank:
            raise ValueError(f"Shape {self} must have rank {rank}")
        return self

    def __len__(self):
        if self.dims is None:
            raise ValueError("Cannot take the length of a shape with unknown rank.")
        return len(self.dims)

    def __iter__(self):
        if self.dims is None:
            raise ValueError("Cannot iterate over a shape with unknown rank.")
        return iter(self.dims)

    def __getitem__(self, key):
        if self.dims is None:
            if isinstance(key, slice):
                return TensorShape(None)
            return None
        if isinstance(key, slice):
            return TensorShape(self.dims[key])
        return self.dims[key]

    def __eq__(self, other):
        try:
            other = as_shape(other)
        except (TypeError, ValueError):
            return NotImplemented
        return self.dims == other.dims

    def __hash__(self):
        return hash(self.dims)

    def __repr__(self):
        if self.dims is None:
            return "TensorShape(None)"
        return f"TensorShape({list(self.dims)})"

    def __str__(self):
        if self.dims is None:
            return "<unknown>"
        inner = ", ".join("?" if d is None else str(d) for d in self.dims)
        return f"({inner}{',' if len(self.dims) == 1 else ''})"

    def concatenate(self, other):
        other = as_shape(other)
        if self.dims is None or other.dims is None:
            return TensorShape(None)
        return TensorShape(self.dims + other.dims)


def as_shape(value):
    if isinstance(value, TensorShape):
        return value
    return TensorShape(value)
