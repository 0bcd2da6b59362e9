"""Op families: WHAT each op means. Importing this package registers every op type's `OpDef`.

Each module defines its op records (`registry.define`) and the TF1-named constructors users call;
the `*_grad` modules attach gradient rules to the same records. Every module in this package is
imported here (families first, then gradient modules), so adding a family is adding a file.
"""

import importlib
import pkgutil

from graphflow.ops import core_ops, math_ops, registry, state_ops, tensor_operators  # noqa: F401


def _import_all():
    names = sorted(m.name for m in pkgutil.iter_modules(__path__))
    families = [n for n in names if not n.endswith("_grad")]
    grads = [n for n in names if n.endswith("_grad")]
    for name in families + grads:
        importlib.import_module(f"{__name__}.{name}")


_import_all()
