"""`tf.math`: TF1's math namespace — the elementwise and reduction ops of `ops/math_ops.py` under
their `tf.math.*` names, plus top_k and in_top_k."""

from graphflow.ops.index_ops import in_top_k, top_k  # noqa: F401
from graphflow.ops.math_ops import *  # noqa: F401,F403
from graphflow.ops.math_ops import __all__ as _math_names

__all__ = list(_math_names) + ["top_k", "in_top_k"]
