"""`tf.random`: the random ops under their `tf.random.*` names (TF 1.13+ spelling, e.g.
`tf.random.normal`, `tf.random.set_random_seed`; `set_seed` is the later alias)."""

from graphflow.framework.graph import set_random_seed
from graphflow.ops.random_ops import categorical, get_seed, multinomial, truncated_normal
from graphflow.ops.random_ops import random_normal as normal
from graphflow.ops.random_ops import random_shuffle as shuffle
from graphflow.ops.random_ops import random_uniform as uniform

set_seed = set_random_seed

__all__ = ["normal", "uniform", "truncated_normal", "set_random_seed", "set_seed", "get_seed",
           "shuffle", "categorical", "multinomial"]
