"""Op families: WHAT each op means. Importing this package registers every op type's `OpDef`.

Each module defines its op records (`registry.define`) and the TF1-named constructors users call;
the `*_grad` modules attach gradient rules to the same records.
"""

from graphflow.ops import core_ops, math_ops, registry, state_ops  # noqa: F401
