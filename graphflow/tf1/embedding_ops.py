"""`tf.nn.embedding_lookup`: rows of one embedding matrix or of one sharded over a list of
partitions (`partition_strategy` 'mod': id i lives in partition i % n at row i // n; 'div': ids are
split into contiguous ranges, the first `size % n` partitions one row longer), with TF1's
`max_norm` clipping of each looked-up row.

Sharded lookups are built from ordinary ops (one gather per partition, masked and summed), so
their gradients reach each partition as the gather gradient does.
"""

from graphflow.framework.graph import name_scope
from graphflow.ops import array_ops, math_ops, shape_ops
from graphflow.ops.core_ops import convert_to_tensor, identity
from graphflow.tf1.clip_ops import clip_by_norm
from graphflow.tf1.partitioned_variables import PartitionedVariable


def _clip(rows, ids_rank, max_norm):
    if max_norm is None:
        return rows
    rank = rows.shape.ndims
    if rank is None or ids_rank is None:
        raise ValueError("embedding_lookup with max_norm needs params and ids of known rank")
    return clip_by_norm(rows, max_norm, axes=list(range(ids_rank, rank)))


def _partition_sizes(params):
    sizes = [p.shape[0] if p.shape.ndims else None for p in params]
    if any(s is None for s in sizes):
        raise ValueError("embedding_lookup with partition_strategy='div' needs partitions whose "
                         "first dimension is known")
    return sizes


def _assignments(flat_ids, params, partition_strategy):
    """(partition of each id, row of each id inside its partition)."""
    n = len(params)
    if partition_strategy == "mod":
        return math_ops.floormod(flat_ids, n), math_ops.floordiv(flat_ids, n)
    total = sum(_partition_sizes(params))
    per, extras = total // n, total % n
    ids_dtype = flat_ids.dtype
    per_t = convert_to_tensor(per, dtype=ids_dtype)
    extras_t = convert_to_tensor(extras, dtype=ids_dtype)
    if per == 0:
        return flat_ids, shape_ops.zeros_like(flat_ids)
    assignment = math_ops.maximum(math_ops.floordiv(flat_ids, per_t + 1),
                                  math_ops.floordiv(flat_ids - extras_t, per_t))
    in_extras = math_ops.less(assignment, extras_t)
    rows = math_ops.where(in_extras, math_ops.floormod(flat_ids, per_t + 1),
                          math_ops.floormod(flat_ids - extras_t, per_t))
    return assignment, rows


def embedding_lookup(params, ids, partition_strategy="mod", name=None, validate_indices=True,
                     max_norm=None):
    """The rows of `params` (a tensor or variable, or a list of partitions of one, or a
    PartitionedVariable) at `ids`:
    shape `ids.shape + params.shape[1:]`. Rows whose L2 norm exceeds `max_norm` are scaled down
    to it."""
    if partition_strategy not in ("mod", "div"):
        raise ValueError(f"Unrecognized partition strategy: {partition_strategy}")
    if isinstance(params, (list, tuple, PartitionedVariable)):
        params = list(params)
    else:
        params = [params]
    if not params:
        raise ValueError("Need at least one param")
    with name_scope(name, "embedding_lookup", params + [ids]) as scope:
        ids = convert_to_tensor(ids, name="ids")
        ids_rank = ids.shape.ndims
        params = [convert_to_tensor(p) for p in params]
        if len(params) == 1:
            return identity(_clip(array_ops.gather(params[0], ids), ids_rank, max_norm),
                            name=scope)
        flat_ids = shape_ops.reshape(ids, [-1])
        assignment, rows = _assignments(flat_ids, params, partition_strategy)
        total = None
        for p, part in enumerate(params):
            mine = math_ops.equal(assignment, convert_to_tensor(p, dtype=assignment.dtype))
            safe_rows = math_ops.where(mine, rows, shape_ops.zeros_like(rows))
            gathered = _clip(array_ops.gather(part, safe_rows), 1, max_norm)
            mask = math_ops.cast(mine, gathered.dtype)
            if gathered.shape.ndims is None or gathered.shape.ndims > 1:
                mask = shape_ops.reshape(mask, shape_ops.concat(
                    [shape_ops.shape(mask), shape_ops.ones_like(shape_ops.shape(gathered)[1:])], 0))
            piece = math_ops.multiply(gathered, mask)
            total = piece if total is None else math_ops.add(total, piece)
        out_shape = shape_ops.concat([shape_ops.shape(ids), shape_ops.shape(params[0])[1:]], 0)
        result = shape_ops.reshape(total, out_shape)
        return identity(result, name=scope)


__all__ = ["embedding_lookup"]
