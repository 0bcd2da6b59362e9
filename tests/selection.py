"""Which parametrizations of a test the default run keeps (tests/conftest.py marks the rest slow).

Of each parametrized test function the default run keeps a representative slice: the
parametrizations that together use every value of every parameter at least once ("each choice"),
picked greedily in collection order. An op case (`tests/op_cases`), or any value with an `op_type`
string, counts by its op type, so each harness over the op cases runs one case of every op type,
its smallest (fewest elements in its `inputs`). A
value that is not a plain one (None, bool, number, string, or a tuple of them) counts as itself
(the object the parametrize list holds). CI runs every parametrization (GRAPHFLOW_RUN_SLOW=1).
"""

_PLAIN = (type(None), bool, int, float, complex, str, bytes)


def _plain(value):
    if isinstance(value, tuple):
        return all(_plain(v) for v in value)
    return isinstance(value, _PLAIN)


def _is_op_case(value):
    return isinstance(getattr(value, "op_type", None), str)


def _choice(argname, value):
    if _is_op_case(value):
        return argname, "op type", value.op_type
    if _plain(value):
        return argname, type(value).__name__, repr(value)
    return argname, "object", id(value)


def _size(item):
    """How much data the item's op cases feed (0 without one): smaller cases are picked first."""
    total = 0
    for value in item.callspec.params.values():
        if _is_op_case(value):
            total += sum(getattr(x, "size", 1) for x in getattr(value, "inputs", ()))
    return total


def representatives(items):
    """The parametrized items the default run keeps, as a set of node ids (items without
    parametrization are not considered: they are kept unless listed slow)."""
    groups = {}
    for item in items:
        if getattr(item, "callspec", None) is not None:
            groups.setdefault(item.nodeid.split("[", 1)[0], []).append(item)
    keep = set()
    for group in groups.values():
        covered = set()
        for item in sorted(group, key=_size):  # stable: collection order among equals
            choices = {_choice(name, value) for name, value in item.callspec.params.items()}
            if not choices <= covered:
                keep.add(item.nodeid)
                covered |= choices
    return keep
