"""Cases for the CTC ops (CTCLoss, CTCGreedyDecoder, CTCBeamSearchDecoder) and EditDistance.

The references enumerate every alignment of a few frames (num_classes ** max_time paths): the CTC
loss is -log of the summed probability of the paths that collapse to the label sequence, and a
beam wide enough to hold every prefix finds the labelings of greatest summed probability. They
share nothing with the kernels' recursions."""

import itertools

import numpy as np

import graphflow as tf
from tests.op_cases import OpCase, rand


def _log_softmax(x):
    m = x.max(axis=-1, keepdims=True)
    return x - m - np.log(np.exp(x - m).sum(axis=-1, keepdims=True))


def _collapse(path, blank, merge=True):
    out, previous = [], None
    for c in path:
        if c != blank and not (merge and c == previous):
            out.append(c)
        previous = c
    return tuple(out)


def _labelings(logits, length):
    """{labeling: log probability} of one entry ([time, classes]) over all alignments."""
    log_p = _log_softmax(logits.astype(np.float64))[:length]
    blank = logits.shape[-1] - 1
    sums = {}
    for path in itertools.product(range(logits.shape[-1]), repeat=length):
        score = log_p[np.arange(length), list(path)].sum()
        key = _collapse(path, blank)
        sums[key] = np.logaddexp(sums.get(key, -np.inf), score)
    return sums


def _labels_per_entry(indices, values, batch):
    return [tuple(int(v) for v in values[indices[:, 0] == b]) for b in range(batch)]


def _ctc_loss_ref(logits, indices, values, seq_len):
    labels = _labels_per_entry(indices, values, logits.shape[1])
    return np.array([-_labelings(logits[:, b], seq_len[b]).get(labels[b], -np.inf)
                     for b in range(logits.shape[1])])


def _sparse(paths):
    ix = [[b, i] for b, p in enumerate(paths) for i in range(len(p))]
    vals = [c for p in paths for c in p]
    return (np.array(ix, np.int64).reshape(-1, 2), np.array(vals, np.int64),
            np.array([len(paths), max(len(p) for p in paths)], np.int64))


def _greedy_ref(logits, seq_len, merge=True):
    best = logits.argmax(axis=2)
    blank = logits.shape[2] - 1
    paths = [_collapse(best[:seq_len[b], b], blank, merge) for b in range(logits.shape[1])]
    neg = np.array([[-logits[:seq_len[b], b].max(axis=1).sum()] for b in range(logits.shape[1])])
    return (*_sparse(paths), neg)


def _beam_ref(top):
    def reference(logits, seq_len):
        best = []
        for b in range(logits.shape[1]):
            ranked = sorted(_labelings(logits[:, b], seq_len[b]).items(), key=lambda kv: -kv[1])
            best.append(ranked[:top])
        # TF reads a path out with equal neighbouring labels merged (merge_repeated)
        parts = [_sparse([_collapse(best[b][j][0], -1) for b in range(len(best))])
                 for j in range(top)]
        log_p = np.array([[score for _, score in entry] for entry in best])
        return (*[p[0] for p in parts], *[p[1] for p in parts], *[p[2] for p in parts], log_p)
    return reference


def _ctc_loss_build(**kwargs):
    def build(logits, indices, values, seq_len):
        labels = tf.SparseTensor(indices, values, [3, 4])
        return tf.nn.ctc_loss(labels, logits, seq_len, **kwargs)
    return build


def _greedy_build(merge=True):
    def build(logits, seq_len):
        (decoded,), neg_sum = tf.nn.ctc_greedy_decoder(logits, seq_len, merge_repeated=merge)
        return decoded.indices, decoded.values, decoded.dense_shape, neg_sum
    return build


def _beam_build(width, top):
    def build(logits, seq_len):
        decoded, log_p = tf.nn.ctc_beam_search_decoder(logits, seq_len, beam_width=width,
                                                       top_paths=top)
        return (*[d.indices for d in decoded], *[d.values for d in decoded],
                *[d.dense_shape for d in decoded], log_p)
    return build


_INDICES = np.array([[0, 0], [0, 1], [1, 0], [2, 0], [2, 1]], np.int64)
_VALUES = np.array([1, 0, 1, 0, 0], np.int32)   # "b a", "b", "a a" (a repeat needs a blank)
_LENGTHS = np.array([4, 3, 4], np.int32)
_LOGITS = rand(4, 3, 3, seed=11)


def _edit_build(normalize):
    def build(h_ix, h_val, t_ix, t_val):
        hyp = tf.SparseTensor(h_ix, h_val, [3, 2, 4])
        truth = tf.SparseTensor(t_ix, t_val, [3, 2, 3])
        return tf.edit_distance(hyp, truth, normalize=normalize)
    return build


def _edit_ref(normalize):
    def levenshtein(a, b):
        d = np.arange(len(b) + 1)
        for i, x in enumerate(a, 1):
            prev, d[0] = d.copy(), i
            for j, y in enumerate(b, 1):
                d[j] = min(prev[j] + 1, d[j - 1] + 1, prev[j - 1] + (x != y))
        return d[-1]

    def reference(h_ix, h_val, t_ix, t_val):
        out = np.zeros((3, 2), np.float32)
        for key in np.ndindex(3, 2):
            h = [v for i, v in zip(h_ix, h_val) if tuple(i[:2]) == key]
            t = [v for i, v in zip(t_ix, t_val) if tuple(i[:2]) == key]
            if not h and not t:
                continue
            dist = levenshtein(t, h) if t else len(h)
            out[key] = (np.float32(dist) / np.float32(len(t)) if t else np.inf) if normalize \
                else dist
        return out
    return reference


_H_IX = np.array([[0, 0, 0], [0, 0, 1], [0, 1, 0], [1, 0, 0], [1, 0, 3], [2, 1, 2]], np.int64)
_H_VAL = np.array([1, 2, 3, 4, 5, 6], np.int32)
_T_IX = np.array([[0, 0, 0], [0, 0, 1], [0, 0, 2], [0, 1, 0], [1, 0, 0], [1, 1, 1]], np.int64)
_T_VAL = np.array([1, 3, 2, 3, 5, 7], np.int32)

CASES = [
    OpCase("CTCLoss", _ctc_loss_build(), [_LOGITS, _INDICES, _VALUES, _LENGTHS], _ctc_loss_ref,
           grad_inputs=[0], second_order=False),
    OpCase("CTCLoss", _ctc_loss_build(time_major=False),
           [np.transpose(_LOGITS, (1, 0, 2)).astype(np.float32), _INDICES, _VALUES, _LENGTHS],
           lambda x, i, v, s: _ctc_loss_ref(np.transpose(x, (1, 0, 2)), i, v, s),
           grad_inputs=[0], second_order=False, grad_rtol=1e-3, grad_atol=1e-4,
           name="CTCLoss[batch-major float32]"),
    OpCase("CTCGreedyDecoder", _greedy_build(), [rand(5, 3, 4, seed=3),
                                                 np.array([5, 2, 4], np.int32)],
           _greedy_ref, grad=False),
    OpCase("CTCGreedyDecoder", _greedy_build(merge=False),
           [np.repeat(rand(3, 2, 3, seed=4), 2, axis=0), np.array([6, 5], np.int32)],
           lambda x, s: _greedy_ref(x, s, merge=False), grad=False,
           name="CTCGreedyDecoder[merge_repeated=False]"),
    OpCase("CTCBeamSearchDecoder", _beam_build(width=40, top=3),
           [rand(4, 2, 3, seed=5), np.array([4, 3], np.int32)], _beam_ref(3), grad=False),
    OpCase("EditDistance", _edit_build(True), [_H_IX, _H_VAL, _T_IX, _T_VAL], _edit_ref(True),
           grad=False),
    OpCase("EditDistance", _edit_build(False), [_H_IX, _H_VAL, _T_IX, _T_VAL], _edit_ref(False),
           grad=False, name="EditDistance[normalize=False]"),
]
