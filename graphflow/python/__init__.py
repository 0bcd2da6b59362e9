"""`graphflow.python`: the import paths TF1 programs spell as `tensorflow.python...`
(`from tensorflow.python.client import timeline`, `from tensorflow.python.framework import ops`,
`from tensorflow.python.ops import math_ops`). Its subpackages load on first use."""

import importlib as _importlib

_PACKAGES = ("client", "framework", "ops")


def __getattr__(name):
    if name in _PACKAGES:
        return _importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"graphflow does not provide tensorflow.python.{name} (see docs/compat.md)")


__all__ = list(_PACKAGES)


def __dir__():
    return list(_PACKAGES)
