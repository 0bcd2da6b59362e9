"""ONNX string ops as graphflow string ops: StringNormalizer and RegexFullMatch (as
`tf.strings.regex_full_match`: Python's `re` syntax, which agrees with ONNX's RE2 on the common
constructs).

StringNormalizer([C] or [1, C] strings) drops the elements equal to a stopword (compared ignoring
case unless `is_case_sensitive`), then changes the case of the rest (`case_change_action` LOWER /
UPPER / NONE); when every element is dropped the output is one empty string ([1] or [1, 1]).
Stopwords are matched by `tf.strings.regex_full_match` against an alternation of the escaped
words, the kept elements selected by `tf.boolean_mask`, and the case changed by
`tf.strings.lower` / `upper` with UTF-8 rules (graphflow's string ops are locale-free: the
`locale` attribute is not used).
"""

import re

import graphflow as tf
from graphflow.interop.onnx.import_ops import _rank, builder


def _text(value):
    return value.decode("utf-8") if isinstance(value, bytes) else value


@builder("StringNormalizer")
def _string_normalizer(ctx, node, inputs):
    a = ctx.attrs(node)
    x = inputs[0]
    rank = _rank(x)
    if rank not in (1, 2) or (rank == 2 and x.shape.as_list()[0] not in (1, None)):
        raise ValueError(f"StringNormalizer takes [C] or [1, C] strings, got shape {x.shape}")
    action = _text(a.get("case_change_action", "NONE"))
    if action not in ("NONE", "LOWER", "UPPER"):
        raise ValueError(f"case_change_action must be NONE, LOWER or UPPER, got {action!r}")
    stopwords = [_text(w) for w in a.get("stopwords", [])]
    y = x
    if stopwords:
        pattern = "(?:" + "|".join(re.escape(w) for w in stopwords) + ")"
        if not a.get("is_case_sensitive", 0):
            pattern = "(?i)" + pattern
        row = x if rank == 1 else x[0]
        keep = tf.logical_not(tf.strings.regex_full_match(row, pattern))
        y = tf.boolean_mask(x, keep, axis=rank - 1)
        # one empty string when nothing is left: append it, keep max(count, 1) elements
        blank = tf.constant([""] if rank == 1 else [[""]])
        padded = tf.concat([y, blank], axis=rank - 1)
        count = tf.maximum(tf.shape(y)[rank - 1], 1)
        y = tf.slice(padded, [0] * rank, tf.stack([count] if rank == 1 else [1, count]))
    if action == "LOWER":
        y = tf.strings.lower(y, encoding="utf-8")
    elif action == "UPPER":
        y = tf.strings.upper(y, encoding="utf-8")
    return [tf.identity(y)]


@builder("RegexFullMatch")
def _regex_full_match(ctx, node, inputs):
    return [tf.strings.regex_full_match(inputs[0], _text(ctx.attrs(node)["pattern"]))]
