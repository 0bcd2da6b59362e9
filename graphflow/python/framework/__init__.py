"""`graphflow.python.framework`: the modules TF1 programs import as
`from tensorflow.python.framework import ops, tensor_shape, dtypes, constant_op, graph_util`.
Each loads on first use; the package lists the same names whether or not they are loaded."""

import importlib as _importlib

__all__ = ["ops", "tensor_shape", "dtypes", "constant_op", "graph_util"]


def __getattr__(name):
    if name in __all__:
        return _importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"graphflow does not provide tensorflow.python.framework.{name} (see "
                         "docs/compat.md)")


def __dir__():
    return list(__all__)
