"""CPU kernel table: every CPU implementation of every op type (see `graphflow.kernels.registry`).

Modules of this package register implementations with `cpu_kernel`; the numpy reference of an op is
registered without a name, the others name themselves and say when they apply:

    @cpu_kernel("Transpose")                      # the reference: runs every node
    def transpose(node): ...

    @cpu_kernel("MaxPool", name="numba", preference=20, requires=("numba",), applies=...)
    def max_pool_loops(node): ...

The modules load on the table's first question (a plan being built), not at `import graphflow`.
`choose(node)` picks one implementation per op when the plan is built; asking for a missing op
type ends in a `NoKernelError` naming it, never a fallback.
"""

import importlib.util
import os

from graphflow.kernels.registry import REFERENCE, KernelTable, NoKernelError

__all__ = ["TABLE", "REFERENCE", "NoKernelError", "cpu_kernel", "simple", "choose", "reference_builder"]


def _switched_off(variable):
    return os.environ.get(variable, "").strip() not in ("", "0")


def _numba_available():
    """numba installed and not switched off (GRAPHFLOW_NO_JIT=1). numba itself is imported only
    when a plan builds a compiled kernel, not to answer this."""
    if _switched_off("GRAPHFLOW_NO_JIT"):
        return False
    return importlib.util.find_spec("numba") is not None


def _onednn_available():
    """oneDNN's library loadable and not switched off (GRAPHFLOW_NO_DNNL=1)."""
    from graphflow.kernels.cpu.onednn import dnnl  # loads the library here, on the first plan's question
    return dnnl.library() is not None


def _load_all():
    """Import every module of this package (and its subpackages): each fills TABLE for its ops."""
    import importlib
    import pkgutil
    for info in sorted(pkgutil.walk_packages(__path__, prefix=f"{__name__}."), key=lambda m: m.name):
        importlib.import_module(info.name)


TABLE = KernelTable("CPU", load=_load_all,
                    features={"numba": _numba_available, "onednn": _onednn_available})


def cpu_kernel(*op_types, name=REFERENCE, preference=0, applies=None, requires=()):
    """Register a kernel builder `build(node) -> fn(*inputs)` for one or more op types (the numpy
    reference unless `name` says otherwise; see `graphflow.kernels.registry`)."""
    return TABLE.register(*op_types, name=name, preference=preference, applies=applies,
                          requires=requires)


def simple(op_type, fn):
    """Register `fn(*inputs)` directly as the reference when it needs no attrs (most elementwise
    ops)."""
    cpu_kernel(op_type)(lambda node: fn)


def choose(node):
    """The implementation (`registry.Implementation`) that runs `node` on the CPU."""
    return TABLE.choose(node)


def reference_builder(op_type):
    """The numpy reference builder of `op_type` (a NoKernelError names a missing op type)."""
    return TABLE.reference(op_type)
