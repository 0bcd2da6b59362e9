"""train.Saver and latest_checkpoint: save/restore round trips in TensorFlow's V2 format, resuming
training exactly (Adam slots included), max_to_keep pruning, the state file, all-or-nothing
restores, clear errors for missing/mismatched/corrupted checkpoints, atomic saves, and the
checkpoints and JSON state files older graphflow versions wrote."""

import json
import os

import numpy as np
import pytest

import graphflow as tf
from graphflow.fileformat import tf_bundle, tf_table
from graphflow.fileformat.tf_bundle import BundleReader
from graphflow.framework.errors import GraphFormatError


def _model():
    x = tf.placeholder(tf.float64, [None, 2], name="x")
    with tf.name_scope("dense"):
        w = tf.Variable([[0.5], [-0.5]], dtype=tf.float64, name="kernel")
        b = tf.Variable([0.0], dtype=tf.float64, name="bias")
    y = tf.matmul(x, w) + b
    loss = tf.reduce_mean(tf.square(y - 1.0))
    step = tf.train.get_or_create_global_step()
    train = tf.train.AdamOptimizer(0.1).minimize(loss, global_step=step)
    return x, w, b, loss, train, step


DATA = np.array([[1.0, 2.0], [0.5, -1.0], [3.0, 0.0]])


def test_save_and_restore_round_trip(tmp_path):
    _, w, b, _, _, _ = _model()
    saver = tf.train.Saver()
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run([tf.assign(w, [[1.0], [2.0]]), tf.assign(b, [3.0])])
        prefix = saver.save(sess, str(tmp_path / "model"))
        assert prefix == str(tmp_path / "model")
        sess.run(tf.assign(w, [[0.0], [0.0]]))
        saver.restore(sess, prefix)
        assert sess.run(w).tolist() == [[1.0], [2.0]] and sess.run(b).tolist() == [3.0]
    assert sorted(os.listdir(tmp_path)) == ["checkpoint", "model.data-00000-of-00001",
                                            "model.index", "model.meta"]
    with BundleReader(prefix) as reader:
        assert reader.names() == ["beta1_power", "beta2_power", "dense/bias", "dense/bias/Adam",
                                  "dense/bias/Adam_1", "dense/kernel", "dense/kernel/Adam",
                                  "dense/kernel/Adam_1", "global_step"]
        assert reader.get_tensor("dense/kernel").tolist() == [[1.0], [2.0]]
    state = (tmp_path / "checkpoint").read_text()
    assert state.startswith('model_checkpoint_path: "model"\nall_model_checkpoint_paths: "model"\n')
    assert "all_model_checkpoint_timestamps: " in state
    assert tf.train.latest_checkpoint(str(tmp_path)) == prefix


def test_resumed_training_matches_uninterrupted_training(tmp_path):
    """Restoring every global variable (weights, Adam slots, beta powers, global step) into a
    freshly built graph continues training bit-identically."""
    x, w, _, loss, train, step = _model()
    saver = tf.train.Saver()
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for _ in range(3):
            sess.run(train, {x: DATA})
        path = saver.save(sess, str(tmp_path / "ckpt"), global_step=step)
        assert path.endswith("ckpt-3")
        for _ in range(4):
            sess.run(train, {x: DATA})
        expected = sess.run([w, loss, step], {x: DATA})
    tf.reset_default_graph()
    x, w, _, loss, train, step = _model()
    saver = tf.train.Saver()
    with tf.Session() as sess:
        saver.restore(sess, tf.train.latest_checkpoint(str(tmp_path)))
        assert sess.run(step) == 3
        for _ in range(4):
            sess.run(train, {x: DATA})
        got = sess.run([w, loss, step], {x: DATA})
    assert got[0].tobytes() == expected[0].tobytes() and got[1] == expected[1]
    assert got[2] == expected[2] == 7


def test_max_to_keep_prunes_old_checkpoints(tmp_path):
    _model()
    saver = tf.train.Saver(max_to_keep=2)
    base = str(tmp_path / "m")
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for step in (10, 20, 30):
            saver.save(sess, base, global_step=step)
        saver.save(sess, base, global_step=30)  # saving the same step again: no duplicate
    assert saver.last_checkpoints == [f"{base}-20", f"{base}-30"]
    assert sorted(os.listdir(tmp_path)) == [
        "checkpoint", "m-20.data-00000-of-00001", "m-20.index", "m-20.meta",
        "m-30.data-00000-of-00001", "m-30.index", "m-30.meta"]
    state = tf.train.get_checkpoint_state(str(tmp_path))
    assert state.model_checkpoint_path == f"{base}-30"
    assert state.all_model_checkpoint_paths == [f"{base}-20", f"{base}-30"]


def test_keep_all_padding_and_keep_every_n_hours(tmp_path):
    _model()
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        keep_all = tf.train.Saver(max_to_keep=None, pad_step_number=True)
        for step in range(4):
            keep_all.save(sess, str(tmp_path / "a"), global_step=step)
        assert len(keep_all.last_checkpoints) == 4
        assert os.path.exists(tmp_path / "a-00000003.index")
        hourly = tf.train.Saver(max_to_keep=1, keep_checkpoint_every_n_hours=1e-9)
        for step in range(3):
            hourly.save(sess, str(tmp_path / "b"), global_step=step)
        assert hourly.last_checkpoints == [str(tmp_path / "b-2")]
        assert all(os.path.exists(tmp_path / f"b-{s}.index") for s in range(3))


def test_var_list_dict_and_restore_into_renamed_variables(tmp_path):
    a = tf.Variable([1.0, 2.0], name="a")
    with tf.Session() as sess:
        sess.run(a.initializer)
        path = tf.train.Saver({"weights": a}).save(sess, str(tmp_path / "c"))
    tf.reset_default_graph()
    other = tf.Variable([0.0, 0.0], name="completely/different")
    with tf.Session() as sess:
        tf.train.Saver({"weights": other}).restore(sess, path)
        assert sess.run(other).tolist() == [1.0, 2.0]


def test_restore_errors_and_all_or_nothing(tmp_path):
    tf.Variable([1.0, 2.0], name="a")
    tf.Variable(3, name="b")
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        path = tf.train.Saver().save(sess, str(tmp_path / "c"))
    tf.reset_default_graph()
    a = tf.Variable([0.0, 0.0], name="a")
    wrong_shape = tf.Variable([0, 0], name="b")
    missing = tf.Variable(0.0, name="missing")
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        with pytest.raises(tf.errors.InvalidArgumentError, match="shape \\[\\]"):
            tf.train.Saver([a, wrong_shape]).restore(sess, path)
        assert sess.run(a).tolist() == [0.0, 0.0]  # nothing was restored
        with pytest.raises(tf.errors.NotFoundError, match="Key missing not found"):
            tf.train.Saver([missing]).restore(sess, path)
        float_b = tf.Variable(0.0, name="b_1")
        sess.run(float_b.initializer)
        with pytest.raises(tf.errors.InvalidArgumentError, match="holds 'b' as int32"):
            tf.train.Saver({"b": float_b}).restore(sess, path)
        with pytest.raises(ValueError, match="not a valid checkpoint"):
            tf.train.Saver([a]).restore(sess, str(tmp_path / "nope"))
        with pytest.raises(ValueError, match="save_path when it is None"):
            tf.train.Saver([a]).restore(sess, None)
        (tmp_path / "bad.npz").write_bytes(b"PK\x03\x04garbage")
        with pytest.raises(GraphFormatError, match="not a valid zip"):
            tf.train.Saver([a]).restore(sess, str(tmp_path / "bad"))


def test_save_errors(tmp_path):
    v = tf.Variable(1.0, name="v")
    with pytest.raises(ValueError, match="No variables to save"):
        tf.train.Saver([])
    assert tf.train.Saver([], allow_empty=True).last_checkpoints == []
    with pytest.raises(TypeError, match="must be Variables"):
        tf.train.Saver([tf.constant(1.0)])
    saver = tf.train.Saver()
    with tf.Session() as sess:
        with pytest.raises(tf.errors.FailedPreconditionError, match="uninitialized variable 'v'"):
            saver.save(sess, str(tmp_path / "x"))
        sess.run(v.initializer)
        with pytest.raises(ValueError, match="Parent directory"):
            saver.save(sess, str(tmp_path / "no" / "such" / "dir" / "x"))
    with tf.Session(graph=tf.Graph()) as other:
        with pytest.raises(ValueError, match="not in the session's graph"):
            saver.save(other, str(tmp_path / "x"))


def test_failed_save_keeps_the_previous_checkpoint(tmp_path, monkeypatch):
    v = tf.Variable([1.0, 2.0], name="v")
    saver = tf.train.Saver()
    with tf.Session() as sess:
        sess.run(v.initializer)
        path = saver.save(sess, str(tmp_path / "m"))
        names = ["checkpoint", "m.data-00000-of-00001", "m.index", "m.meta"]
        before = {n: (tmp_path / n).read_bytes() for n in names}
        sess.run(tf.assign(v, [5.0, 6.0]))

        def crash(*args, **kwargs):
            raise OSError("disk full")

        for module, function in ((tf_table, "write_table"), (tf_bundle, "mask_crc32c")):
            monkeypatch.setattr(module, function, crash)
            with pytest.raises(OSError, match="disk full"):
                saver.save(sess, str(tmp_path / "m"))
            monkeypatch.undo()
            assert sorted(os.listdir(tmp_path)) == names
            assert {n: (tmp_path / n).read_bytes() for n in names} == before
        saver.restore(sess, path)
        assert sess.run(v).tolist() == [1.0, 2.0]


def test_latest_checkpoint_without_or_with_a_bad_index(tmp_path):
    assert tf.train.latest_checkpoint(str(tmp_path)) is None
    assert tf.train.latest_checkpoint(str(tmp_path / "absent")) is None
    (tmp_path / "checkpoint").write_text(json.dumps({
        "format": "graphflow-checkpoint-state", "version": 1,
        "model_checkpoint_path": "gone", "all_model_checkpoint_paths": ["gone"]}))
    assert tf.train.latest_checkpoint(str(tmp_path)) is None  # its data file is missing
    assert not tf.train.checkpoint_exists(str(tmp_path / "gone"))
    (tmp_path / "checkpoint").write_text("{not json")
    with pytest.raises(GraphFormatError, match="not valid JSON"):
        tf.train.latest_checkpoint(str(tmp_path))
    (tmp_path / "checkpoint").write_text(json.dumps({"format": "other"}))
    with pytest.raises(GraphFormatError, match="not a graphflow checkpoint index"):
        tf.train.latest_checkpoint(str(tmp_path))


def test_latest_checkpoint_recovers_when_the_index_names_a_missing_file(tmp_path):
    v = tf.Variable([1.0], name="v")
    saver = tf.train.Saver(max_to_keep=None)
    with tf.Session() as sess:
        sess.run(v.initializer)
        for step in (1, 2, 3):
            saver.save(sess, str(tmp_path / "m"), global_step=step)
    os.remove(tmp_path / "m-3.index")
    assert tf.train.latest_checkpoint(str(tmp_path)) == str(tmp_path / "m-2")
    (tmp_path / "checkpoint").write_text(json.dumps({
        "format": "graphflow-checkpoint-state", "version": 1,
        "model_checkpoint_path": "m-9", "all_model_checkpoint_paths": ["m-9"]}))
    assert tf.train.latest_checkpoint(str(tmp_path)) == str(tmp_path / "m-2")


def test_stale_temp_files_of_killed_saves_are_cleaned_on_the_next_save(tmp_path):
    v = tf.Variable([1.0], name="v")
    saver = tf.train.Saver()
    dead = _dead_pid()
    (tmp_path / f".m-1.npz.{dead}-0123456789ab.tmp").write_bytes(b"half")
    (tmp_path / f".checkpoint.{dead}-0123456789ab.tmp").write_bytes(b"half")
    (tmp_path / ".someone-elses.tmp").write_bytes(b"keep")
    with tf.Session() as sess:
        sess.run(v.initializer)
        saver.save(sess, str(tmp_path / "m"), global_step=2)
    assert sorted(os.listdir(tmp_path)) == [".someone-elses.tmp", "checkpoint",
                                            "m-2.data-00000-of-00001", "m-2.index", "m-2.meta"]


def _dead_pid():
    pid = os.fork()
    if pid == 0:
        os._exit(0)
    os.waitpid(pid, 0)
    return pid


def _save_forever(directory, max_to_keep, first_step, ready_fd):
    """Child process: save checkpoints of `step` as fast as it can until killed."""
    try:
        tf.reset_default_graph()
        v = tf.Variable(np.zeros(64, np.int64), name="step")
        value = tf.placeholder(tf.int64, [64])
        assign = tf.assign(v, value)
        saver = tf.train.Saver(max_to_keep=max_to_keep)
        with tf.Session() as sess:
            step = first_step
            while True:
                sess.run(assign, {value: np.full(64, step, np.int64)})
                saver.save(sess, os.path.join(directory, "model"), global_step=step)
                if step == first_step:
                    os.write(ready_fd, b"1")
                step += 1
    finally:
        os._exit(1)


@pytest.mark.parametrize("max_to_keep", [1, 2, 5, None])
def test_saver_killed_at_random_moments_always_leaves_a_restorable_checkpoint(tmp_path,
                                                                             max_to_keep):
    import random
    import signal
    import time

    rng = random.Random(max_to_keep or 0)
    directory = str(tmp_path)
    next_step = 0
    kills = 8
    for _ in range(kills):
        read_fd, write_fd = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(read_fd)
            _save_forever(directory, max_to_keep, next_step, write_fd)
        os.close(write_fd)
        assert os.read(read_fd, 1) == b"1"  # at least one complete save in this run
        os.close(read_fd)
        time.sleep(rng.uniform(0.0, 0.05))
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        latest = tf.train.latest_checkpoint(directory)
        assert latest is not None
        graph = tf.Graph()
        with graph.as_default():
            v = tf.Variable(np.zeros(64, np.int64), name="step")
            with tf.Session() as sess:
                tf.train.Saver().restore(sess, latest)
                restored = sess.run(v)
        step = int(latest.rpartition("-")[2])
        assert restored.tolist() == [step] * 64  # the step the file name says was saved
        assert step >= next_step
        next_step = step + 1
    leftovers = [n for n in os.listdir(directory) if n.endswith(".tmp")]
    graph = tf.Graph()
    with graph.as_default():
        v = tf.Variable(np.zeros(64, np.int64), name="step")
        with tf.Session() as sess:
            sess.run(v.initializer)
            tf.train.Saver().save(sess, os.path.join(directory, "model"), global_step=10**6)
    assert not [n for n in os.listdir(directory) if n.endswith(".tmp")], leftovers
