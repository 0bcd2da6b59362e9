"""CPU kernel table: numpy kernel builders keyed by op type (see `graphflow.kernels` for the contract).

`lookup(op_type)` ends in a clear error naming the op type when no kernel exists; there is no fallback.
"""

KERNELS = {}


def cpu_kernel(*op_types):
    """Register a kernel builder `build(node) -> fn(*inputs)` for one or more op types."""
    def register(build):
        for t in op_types:
            if t in KERNELS:
                raise ValueError(f"CPU kernel for '{t}' registered twice")
            KERNELS[t] = build
        return build
    return register


def simple(op_type, fn):
    """Register `fn(*inputs)` directly when it needs no attrs (most elementwise ops)."""
    cpu_kernel(op_type)(lambda node: fn)


class NoKernelError(LookupError):
    pass


def lookup(op_type):
    """The kernel builder of `op_type`."""
    try:
        return KERNELS[op_type]
    except KeyError:
        raise NoKernelError(f"No CPU kernel is registered for op type '{op_type}'") from None


def _load_all():
    """Import every module of this package: each one fills KERNELS for its op family."""
    import importlib
    import pkgutil
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        importlib.import_module(f"{__name__}.{info.name}")


_load_all()
