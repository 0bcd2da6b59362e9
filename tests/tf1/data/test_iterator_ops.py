"""Iterators (graphflow/tf1/data/iterator_ops.py, ops/data_ops.py, kernels/cpu/reference/data_kernels.py):
one-shot, initializable (re-initialized with other feeds), from_structure + make_initializer,
OutOfRangeError, what a failed run does (as TF1: the element is consumed; graphflow: variables
unchanged), per-session state, and saving graphs that hold iterator ops."""

import gc
import threading

import numpy as np
import pytest

import graphflow as tf
from tests.tf1.data.conftest import run_to_end


def test_one_shot_iterator_ends_with_out_of_range():
    nxt = tf.data.Dataset.range(2).make_one_shot_iterator().get_next()
    assert nxt.op.type == "IteratorGetNext"
    with tf.Session() as sess:
        assert [sess.run(nxt), sess.run(nxt)] == [0, 1]
        for _ in range(2):  # stays at the end
            with pytest.raises(tf.errors.OutOfRangeError, match="End of sequence") as info:
                sess.run(nxt)
            assert info.value.op is nxt.op


def test_compat_v1_function_forms():
    ds = tf.data.Dataset.range(3)
    nxt = tf.compat.v1.data.make_one_shot_iterator(ds).get_next()
    it = tf.data.make_initializable_iterator(ds)
    assert tf.data.get_output_types(ds) == tf.int64 and tf.data.get_output_shapes(it).ndims == 0
    with tf.Session() as sess:
        assert sess.run(nxt) == 0
        sess.run(it.initializer)
        assert sess.run(it.get_next()) == 0


def test_initializable_iterator_reinitialized_with_other_feeds():
    x = tf.placeholder(tf.float32, [None, 2])
    y = tf.placeholder(tf.int64, [None])
    iterator = tf.data.Dataset.from_tensor_slices((x, y)).batch(2).make_initializable_iterator()
    images, labels = iterator.get_next()
    assert images.shape.as_list() == [None, 2]
    with tf.Session() as sess:
        with pytest.raises(tf.errors.FailedPreconditionError, match="not been initialized"):
            sess.run(images)
        sess.run(iterator.initializer, {x: np.ones((3, 2)), y: [1, 2, 3]})
        assert sess.run(labels).tolist() == [1, 2]
        assert sess.run(labels).tolist() == [3]
        with pytest.raises(tf.errors.OutOfRangeError):
            sess.run(labels)
        sess.run(iterator.initializer, {x: np.zeros((1, 2)), y: [9]})
        got_images, got_labels = sess.run([images, labels])  # one element for both outputs
        assert got_images.tolist() == [[0.0, 0.0]] and got_labels.tolist() == [9]


def test_from_structure_switches_datasets():
    train = tf.data.Dataset.range(10).batch(4)
    test = tf.data.Dataset.range(100, 103).batch(4)
    iterator = tf.data.Iterator.from_structure(train.output_types, train.output_shapes)
    nxt = iterator.get_next()
    train_init, test_init = iterator.make_initializer(train), iterator.make_initializer(test)
    with pytest.raises(ValueError, match="initializer"):
        _ = iterator.initializer
    with pytest.raises(TypeError, match="types"):
        iterator.make_initializer(tf.data.Dataset.from_tensor_slices(np.zeros((3, 2))))
    with tf.Session() as sess:
        sess.run(train_init)
        assert sess.run(nxt).tolist() == [0, 1, 2, 3]
        sess.run(test_init)
        assert sess.run(nxt).tolist() == [100, 101, 102]
        sess.run(train_init)
        assert run_to_end(sess, nxt)[-1].tolist() == [8, 9]


def test_failed_run_consumes_the_element_but_changes_no_variable():
    nxt = tf.data.Dataset.range(5).make_one_shot_iterator().get_next()
    p = tf.placeholder(tf.float32)
    bad = tf.reshape(tf.cast(nxt, tf.float32) + p, [3])  # fails after the element is taken
    total = tf.Variable(0, dtype=tf.int64)
    update = tf.assign_add(total, nxt)
    with tf.Session() as sess:
        sess.run(total.initializer)
        assert sess.run(nxt) == 0
        for _ in range(3):
            with pytest.raises(tf.errors.InvalidArgumentError):
                sess.run([update, bad], {p: [1.0, 2.0]})
        assert sess.run(nxt) == 4          # TF1 too: elements 1, 2, 3 were consumed
        assert sess.run(total) == 0        # graphflow: a failed run changes no variable


def test_each_session_has_its_own_position_and_threads_share_one():
    nxt = tf.data.Dataset.range(200).make_one_shot_iterator().get_next()
    with tf.Session() as a, tf.Session() as b:
        assert (a.run(nxt), a.run(nxt), b.run(nxt)) == (0, 1, 0)
    got = []
    with tf.Session() as sess:
        def work():
            for _ in range(50):
                got.append(sess.run(nxt).item())
        workers = [threading.Thread(target=work) for _ in range(4)]
        for w in workers:
            w.start()
        for w in workers:
            w.join()
    assert sorted(got) == list(range(200))


def test_training_from_an_iterator_updates_variables():
    x = np.arange(8, dtype=np.float32).reshape(4, 2)
    nxt = tf.data.Dataset.from_tensor_slices(x).batch(2).repeat(3).make_one_shot_iterator() \
        .get_next()
    w = tf.Variable(np.zeros(2, np.float32))
    step = tf.assign_add(w, tf.reduce_sum(nxt, axis=0))
    with tf.Session() as sess:
        sess.run(w.initializer)
        steps = 0
        while True:
            try:
                sess.run(step)
                steps += 1
            except tf.errors.OutOfRangeError:
                break
        assert steps == 6
        np.testing.assert_allclose(sess.run(w), 3 * x.sum(axis=0))


def test_saving_outputs_that_need_an_iterator_names_the_op(tmp_path):
    nxt = tf.data.Dataset.range(3).make_one_shot_iterator().get_next(name="batch")
    y = nxt * 2
    with tf.Session() as sess:
        with pytest.raises(ValueError, match="'batch'.*tf.data pipeline"):
            tf.save(str(tmp_path / "m.gfz"), outputs={"y": y}, session=sess)


def _save_model_reading_an_iterator(path):
    images = tf.data.Dataset.from_tensor_slices(np.ones((4, 2), np.float32)).batch(2) \
        .make_one_shot_iterator().get_next()
    x = tf.placeholder_with_default(images, [None, 2], name="x")
    y = tf.reduce_sum(x, axis=1, name="y")
    with tf.Session() as sess:
        assert sess.run(y).tolist() == [2.0, 2.0]
        tf.save(path, inputs={"x": x}, outputs={"y": y}, session=sess)


def test_saved_model_fed_instead_of_the_iterator(tmp_path):
    path = str(tmp_path / "m.gfz")
    _save_model_reading_an_iterator(path)
    tf.reset_default_graph()
    gc.collect()  # the pipeline lived as long as its graph: as in another process now
    with tf.load(path) as model:
        assert model.run({"x": np.full((1, 2), 3, np.float32)})["y"].tolist() == [6.0]
        next_op = model.graph.get_operation_by_name("IteratorGetNext")
        with pytest.raises(tf.errors.InvalidArgumentError, match="not part of a saved graph"):
            model.session.run(next_op.outputs[0])


def test_a_feedable_iterator_reads_the_iterator_whose_handle_is_fed():
    train = tf.data.Dataset.from_tensor_slices(np.arange(10)).repeat()
    val = tf.data.Dataset.from_tensor_slices(np.arange(100, 103))
    one_shot = tf.data.Dataset.from_tensor_slices(np.arange(7, 9)).make_one_shot_iterator()
    handle = tf.placeholder(tf.string, shape=[])
    iterator = tf.data.Iterator.from_string_handle(handle, train.output_types, train.output_shapes)
    value = iterator.get_next()
    train_it, val_it = train.make_initializable_iterator(), val.make_initializable_iterator()
    with tf.Session() as sess:
        train_h, val_h, shot_h = sess.run([train_it.string_handle(), val_it.string_handle(),
                                           one_shot.string_handle()])
        sess.run([train_it.initializer, val_it.initializer])
        got = [int(sess.run(value, {handle: h})) for h in (train_h, train_h, val_h, train_h)]
        assert got == [0, 1, 100, 2]
        assert [int(sess.run(value, {handle: shot_h})) for _ in range(2)] == [7, 8]
        with pytest.raises(tf.errors.OutOfRangeError):
            sess.run(value, {handle: shot_h})
        with pytest.raises(tf.errors.InvalidArgumentError, match="not an iterator's "
                                                              "string_handle"):
            sess.run(value, {handle: b"nonsense"})
    with pytest.raises(TypeError, match="scalar tf.string tensor"):
        tf.data.Iterator.from_string_handle(tf.constant(1), train.output_types)
