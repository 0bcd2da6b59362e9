"""Gradient rules for the sorting, searching and set ops: none of Unique, UniqueWithCounts,
ListDiff, LowerBound, UpperBound is differentiable (TF1 registers no gradient for them; `tf.sort`
differentiates through TopKV2)."""

from graphflow.ops.registry import no_gradient

for _op_type in ("Unique", "UniqueWithCounts", "ListDiff", "LowerBound", "UpperBound"):
    no_gradient(_op_type)
