"""Monitored sessions, their hooks and the basic Supervisor."""

import logging

import numpy as np
import pytest

import graphflow as tf


def _counter_graph():
    step = tf.train.get_or_create_global_step()
    w = tf.Variable(0.0, name="w")
    train_op = tf.group(tf.assign_add(w, 1.0), tf.assign_add(step, 1))
    return step, w, train_op


def test_stop_at_step_hook_and_checkpoint_resume(tmp_path):
    step, w, train_op = _counter_graph()
    hooks = [tf.train.StopAtStepHook(last_step=5)]
    runs = 0
    with tf.train.MonitoredTrainingSession(checkpoint_dir=str(tmp_path), hooks=hooks,
                                           save_checkpoint_steps=2) as sess:
        while not sess.should_stop():
            sess.run(train_op)
            runs += 1
    assert runs == 5
    assert tf.train.latest_checkpoint(str(tmp_path)).endswith("model.ckpt-5")
    # a new session restores global step and variables, then runs 3 more steps
    with tf.train.MonitoredTrainingSession(checkpoint_dir=str(tmp_path),
                                           hooks=[tf.train.StopAtStepHook(num_steps=3)]) as sess:
        assert sess.run(w.read_value()) == 5.0
        while not sess.should_stop():
            sess.run(train_op)
        assert sess.run(step.read_value()) == 8


def test_hooks_see_every_run_and_can_add_fetches_and_feeds():
    x = tf.placeholder(tf.float32, [])
    doubled = x * 2.0
    events = []

    class Recorder(tf.train.SessionRunHook):
        def begin(self):
            events.append("begin")

        def after_create_session(self, session, coord):
            events.append("created")

        def before_run(self, run_context):
            return tf.train.SessionRunArgs(doubled, feed_dict={x: 4.0})

        def after_run(self, run_context, run_values):
            events.append(float(run_values.results))
            if len(events) == 4:
                run_context.request_stop()

        def end(self, session):
            events.append("end")

    with tf.train.MonitoredSession(hooks=[Recorder()]) as sess:
        while not sess.should_stop():
            assert sess.run(doubled + 1.0) == 9.0
    assert events == ["begin", "created", 8.0, 8.0, "end"]
    with tf.train.MonitoredSession(hooks=[Recorder()]) as sess:
        with pytest.raises(RuntimeError, match="fed by two"):
            sess.run(doubled, feed_dict={x: 1.0})


def test_logging_tensor_hook_every_n_iter(caplog):
    step, w, train_op = _counter_graph()
    hook = tf.train.LoggingTensorHook({"w": w.read_value()}, every_n_iter=2)
    with caplog.at_level(logging.INFO, logger="graphflow"):
        with tf.train.MonitoredTrainingSession(hooks=[hook, tf.train.StopAtStepHook(5)]) as sess:
            while not sess.should_stop():
                sess.run(train_op)
    logged = [float(v["w"]) for v in hook.logged]  # runs 1, 3 and 5
    assert len(logged) == 3 and np.diff(logged).tolist() == [2.0, 2.0]
    assert f"w = {logged[1]}" in caplog.text
    with pytest.raises(ValueError):
        tf.train.LoggingTensorHook({"w": w}, every_n_iter=1, every_n_secs=1)


def test_nan_tensor_hook_raises():
    loss = tf.Variable(np.float32(np.nan)) * 1.0
    with pytest.raises(tf.train.NanLossDuringTrainingError):
        with tf.train.MonitoredSession(hooks=[tf.train.NanTensorHook(loss)]) as sess:
            sess.run(loss)


def test_out_of_range_ends_the_session_quietly():
    from graphflow.tf1.estimator.inputs import numpy_input_fn
    features, _ = numpy_input_fn({"a": np.arange(5.0)}, np.arange(5), batch_size=2,
                                 shuffle=False)()
    seen = []
    with tf.train.SingularMonitoredSession() as sess:
        while not sess.should_stop():
            seen.append(sess.run(features["a"]).tolist())
    assert seen == [[0.0, 1.0], [2.0, 3.0], [4.0]]
    assert sess.should_stop()


def test_scaffold_init_fn_and_local_init():
    w = tf.Variable(1.0)
    counter = tf.Variable(0.0, trainable=False, collections=[tf.GraphKeys.LOCAL_VARIABLES])

    def init_fn(scaffold, session):
        session.run(tf.assign(w, 7.0))

    scaffold = tf.train.Scaffold(init_fn=init_fn)
    with tf.train.SingularMonitoredSession(scaffold=scaffold) as sess:
        assert sess.run(w.read_value()) == 7.0
        assert sess.run(counter.read_value()) == 0.0
        assert sess.raw_session() is not None


def test_supervisor_managed_session_saves_and_restores(tmp_path):
    step, w, train_op = _counter_graph()
    sv = tf.train.Supervisor(logdir=str(tmp_path))
    with sv.managed_session() as sess:
        for _ in range(3):
            if sv.should_stop():
                break
            sess.run(train_op)
    assert sv.saver is not None
    assert tf.train.latest_checkpoint(str(tmp_path)).endswith("model.ckpt-3")
    sv2 = tf.train.Supervisor(logdir=str(tmp_path))
    with sv2.managed_session() as sess:
        assert sess.run(w.read_value()) == 3.0
        sv2.request_stop()
        assert sv2.should_stop()


def _kept(directory):
    return sorted(int(p.name[len("model.ckpt-"):-len(".index")]) for p in directory.iterdir()
                  if p.name.endswith(".index"))


def test_restarted_monitored_sessions_recover_the_kept_checkpoints(tmp_path):
    for _ in range(4):
        with tf.Graph().as_default():
            _, _, train_op = _counter_graph()
            scaffold = tf.train.Scaffold(saver=tf.train.Saver(max_to_keep=2))
            with tf.train.MonitoredTrainingSession(
                    checkpoint_dir=str(tmp_path), scaffold=scaffold, save_checkpoint_steps=1,
                    hooks=[tf.train.StopAtStepHook(num_steps=2)]) as sess:
                while not sess.should_stop():
                    sess.run(train_op)
    assert _kept(tmp_path) == [7, 8]
    assert len(list(tmp_path.glob("model.ckpt-*"))) == 2 * 3  # .index, .data, .meta each


def test_a_checkpoint_saver_hook_with_its_own_saver_recovers_the_kept_checkpoints(tmp_path):
    for _ in range(3):
        with tf.Graph().as_default():
            _, _, train_op = _counter_graph()
            hook = tf.train.CheckpointSaverHook(str(tmp_path), save_steps=1,
                                                saver=tf.train.Saver(max_to_keep=2))
            with tf.train.MonitoredTrainingSession(
                    checkpoint_dir=str(tmp_path), save_checkpoint_steps=None,
                    save_checkpoint_secs=None,
                    hooks=[hook, tf.train.StopAtStepHook(num_steps=2)]) as sess:
                while not sess.should_stop():
                    sess.run(train_op)
    assert _kept(tmp_path) == [5, 6]


def test_a_restarted_supervisor_recovers_the_kept_checkpoints(tmp_path):
    for _ in range(4):
        with tf.Graph().as_default():
            _, _, train_op = _counter_graph()
            sv = tf.train.Supervisor(logdir=str(tmp_path), saver=tf.train.Saver(max_to_keep=2),
                                     save_model_secs=1)
            with sv.managed_session() as sess:
                sess.run(train_op)
    assert _kept(tmp_path) == [3, 4]
