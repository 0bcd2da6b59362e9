"""Random ops: distributions (statistical checks with wide, fixed-seed margins), TF1 seed semantics
(graph seed + op seed, replay in a new session, new values every run) and that they are never
treated as constants."""

import numpy as np
import pytest

import graphflow as tf
from graphflow.framework.errors import InvalidArgumentError
from graphflow.ops import registry
from graphflow.ops.registry import OpBuildError

RANDOM_TYPES = ("RandomStandardNormal", "RandomUniform", "RandomUniformInt", "TruncatedNormal",
                "RandomShuffle", "Multinomial")


def _run(fetches, feed=None):
    with tf.Session() as sess:
        return sess.run(fetches, feed)


# ---------------------------------------------------------------- distributions
def test_random_normal_moments_and_dtype():
    a, b = _run([tf.random_normal([200, 100], mean=3.0, stddev=2.0, seed=1),
                 tf.random_normal([10], dtype=tf.float64, seed=2)])
    assert a.dtype == np.float32 and a.shape == (200, 100) and b.dtype == np.float64
    assert abs(a.mean() - 3.0) < 0.05 and abs(a.std() - 2.0) < 0.05
    assert abs(np.mean(((a - 3) / 2) ** 3)) < 0.1  # symmetric


def test_truncated_normal_stays_within_two_stddev():
    a = _run(tf.truncated_normal([100000], mean=-1.0, stddev=0.5, seed=3))
    assert a.min() >= -2.0 and a.max() <= 0.0
    assert abs(a.mean() + 1.0) < 0.01
    # the std of a standard normal truncated to [-2, 2] is 0.8796
    assert abs(a.std() / 0.5 - 0.8796) < 0.01


def test_random_uniform_float_range_and_mean():
    a, h = _run([tf.random_uniform([50000], minval=-2.0, maxval=3.0, seed=4),
                 tf.random_uniform([1000], dtype=tf.float16, seed=5)])
    assert a.min() >= -2.0 and a.max() < 3.0
    assert abs(a.mean() - 0.5) < 0.05
    assert h.dtype == np.float16 and h.min() >= 0 and h.max() < 1


def test_random_uniform_int_covers_its_half_open_range():
    a, b = _run([tf.random_uniform([5000], minval=-3, maxval=4, dtype=tf.int32, seed=6),
                 tf.random_uniform([3], 0, 2**40, dtype=tf.int64, seed=7)])
    assert a.dtype == np.int32 and set(np.unique(a)) == set(range(-3, 4))
    assert b.dtype == np.int64 and b.max() < 2**40
    counts = np.bincount(a + 3)
    assert counts.min() > 5000 / 7 * 0.8


def test_shape_may_be_computed_at_run_time():
    n = tf.placeholder(tf.int32, [])
    shape = tf.placeholder(tf.int32, [2])
    x = tf.placeholder(tf.float32, [None, 3])
    from_list = tf.random_normal([n, 4])
    from_tensor = tf.random_uniform(shape)
    like_x = tf.truncated_normal(tf.shape(x))
    assert from_list.shape.as_list() == [None, 4]
    assert from_tensor.shape.as_list() == [None, None]
    assert like_x.shape.as_list() == [None, 3]
    a, b, c = _run([from_list, from_tensor, like_x],
                   {n: 5, shape: [2, 7], x: np.zeros((6, 3), np.float32)})
    assert a.shape == (5, 4) and b.shape == (2, 7) and c.shape == (6, 3)


# ---------------------------------------------------------------- seeds
def _program(graph_seed, op_seed):
    tf.reset_default_graph()
    if graph_seed is not None:
        tf.set_random_seed(graph_seed)
    return [tf.random_normal([4], seed=op_seed), tf.random_uniform([4], seed=op_seed),
            tf.truncated_normal([4], seed=op_seed),
            tf.random_uniform([4], 0, 1000, dtype=tf.int64, seed=op_seed)]


def _two_runs(fetches):
    with tf.Session() as sess:
        return sess.run(fetches), sess.run(fetches)


@pytest.mark.parametrize("graph_seed, op_seed", [(5, None), (None, 9), (5, 9)])
def test_seeded_programs_replay_in_a_new_session_and_graph(graph_seed, op_seed):
    first, second = _two_runs(_program(graph_seed, op_seed))
    for a, b in zip(first, second):
        assert not np.array_equal(a, b), "each run must draw new values"
    again_first, again_second = _two_runs(_program(graph_seed, op_seed))
    for a, b in zip(first + second, again_first + again_second):
        np.testing.assert_array_equal(a, b)


def test_same_graph_new_session_replays_with_op_seed():
    y = tf.random_normal([3], seed=11)
    np.testing.assert_array_equal(_run(y), _run(y))


def test_unseeded_ops_differ_between_sessions():
    fetches = _program(None, None)
    first, other = _run(fetches), _run(fetches)
    for a, b in zip(first, other):
        assert not np.array_equal(a, b)


def test_different_seeds_give_different_streams():
    tf.set_random_seed(1)
    a, b = tf.random_normal([6]), tf.random_normal([6])  # same graph seed, different op counts
    c, d = tf.random_normal([6], seed=1), tf.random_normal([6], seed=2)
    va, vb, vc, vd = _run([a, b, c, d])
    assert not np.array_equal(va, vb) and not np.array_equal(vc, vd)
    tf.reset_default_graph()
    tf.set_random_seed(2)
    e = tf.random_normal([6], seed=1)
    assert not np.array_equal(_run(e), vc), "the graph seed takes part in the op's seed"


def test_graph_seed_and_op_seed_attrs_follow_tf1_get_seed():
    assert tf.get_seed(None) == (None, None)
    assert tf.get_seed(3) == (87654321, 3)
    tf.set_random_seed(0)
    assert tf.get_seed(0) == (0, 2**31 - 1)  # (0, 0) would mean "unseeded"
    tf.constant(1.0)
    tf.constant(2.0)
    assert tf.get_seed(None) == (0, 2)  # the op seed is the graph's op count


# ---------------------------------------------------------------- flags and errors
def test_random_ops_are_flagged_random_and_never_foldable():
    for op_type in RANDOM_TYPES:
        op_def = registry.lookup(op_type)
        assert op_def.random and not op_def.foldable
        assert op_def.no_gradient


def test_two_identical_unseeded_ops_draw_independently():
    a, b = tf.random_uniform([1000]), tf.random_uniform([1000])
    va, vb = _run([a, b])
    assert not np.array_equal(va, vb)


def test_argument_errors():
    with pytest.raises(ValueError, match="needs maxval"):
        tf.random_uniform([3], dtype=tf.int32)
    with pytest.raises(ValueError, match="floating point"):
        tf.random_normal([3], dtype=tf.int32)
    with pytest.raises(OpBuildError, match="negative dimension"):
        tf.random_normal([3, -2])
    with pytest.raises(OpBuildError, match="1-D"):
        tf.random_normal(tf.constant([[2, 2]]))


def test_run_time_errors_name_the_op():
    hi = tf.placeholder(tf.int32, [])
    y = tf.random_uniform([3], minval=5, maxval=hi, dtype=tf.int32, name="draw")
    shape = tf.placeholder(tf.int32, [None])
    z = tf.random_normal(shape, name="normal")
    with tf.Session() as sess:
        with pytest.raises(InvalidArgumentError, match="draw.*minval < maxval"):
            sess.run(y, {hi: 5})
        with pytest.raises(InvalidArgumentError, match="normal.*negative dimension"):
            sess.run(z, {shape: [2, -1]})


# ---------------------------------------------------------------- random_shuffle, multinomial
def test_random_shuffle_permutes_rows_and_replays_with_seeds():
    x = np.arange(40).reshape(20, 2)
    with tf.Graph().as_default():
        tf.set_random_seed(5)
        shuffled = tf.random_shuffle(x)
        with tf.Session() as sess:
            first, second = sess.run(shuffled), sess.run(shuffled)
        with tf.Session() as sess:
            replay = sess.run(shuffled)
    for out in (first, second):
        assert sorted(out[:, 0].tolist()) == list(range(0, 40, 2))
        np.testing.assert_array_equal(out[:, 1], out[:, 0] + 1)  # rows move whole
    assert not np.array_equal(first, second) and not np.array_equal(first, x)
    np.testing.assert_array_equal(replay, first)


def test_multinomial_frequencies_follow_softmax():
    with np.errstate(divide="ignore"):
        logits = np.log(np.array([[0.2, 0.5, 0.3, 0.0], [0.0, 0.0, 1.0, 0.0]]))
    with tf.Graph().as_default():
        draws = tf.multinomial(logits, 20000, seed=7)
        as_int32 = tf.random.categorical(logits.astype(np.float32), 5, dtype=tf.int32, seed=1)
        d, small = _run([draws, as_int32])
    assert d.dtype == np.int64 and d.shape == (2, 20000) and small.dtype == np.int32
    counts = np.stack([np.bincount(row, minlength=4) for row in d]) / 20000
    np.testing.assert_allclose(counts[0], [0.2, 0.5, 0.3, 0.0], atol=0.015)
    np.testing.assert_array_equal(counts[1], [0.0, 0.0, 1.0, 0.0])  # -inf logits never drawn
    np.testing.assert_array_equal(small[1], [2] * 5)
