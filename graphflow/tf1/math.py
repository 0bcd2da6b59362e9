"""`tf.math`: TF1's math namespace — the elementwise and reduction ops of `ops/math_ops.py` under
their `tf.math.*` names, plus top_k and in_top_k, the cumulative ops, reduce_logsumexp, the
segment reductions and bincount."""

from graphflow.ops.array_ops import unsorted_segment_sum  # noqa: F401
from graphflow.ops.cumulative_ops import cumprod, cumsum  # noqa: F401
from graphflow.ops.index_ops import in_top_k, top_k  # noqa: F401
from graphflow.ops.math_composites import reduce_logsumexp  # noqa: F401
from graphflow.ops.math_ops import *  # noqa: F401,F403
from graphflow.ops.math_ops import __all__ as _math_names
from graphflow.ops.segment_ops import *  # noqa: F401,F403
from graphflow.ops.segment_ops import __all__ as _segment_names

__all__ = list(_math_names) + ["top_k", "in_top_k", "cumsum", "cumprod", "reduce_logsumexp",
                               "unsorted_segment_sum"] + list(_segment_names)
