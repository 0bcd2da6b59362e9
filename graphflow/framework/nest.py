"""Nested structures (TF's `nest`): flatten tuples, lists, dicts and namedtuples to a list of
leaves and pack a flat list back into the same structure. Dicts flatten in sorted key order, as
in TF. Anything else (a Tensor, a TensorArray, a number) is a leaf.

`sequences` names the types besides dict that are structure: (list, tuple) here, as in TF's
`nest`; `tf.data` passes (tuple,) so that a list is one component (`tf1/data/nest.py`)."""

SEQUENCES = (list, tuple)


def is_sequence(x, sequences=SEQUENCES):
    return isinstance(x, (dict, *sequences))


def flatten(structure, sequences=SEQUENCES):
    """The leaves of `structure`, depth first (iterative: no recursion limit)."""
    out = []
    stack = [structure]
    while stack:
        x = stack.pop()
        if isinstance(x, dict):
            stack.extend(x[k] for k in reversed(sorted(x)))
        elif isinstance(x, sequences):
            stack.extend(reversed(x))
        else:
            out.append(x)
    return out


def _rebuild(template, items):
    if isinstance(template, dict):
        keys = sorted(template)
        by_key = dict(zip(keys, items))
        return type(template)((k, by_key[k]) for k in template)
    if hasattr(template, "_fields"):  # namedtuple
        return type(template)(*items)
    return type(template)(items)


def pack_sequence_as(structure, flat, sequences=SEQUENCES):
    """A structure shaped like `structure` whose leaves are taken from `flat` in order."""
    flat = list(flat)
    n = len(flatten(structure, sequences))
    if n != len(flat):
        raise ValueError(f"The structure has {n} leaves but {len(flat)} values were given")
    position = [0]

    def build(x):
        if is_sequence(x, sequences):
            children = [x[k] for k in sorted(x)] if isinstance(x, dict) else list(x)
            return _rebuild(x, [build(c) for c in children])
        value = flat[position[0]]
        position[0] += 1
        return value
    return build(structure)


def map_structure(fn, structure):
    return pack_sequence_as(structure, [fn(x) for x in flatten(structure)])


def structure_mismatch(a, b):
    """None when `a` and `b` nest the same way, else a sentence saying where they differ."""
    stack = [(a, b, "")]
    while stack:
        x, y, path = stack.pop()
        if is_sequence(x) != is_sequence(y):
            return f"at {path or 'the top'}: {_kind(x)} vs {_kind(y)}"
        if not is_sequence(x):
            continue
        if isinstance(x, dict) != isinstance(y, dict):
            return f"at {path or 'the top'}: {_kind(x)} vs {_kind(y)}"
        if isinstance(x, dict):
            if sorted(x) != sorted(y):
                return f"at {path or 'the top'}: keys {sorted(x)} vs {sorted(y)}"
            stack.extend((x[k], y[k], f"{path}[{k!r}]") for k in x)
        else:
            if len(x) != len(y):
                return f"at {path or 'the top'}: {len(x)} items vs {len(y)} items"
            if hasattr(x, "_fields") != hasattr(y, "_fields") or (
                    hasattr(x, "_fields") and type(x) is not type(y)):
                return f"at {path or 'the top'}: {type(x).__name__} vs {type(y).__name__}"
            stack.extend((xi, yi, f"{path}[{i}]") for i, (xi, yi) in enumerate(zip(x, y)))
    return None


def _kind(x):
    if isinstance(x, dict):
        return "a dict"
    if isinstance(x, (list, tuple)):
        return f"a {type(x).__name__} of {len(x)}"
    return f"a single value ({type(x).__name__})"
