"""Sampled losses of `tf.nn`: `nce_loss` and `sampled_softmax_loss`, as TF1 computes them.

Both score each example's true classes and `num_sampled` classes drawn by a candidate sampler
(log-uniform by default, or `sampled_values` given by the caller) against the rows of `weights`
(one matrix or a list of partitions) and `biases`, subtract log(expected count) from each logit,
and then take a sigmoid (NCE) or softmax cross-entropy. `remove_accidental_hits` pushes a sampled
class that equals one of the example's true classes to -FLT_MAX.
"""

import numpy as np

from graphflow.framework import dtypes
from graphflow.framework.graph import name_scope
from graphflow.ops import math_ops, nn_ops, shape_ops, slice_ops
from graphflow.ops.candidate_sampling_ops import log_uniform_candidate_sampler
from graphflow.ops.core_ops import convert_to_tensor
from graphflow.ops.gradient_ops import stop_gradient
from graphflow.tf1.embedding_ops import embedding_lookup

_FLOAT32_MAX = float(np.finfo(np.float32).max)


def _compute_sampled_logits(weights, biases, labels, inputs, num_sampled, num_classes, num_true,
                            sampled_values, subtract_log_q, remove_accidental_hits,
                            partition_strategy, name, seed=None):
    weights = list(weights) if isinstance(weights, (list, tuple)) else [weights]
    with name_scope(name, "compute_sampled_logits"):
        inputs = convert_to_tensor(inputs)
        labels = convert_to_tensor(labels)
        if labels.dtype != dtypes.int64:
            labels = math_ops.cast(labels, dtypes.int64)
        labels_flat = shape_ops.reshape(labels, [-1])
        if sampled_values is None:
            sampled_values = log_uniform_candidate_sampler(
                true_classes=labels, num_true=num_true, num_sampled=num_sampled, unique=True,
                range_max=num_classes, seed=seed)
        sampled, true_expected_count, sampled_expected_count = (
            stop_gradient(convert_to_tensor(s)) for s in sampled_values)
        sampled = math_ops.cast(sampled, dtypes.int64)
        num_true_rows = shape_ops.shape(labels_flat)[:1]
        all_ids = shape_ops.concat([labels_flat, sampled], 0)
        all_w = embedding_lookup(weights, all_ids, partition_strategy=partition_strategy)
        if all_w.dtype != inputs.dtype:
            all_w = math_ops.cast(all_w, inputs.dtype)
        true_w = slice_ops.slice(all_w, [0, 0], shape_ops.concat([num_true_rows, [-1]], 0))
        sampled_w = slice_ops.slice(all_w, shape_ops.concat([num_true_rows, [0]], 0), [-1, -1])
        sampled_logits = math_ops.matmul(inputs, sampled_w, transpose_b=True)
        all_b = embedding_lookup(biases, all_ids, partition_strategy=partition_strategy)
        if all_b.dtype != inputs.dtype:
            all_b = math_ops.cast(all_b, inputs.dtype)
        true_b = slice_ops.slice(all_b, [0], num_true_rows)
        sampled_b = slice_ops.slice(all_b, num_true_rows, [-1])
        dim = shape_ops.shape(true_w)[1:2]
        true_w = shape_ops.reshape(true_w, shape_ops.concat([[-1, num_true], dim], 0))
        row_dots = math_ops.multiply(shape_ops.expand_dims(inputs, 1), true_w)
        true_logits = math_ops.reduce_sum(row_dots, axis=2)
        true_logits = true_logits + shape_ops.reshape(true_b, [-1, num_true])
        sampled_logits = sampled_logits + sampled_b
        if remove_accidental_hits:
            hits = math_ops.equal(shape_ops.expand_dims(labels, 2),
                                  shape_ops.reshape(sampled, [1, 1, -1]))
            hit = math_ops.cast(math_ops.reduce_any(hits, axis=1), sampled_logits.dtype)
            sampled_logits = sampled_logits + hit * (-_FLOAT32_MAX)
        if subtract_log_q:
            true_logits = true_logits - math_ops.log(
                math_ops.cast(true_expected_count, true_logits.dtype))
            sampled_logits = sampled_logits - math_ops.log(
                math_ops.cast(sampled_expected_count, sampled_logits.dtype))
        out_logits = shape_ops.concat([true_logits, sampled_logits], 1)
        out_labels = shape_ops.concat([shape_ops.ones_like(true_logits) / float(num_true),
                                       shape_ops.zeros_like(sampled_logits)], 1)
        return out_logits, out_labels


def nce_loss(weights, biases, labels, inputs, num_sampled, num_classes, num_true=1,
             sampled_values=None, remove_accidental_hits=False, partition_strategy="mod",
             name="nce_loss"):
    """Noise-contrastive estimation loss per example: `weights` [num_classes, dim] (or its
    partitions), `biases` [num_classes], `labels` int [batch, num_true], `inputs` [batch, dim]."""
    logits, labels = _compute_sampled_logits(
        weights, biases, labels, inputs, num_sampled, num_classes, num_true, sampled_values,
        True, remove_accidental_hits, partition_strategy, name)
    losses = nn_ops.sigmoid_cross_entropy_with_logits(labels=labels, logits=logits,
                                                      name="sampled_losses")
    return math_ops.reduce_sum(losses, axis=1)


def sampled_softmax_loss(weights, biases, labels, inputs, num_sampled, num_classes, num_true=1,
                         sampled_values=None, remove_accidental_hits=True,
                         partition_strategy="mod", name="sampled_softmax_loss", seed=None):
    """Softmax cross-entropy over the true and the sampled classes, per example."""
    logits, labels = _compute_sampled_logits(
        weights, biases, labels, inputs, num_sampled, num_classes, num_true, sampled_values,
        True, remove_accidental_hits, partition_strategy, name, seed=seed)
    labels = stop_gradient(labels, name="labels_stop_gradient")
    return nn_ops.softmax_cross_entropy_with_logits_v2(labels=labels, logits=logits)


__all__ = ["nce_loss", "sampled_softmax_loss"]
