"""graphflow/ops/ctc_ops.py: tf.nn.ctc_loss (and its gradient), ctc_greedy_decoder and
ctc_beam_search_decoder against TensorFlow's numbers (recorded in data/tf_ctc_reference.json by
data/make_tf_ctc_reference.py; compared live where GRAPHFLOW_TF_PYTHON is set), TF's errors, and
the search against an exhaustive one."""

import json
import pathlib
import sys

import numpy as np
import pytest

import graphflow as tf

DATA = pathlib.Path(__file__).parent / "data"
sys.path.insert(0, str(DATA))
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
from ctc_program import ctc_program  # noqa: E402
from tf_reference import run_in_tensorflow, tf_python  # noqa: E402

RECORDED = json.loads((DATA / "tf_ctc_reference.json").read_text())["outputs"]
needs_tf = pytest.mark.skipif(tf_python() is None, reason="TensorFlow is not installed (set "
                                                          "GRAPHFLOW_TF_PYTHON to compare with it)")


def _check(got, want, name):
    got = np.asarray(got)
    assert got.shape == want.shape, (name, got.shape, want.shape)
    assert got.dtype == want.dtype, (name, got.dtype, want.dtype)
    # TF runs the recursions in float32 (log1pf, expf); graphflow in float64
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=2e-6, err_msg=name)


def test_ctc_program_gives_tensorflows_recorded_numbers():
    with tf.Graph().as_default():
        got = ctc_program(tf, np)
    assert set(got) == set(RECORDED)
    for name, record in RECORDED.items():
        want = np.array(record["values"], dtype=record["dtype"]).reshape(record["shape"])
        _check(got[name], want, name)


@needs_tf
def test_ctc_program_against_tensorflow_live():
    want = run_in_tensorflow([("r", ctc_program, {})])["r"]
    with tf.Graph().as_default():
        got = ctc_program(tf, np)
    for name, value in want.items():
        _check(got[name], value, name)


def beam_program(tf, np, seed, frames, classes, width, paths, merge):
    """The beam search decoder on random logits [frames, 3 entries, classes] and lengths."""
    rng = np.random.RandomState(seed)
    logits = (rng.randn(frames, 3, classes) * 2).astype(np.float32)
    lengths = rng.randint(1, frames + 1, size=3).astype(np.int32)
    with tf.Graph().as_default():
        decoded, log_p = tf.nn.ctc_beam_search_decoder(logits, lengths, beam_width=width,
                                                       top_paths=paths, merge_repeated=merge)
        with tf.Session() as sess:
            dense, scores = sess.run([[tf.sparse_tensor_to_dense(d, -1) for d in decoded], log_p])
    return {"log_p": scores, **{f"path{j}": d for j, d in enumerate(dense)}}


_BEAMS = [dict(seed=0, frames=6, classes=4, width=3, paths=2, merge=True),
          dict(seed=1, frames=10, classes=6, width=10, paths=4, merge=False),
          dict(seed=2, frames=20, classes=8, width=100, paths=5, merge=True),
          dict(seed=3, frames=30, classes=10, width=16, paths=3, merge=True),
          dict(seed=4, frames=15, classes=3, width=1, paths=1, merge=False),
          # narrow beams over long inputs: many evictions, near ties decided in float32
          *[dict(seed=s, frames=40, classes=6, width=2, paths=2, merge=True) for s in range(5, 9)],
          dict(seed=9, frames=40, classes=12, width=5, paths=3, merge=False)]


@needs_tf
def test_beam_search_against_tensorflow_live():
    want = run_in_tensorflow([(str(i), beam_program, kw) for i, kw in enumerate(_BEAMS)])
    for i, kwargs in enumerate(_BEAMS):
        got = beam_program(tf, np, **kwargs)
        for name, value in want[str(i)].items():
            _check(got[name], value, f"{kwargs}: {name}")


def _exhaustive(logits, length, top):
    """The `top` labelings of greatest probability over every alignment of one entry."""
    log_p = logits - np.log(np.exp(logits).sum(axis=1, keepdims=True))
    blank = logits.shape[1] - 1
    sums = {}
    for path in np.ndindex(*([logits.shape[1]] * length)):
        label = tuple(c for i, c in enumerate(path) if c != blank and (i == 0 or c != path[i - 1]))
        sums[label] = np.logaddexp(sums.get(label, -np.inf), log_p[np.arange(length), path].sum())
    return sorted(sums.items(), key=lambda kv: -kv[1])[:top]


def test_a_beam_wide_enough_finds_the_exact_best_labelings():
    rng = np.random.default_rng(7)
    logits = rng.normal(size=(5, 2, 3)) * 1.5   # 3 ** 5 alignments, 63 possible prefixes
    decoded, log_p = tf.nn.ctc_beam_search_decoder(logits, [5, 4], beam_width=64, top_paths=4,
                                                   merge_repeated=False)
    with tf.Session() as sess:
        dense, scores = sess.run([[tf.sparse_tensor_to_dense(d, -1) for d in decoded], log_p])
    for b, length in enumerate([5, 4]):
        best = _exhaustive(logits[:, b], length, 4)
        for j, (label, score) in enumerate(best):
            assert tuple(c for c in dense[j][b] if c >= 0) == label
            np.testing.assert_allclose(scores[b, j], score, rtol=1e-9)


def test_greedy_decoder_blank_index_and_static_shapes():
    logits = np.log(np.array([[[0.1, 0.7, 0.2]], [[0.6, 0.3, 0.1]], [[0.6, 0.3, 0.1]],
                              [[0.2, 0.2, 0.6]]]))
    (merged,), neg_sum = tf.nn.ctc_greedy_decoder(logits, [4])
    (blank0,), _ = tf.nn.ctc_greedy_decoder(logits, [4], blank_index=0)
    assert neg_sum.shape.as_list() == [1, 1] and merged.indices.shape.as_list() == [None, 2]
    with tf.Session() as sess:
        got, got_blank0, total = sess.run([merged.values, blank0.values, neg_sum])
    assert got.tolist() == [1, 0]            # class 2 is the blank; the repeated 0 is merged
    assert got_blank0.tolist() == [1, 2]     # class 0 is the blank
    np.testing.assert_allclose(total, [[-np.log([0.7, 0.6, 0.6, 0.6]).sum()]])


def _loss(labels, values=None, lengths=(3,), frames=3, **kwargs):
    logits = np.zeros((frames, len(lengths), 4), np.float32)
    indices = [[b, i] for b, seq in enumerate(labels) for i in range(len(seq))]
    sparse = tf.SparseTensor(np.array(indices, np.int64).reshape(-1, 2),
                             np.array([v for seq in labels for v in seq], np.int32),
                             [len(lengths), 4])
    return tf.nn.ctc_loss(sparse, logits, list(lengths), **kwargs)


@pytest.mark.parametrize("labels,lengths,message", [
    ([[0, 1, 2, 0]], (3,), "Not enough time for target transition sequence (required: 4, "
                           "available: 3)"),
    ([[0], []], (3, 3), "Labels length is zero in batch 1"),
    ([[0, 3, 1]], (3,), "Saw a non-null label (index >= num_classes - 1) following a null label"),
    ([[0, -1]], (3,), "All labels must be nonnegative integers"),
])
def test_ctc_loss_refuses_what_tensorflow_refuses(labels, lengths, message):
    loss = _loss(labels, lengths=lengths)
    with tf.Session() as sess, pytest.raises(tf.errors.InvalidArgumentError) as err:
        sess.run(loss)
    assert message in str(err.value) and "CTCLoss" in str(err.value)


def test_ctc_loss_labels_after_a_null_label_end_the_sequence_and_no_path_gives_inf():
    with tf.Session() as sess:
        ended, direct = sess.run([_loss([[0, 1, 3]]), _loss([[0, 1]])])
        # "0 0" needs a blank between the two labels: 3 frames, but only 2 of them
        impossible = sess.run(_loss([[0, 0]], frames=2, lengths=(2,)))
    np.testing.assert_allclose(ended, direct)
    assert np.isinf(impossible).all() and impossible[0] > 0


def test_ctc_loss_needs_a_sparse_tensor_and_matching_shapes():
    with pytest.raises(TypeError, match="Expected argument `labels` to be a SparseTensor"):
        tf.nn.ctc_loss([[0, 1]], np.zeros((3, 1, 4), np.float32), [3])
    labels = tf.SparseTensor(np.array([[0, 0]], np.int64), np.array([1], np.int32), [2, 1])
    with pytest.raises(ValueError, match="sequence_length's size"):
        tf.nn.ctc_loss(labels, np.zeros((3, 2, 4), np.float32), [3, 3, 3])
    with pytest.raises(ValueError, match="rank 3"):
        tf.nn.ctc_loss(labels, np.zeros((3, 4), np.float32), [3, 3])
    int64_labels = tf.SparseTensor(np.array([[0, 0]], np.int64), np.array([1], np.int64), [2, 1])
    with pytest.raises(TypeError, match="labels_values"):
        tf.nn.ctc_loss(int64_labels, np.zeros((3, 2, 4), np.float32), [3, 3])


def test_ctc_loss_has_no_second_derivative():
    x = tf.constant(np.random.default_rng(0).normal(size=(4, 1, 3)))
    labels = tf.SparseTensor(np.array([[0, 0]], np.int64), np.array([1], np.int32), [1, 1])
    (grad,) = tf.gradients(tf.reduce_sum(tf.nn.ctc_loss(labels, x, [4])), x)
    with pytest.raises(LookupError, match="second derivative of ctc_loss"):
        tf.gradients(tf.reduce_sum(grad * grad), x)


def test_ctc_loss_float16_logits_give_a_float16_loss():
    logits = tf.constant(np.random.default_rng(1).normal(size=(4, 1, 3)).astype(np.float16))
    labels = tf.SparseTensor(np.array([[0, 0]], np.int64), np.array([1], np.int32), [1, 1])
    loss = tf.nn.ctc_loss(labels, logits, [4])
    (grad,) = tf.gradients(loss, logits)
    with tf.Session() as sess:
        got, g = sess.run([loss, grad])
    assert got.dtype == np.float16 and g.dtype == np.float16 and np.isfinite(got).all()


def test_beam_search_refuses_more_paths_than_its_beam():
    with pytest.raises(ValueError, match=r"top_paths \(3\) must be <= beam_width \(2\)"):
        tf.nn.ctc_beam_search_decoder(np.zeros((2, 1, 3), np.float32), [2], beam_width=2,
                                      top_paths=3)
    # one frame of two classes holds at most two prefixes ("" and "0"): three are too many
    decoded, _ = tf.nn.ctc_beam_search_decoder(np.zeros((1, 1, 2), np.float32), [1],
                                               beam_width=5, top_paths=3)
    with tf.Session() as sess, pytest.raises(tf.errors.InvalidArgumentError,
                                             match="Less leaves in the beam search"):
        sess.run(decoded[0].values)


def test_beam_search_merge_repeated_merges_labels_across_blanks_as_tensorflow():
    """TF1's quirk, recorded from TensorFlow 2.21: the best path "1 - 1" reads out as [1]."""
    p = np.array([[0.1, 0.8, 0.1], [0.1, 0.1, 0.8], [0.1, 0.8, 0.1]], np.float32)
    logits = np.log(p)[:, None, :]
    merged, _ = tf.nn.ctc_beam_search_decoder(logits, [3], beam_width=5)
    raw, _ = tf.nn.ctc_beam_search_decoder(logits, [3], beam_width=5, merge_repeated=False)
    with tf.Session() as sess:
        got_merged, got_raw = sess.run([merged[0].values, raw[0].values])
    assert got_merged.tolist() == [1] and got_raw.tolist() == [1, 1]
