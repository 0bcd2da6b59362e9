"""`tf.contrib.seq2seq.sequence_loss` and `tf.contrib.legacy_seq2seq`'s sequence losses: the
weighted per-timestep cross entropy of language-model and translation tutorials (PTB, char-RNN),
from ordinary ops (sparse softmax cross entropy, sums and divisions), with TF1's arguments.

`sequence_loss(logits [batch, time, classes], targets [batch, time], weights [batch, time])`
averages over the batch and/or time axes as `average_across_batch` / `average_across_timesteps`
say (dividing by the sum of the weights, plus 1e-12 where TF1 adds it); the legacy functions take
Python lists of per-timestep tensors.
"""

from graphflow.framework.graph import name_scope
from graphflow.ops import math_ops, nn_ops, shape_ops
from graphflow.ops.core_ops import convert_to_tensor


def _crossent(labels, logits, softmax_loss_function):
    if softmax_loss_function is None:
        return nn_ops.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits)
    return softmax_loss_function(labels=labels, logits=logits)


def sequence_loss(logits, targets, weights, average_across_timesteps=True,
                  average_across_batch=True, sum_over_timesteps=False, sum_over_batch=False,
                  softmax_loss_function=None, name=None):
    """Weighted cross entropy of a batch of sequences (`tf.contrib.seq2seq.sequence_loss`)."""
    if average_across_timesteps and sum_over_timesteps:
        raise ValueError("average_across_timesteps and sum_over_timesteps cannot be set to True "
                         "at same time.")
    if average_across_batch and sum_over_batch:
        raise ValueError("average_across_batch and sum_over_batch cannot be set to True at same "
                         "time.")
    logits, targets = convert_to_tensor(logits), convert_to_tensor(targets)
    weights = convert_to_tensor(weights, dtype=logits.dtype)
    if logits.shape.ndims is not None and logits.shape.ndims != 3:
        raise ValueError("Logits must be a [batch_size x sequence_length x logits] tensor")
    if targets.shape.ndims is not None and targets.shape.ndims != 2:
        raise ValueError("Targets must be a [batch_size x sequence_length] tensor")
    with name_scope(name, "sequence_loss"):
        classes = shape_ops.shape(logits)[2]
        flat_logits = shape_ops.reshape(logits, shape_ops.stack([-1, classes]))
        flat_targets = shape_ops.reshape(targets, [-1])
        crossent = _crossent(flat_targets, flat_logits, softmax_loss_function)
        crossent = crossent * shape_ops.reshape(weights, [-1])
        batch_and_time = shape_ops.shape(targets)
        if average_across_timesteps and average_across_batch:
            return math_ops.reduce_sum(crossent) / (math_ops.reduce_sum(weights) + 1e-12)
        if sum_over_timesteps and sum_over_batch:
            return math_ops.reduce_sum(crossent) / (
                math_ops.cast(math_ops.count_nonzero(weights), crossent.dtype) + 1e-12)
        crossent = shape_ops.reshape(crossent, batch_and_time)
        if average_across_timesteps or average_across_batch:
            axis = 0 if average_across_batch else 1
            return (math_ops.reduce_sum(crossent, axis=axis)
                    / (math_ops.reduce_sum(weights, axis=axis) + 1e-12))
        if sum_over_timesteps or sum_over_batch:
            axis = 0 if sum_over_batch else 1
            nonzero = math_ops.cast(math_ops.count_nonzero(weights, axis=axis), crossent.dtype)
            return math_ops.reduce_sum(crossent, axis=axis) / (nonzero + 1e-12)
        return crossent


def sequence_loss_by_example(logits, targets, weights, average_across_timesteps=True,
                             softmax_loss_function=None, name=None):
    """Per-example weighted cross entropy over lists of per-timestep logits [batch, classes],
    targets [batch] and weights [batch] (`tf.contrib.legacy_seq2seq`)."""
    if len(targets) != len(logits) or len(weights) != len(logits):
        raise ValueError(f"Lengths of logits, weights, and targets must be the same "
                         f"{len(logits)}, {len(weights)}, {len(targets)}.")
    with name_scope(name, "sequence_loss_by_example"):
        terms = [_crossent(convert_to_tensor(t), convert_to_tensor(lg), softmax_loss_function)
                 * convert_to_tensor(w) for lg, t, w in zip(logits, targets, weights)]
        total = math_ops.add_n(terms)
        if average_across_timesteps:
            total = total / (math_ops.add_n([convert_to_tensor(w) for w in weights]) + 1e-12)
        return total


def legacy_sequence_loss(logits, targets, weights, average_across_timesteps=True,
                         average_across_batch=True, softmax_loss_function=None, name=None):
    """The summed (or batch-averaged) `sequence_loss_by_example` (`legacy_seq2seq.sequence_loss`)."""
    with name_scope(name, "sequence_loss"):
        cost = math_ops.reduce_sum(sequence_loss_by_example(
            logits, targets, weights, average_across_timesteps=average_across_timesteps,
            softmax_loss_function=softmax_loss_function))
        if average_across_batch:
            batch = shape_ops.shape(convert_to_tensor(targets[0]))[0]
            return cost / math_ops.cast(batch, cost.dtype)
        return cost


__all__ = ["sequence_loss", "sequence_loss_by_example", "legacy_sequence_loss"]
