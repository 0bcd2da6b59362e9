"""Transformations (graphflow/tf1/data/transforms.py): ordering semantics as TF1 (sequences
checked against tf.compat.v1: repeat/take/skip order, filter, shuffle determinism)."""

import numpy as np
import pytest

import graphflow as tf
from tests.tf1.data.conftest import run_to_end


def test_repeat_take_skip_ordering(values):
    ds = tf.data.Dataset.range(3)
    assert values(ds.repeat(2)) == [0, 1, 2, 0, 1, 2]
    assert values(ds.repeat().take(7)) == [0, 1, 2, 0, 1, 2, 0]
    assert values(ds.take(2).repeat(2)) == [0, 1, 0, 1]
    assert values(ds.repeat(2).skip(2).take(3)) == [2, 0, 1]
    assert values(ds.skip(-1)) == [] and values(ds.take(-1)) == [0, 1, 2]
    assert values(ds.take(0).repeat()) == []  # an empty epoch ends an endless repeat


def test_filter_skip_take_as_tf(values):
    ds = tf.data.Dataset.range(10).filter(lambda x: tf.equal(x % 3, 0)).skip(1).take(2)
    assert values(ds) == [3, 6]


def test_filter_predicate_must_be_a_scalar_bool():
    with pytest.raises(ValueError, match="scalar boolean"):
        tf.data.Dataset.range(3).filter(lambda x: x * 2)


def test_zip_and_concatenate(elements, values):
    a, b = tf.data.Dataset.range(3), tf.data.Dataset.range(10, 20)
    got = elements(tf.data.Dataset.zip((a, {"b": b})))
    assert [(x.item(), y["b"].item()) for x, y in got] == [(0, 10), (1, 11), (2, 12)]
    assert values(a.concatenate(tf.data.Dataset.range(7, 9))) == [0, 1, 2, 7, 8]
    with pytest.raises(TypeError, match="different types"):
        a.concatenate(tf.data.Dataset.from_tensor_slices(np.arange(3.0)))
    mixed = tf.data.Dataset.range(4).batch(2, drop_remainder=True).concatenate(
        tf.data.Dataset.range(3).batch(3, drop_remainder=True))
    assert mixed.output_shapes.as_list() == [None]


def _shuffled(seed, reshuffle, epochs=1, graph_seed=None):
    tf.reset_default_graph()
    if graph_seed is not None:
        tf.set_random_seed(graph_seed)
    ds = tf.data.Dataset.range(20).shuffle(20, seed=seed, reshuffle_each_iteration=reshuffle)
    nxt = ds.repeat(epochs).make_one_shot_iterator().get_next()
    with tf.Session() as sess:
        return [v.item() for v in run_to_end(sess, nxt)]


def test_shuffle_is_a_permutation_and_seeded_runs_repeat():
    first = _shuffled(seed=3, reshuffle=True)
    assert sorted(first) == list(range(20)) and first != list(range(20))
    assert _shuffled(seed=3, reshuffle=True) == first        # new session, same seed
    assert _shuffled(seed=4, reshuffle=True) != first
    assert _shuffled(seed=None, reshuffle=True, graph_seed=7) == _shuffled(
        seed=None, reshuffle=True, graph_seed=7)                # graph-level seed


def test_reshuffle_each_iteration():
    two = _shuffled(seed=3, reshuffle=True, epochs=2)
    assert sorted(two[:20]) == sorted(two[20:]) == list(range(20)) and two[:20] != two[20:]
    same = _shuffled(seed=3, reshuffle=False, epochs=2)
    assert same[:20] == same[20:]


def test_small_shuffle_buffer_keeps_elements_near_their_position():
    out = _shuffled(seed=1, reshuffle=True)
    tf.reset_default_graph()
    ds = tf.data.Dataset.range(20).shuffle(2, seed=1)
    nxt = ds.make_one_shot_iterator().get_next()
    with tf.Session() as sess:
        got = [v.item() for v in run_to_end(sess, nxt)]
    assert sorted(got) == list(range(20)) and out
    # with a buffer of 2 the i-th output comes from the first i+2 inputs
    assert all(v <= i + 1 for i, v in enumerate(got))


def test_cache_replays_the_first_pass():
    calls = []

    def gen():
        calls.append(1)
        yield from range(3)

    ds = tf.data.Dataset.from_generator(gen, tf.int64, []).cache().repeat(3)
    nxt = ds.make_one_shot_iterator().get_next()
    with tf.Session() as sess:
        assert [v.item() for v in run_to_end(sess, nxt)] == [0, 1, 2] * 3
    assert len(calls) == 1
    with pytest.raises(NotImplementedError, match="in memory"):
        tf.data.Dataset.range(2).cache("/tmp/file")


def test_map_with_tf_ops_and_structure(elements):
    ds = tf.data.Dataset.from_tensor_slices((np.arange(4, dtype=np.uint8), np.arange(4)))
    ds = ds.map(lambda x, y: {"image": tf.cast(x, tf.float32) / 255.0, "label": y * 2})
    assert ds.output_types == {"image": tf.float32, "label": tf.int64}
    got = elements(ds)
    assert [g["label"].item() for g in got] == [0, 2, 4, 6]
    np.testing.assert_allclose([g["image"] for g in got], np.arange(4) / 255.0, rtol=1e-6)


def test_parallel_map_keeps_order(values):
    ds = tf.data.Dataset.range(50).map(lambda x: x * x, num_parallel_calls=4)
    assert values(ds) == [i * i for i in range(50)]
    auto = tf.data.Dataset.range(5).map(lambda x: x + 1, num_parallel_calls=tf.data.experimental.AUTOTUNE)
    assert values(auto) == [1, 2, 3, 4, 5]


def test_prefetch_yields_everything_in_order(values):
    assert values(tf.data.Dataset.range(30).prefetch(3)) == list(range(30))
    assert values(tf.data.Dataset.range(30).map(lambda x: x + 1, num_parallel_calls=3)
                  .prefetch(1).take(5)) == [1, 2, 3, 4, 5]


def test_experimental_transformations(values, elements):
    exp = tf.data.experimental
    shuffled = values(tf.data.Dataset.range(5).apply(exp.shuffle_and_repeat(5, count=2, seed=1)))
    assert sorted(shuffled[:5]) == sorted(shuffled[5:]) == [0, 1, 2, 3, 4]
    batches = elements(tf.data.Dataset.range(5).apply(
        exp.map_and_batch(lambda x: x * 10, 2, drop_remainder=True)))
    assert [b.tolist() for b in batches] == [[0, 10], [20, 30]]
    pairs = tf.data.Dataset.from_tensor_slices((np.arange(4), np.arange(4) * 2)).batch(3)
    assert [(a.item(), b.item()) for a, b in elements(pairs.apply(exp.unbatch()))] == [
        (0, 0), (1, 2), (2, 4), (3, 6)]
    assert values(tf.data.Dataset.range(3).batch(2).apply(exp.unbatch())) == [0, 1, 2]
    assert exp.AUTOTUNE == -1


def test_seeded_shuffle_restarts_its_sequence_when_reinitialized():
    # tf.compat.v1 gives the same 12 elements after each initializer run (checked with TF 2.21)
    iterator = tf.data.Dataset.range(6).shuffle(6, seed=3).repeat(2).make_initializable_iterator()
    nxt = iterator.get_next()
    with tf.Session() as sess:
        sess.run(iterator.initializer)
        first = [v.item() for v in run_to_end(sess, nxt)]
        sess.run(iterator.initializer)
        assert [v.item() for v in run_to_end(sess, nxt)] == first
    assert first[:6] != first[6:] and sorted(first[6:]) == list(range(6))


def _outcomes(dataset, n):
    """What n get_next runs give: a value, or the error's type name."""
    next_element = tf.data.make_one_shot_iterator(dataset).get_next()
    out = []
    with tf.Session() as sess:
        for _ in range(n):
            try:
                value = sess.run(next_element)
                out.append(value.tolist() if isinstance(value, np.ndarray) else value)
            except tf.errors.OpError as exc:
                out.append(type(exc).__name__)
    return out


def _checked(values):
    return tf.data.Dataset.from_tensor_slices(np.array(values, np.float32)).map(
        lambda x: tf.check_numerics(x, "bad element"))


@pytest.mark.parametrize("parallel", [None, 2])
def test_an_error_in_map_fails_that_element_only_as_tf(parallel):
    # TF 2.21 (tf.compat.v1): get_next raises InvalidArgumentError for the element whose map
    # function failed, then gives the elements after it; the end is OutOfRangeError
    ds = tf.data.Dataset.from_tensor_slices(np.array([1, np.inf, 3, 4], np.float32)).map(
        lambda x: tf.check_numerics(x, "bad element"), num_parallel_calls=parallel)
    assert _outcomes(ds, 5) == [1.0, "InvalidArgumentError", 3.0, 4.0, "OutOfRangeError"]


def test_a_failed_element_fails_its_batch_and_passes_filter_and_repeat_as_tf():
    # TF 2.21: batch(2) of [1, inf, 3, 4, 5]: the first batch raises, then [3, 4], [5];
    # filter(x > 0).repeat(2) of [1, inf, 3]: 1, error, 3, 1, error, 3
    assert _outcomes(_checked([1, np.inf, 3, 4, 5]).batch(2), 4) == [
        "InvalidArgumentError", [3.0, 4.0], [5.0], "OutOfRangeError"]
    assert _outcomes(_checked([1, np.inf, 3]).filter(lambda x: x > 0).repeat(2), 7) == [
        1.0, "InvalidArgumentError", 3.0, 1.0, "InvalidArgumentError", 3.0, "OutOfRangeError"]
    # a py_func raising in map, then cache, prefetch, zip, take, skip and flat_map downstream
    def fails_on_two(v):
        if v == 2:
            raise ValueError("two")
        return np.float32(v)
    mapped = tf.data.Dataset.range(4).map(lambda x: tf.py_func(fails_on_two, [x], tf.float32))
    assert _outcomes(mapped.cache().repeat(2).prefetch(2), 9) == [
        0.0, 1.0, "InvalidArgumentError", 3.0, 0.0, 1.0, 3.0, "OutOfRangeError",
        "OutOfRangeError"]  # the second pass replays the cache, which kept the good elements
    zipped = tf.data.Dataset.zip((mapped, tf.data.Dataset.range(4)))
    assert _outcomes(zipped.map(lambda a, b: a + tf.cast(b, tf.float32)), 5) == [
        0.0, 2.0, "InvalidArgumentError", 6.0, "OutOfRangeError"]
    # take and skip do not count a failed element (TF 2.21)
    assert _outcomes(mapped.take(3), 4) == [0.0, 1.0, "InvalidArgumentError", 3.0]
    assert _outcomes(mapped.skip(2), 3) == ["InvalidArgumentError", 3.0, "OutOfRangeError"]
    assert _outcomes(mapped.skip(3), 2) == ["InvalidArgumentError", "OutOfRangeError"]
    flat = mapped.flat_map(lambda a: tf.data.Dataset.from_tensors(a).repeat(2))
    assert _outcomes(flat, 8) == [0.0, 0.0, 1.0, 1.0, "InvalidArgumentError", 3.0, 3.0,
                                  "OutOfRangeError"]


def test_a_py_func_map_of_unknown_shape_gives_elements_of_any_shape_as_tf():
    # TF 2.21: output_shapes <unknown>, get_next's shape <unknown>, elements [], [0], [0, 1], ...
    ds = tf.data.Dataset.range(4).map(
        lambda x: tf.py_func(lambda v: np.arange(v, dtype=np.int64), [x], tf.int64))
    assert ds.output_shapes.ndims is None
    next_element = tf.data.make_one_shot_iterator(ds).get_next()
    assert next_element.shape.ndims is None
    with tf.Session() as sess:
        assert [sess.run(next_element).tolist() for _ in range(4)] == [[], [0], [0, 1], [0, 1, 2]]
    # batched: TF gives [[0, 0], [1, 1]] from rows np.full(2, v)
    rows = tf.data.Dataset.range(4).map(
        lambda x: tf.py_func(lambda v: np.full(2, v), [x], tf.int64)).batch(2)
    assert _outcomes(rows, 1) == [[[0, 0], [1, 1]]]
