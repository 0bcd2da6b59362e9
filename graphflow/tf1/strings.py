"""`tf.strings`: the TF1 string namespace (ops in graphflow/ops/string_ops.py)."""

from graphflow.ops.string_ops import (
    as_string,
    length,
    lower,
    regex_full_match,
    split,
    string_join,
    to_hash_bucket,
    to_hash_bucket_fast,
    to_hash_bucket_strong,
    to_number,
    upper,
)

join = string_join

__all__ = ["as_string", "join", "length", "lower", "regex_full_match", "split", "to_number",
           "to_hash_bucket", "to_hash_bucket_fast", "to_hash_bucket_strong",
           "upper"]
