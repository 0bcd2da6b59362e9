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
from tests.tooling import raised_within


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


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs (POSIX)")
def test_a_state_file_that_is_a_fifo_or_too_large_is_refused_without_blocking(tmp_path):
    os.mkfifo(tmp_path / "checkpoint")
    error = raised_within(20, tf.train.latest_checkpoint, str(tmp_path))
    assert isinstance(error, GraphFormatError) and "not a regular file" in str(error)
    os.remove(tmp_path / "checkpoint")
    (tmp_path / "checkpoint").write_bytes(b"#" * ((4 << 20) + 1))
    with pytest.raises(GraphFormatError, match="more than the limit of 4194304"):
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


# ------------------------------------------------------------------ TensorFlow's checkpoints
FIXTURES = os.path.join(os.path.dirname(os.path.dirname(__file__)), "fixtures", "tensorflow",
                        "checkpoints")


def _fixture_values(name):
    with np.load(os.path.join(FIXTURES, "expected.npz")) as npz:
        return {k.partition("/")[2]: npz[k] for k in npz.files if k.startswith(name + "/")}


def mlp_program(tf, np, restore=None, save=None, steps=0):
    """The fixtures' Adam MLP under TF1's names (run by graphflow and by TensorFlow): restore,
    train `steps` steps, save; returns logits before and after training and the weights."""
    tf.reset_default_graph()
    rng = np.random.RandomState(0)
    x_data = rng.randn(8, 4).astype(np.float32)
    y_data = rng.randint(0, 3, 8).astype(np.int64)
    x = tf.placeholder(tf.float32, [None, 4], name="x")
    y = tf.placeholder(tf.int64, [None], name="y")
    with tf.variable_scope("dense"):
        w1 = tf.get_variable("kernel", [4, 16])
        b1 = tf.get_variable("bias", [16], initializer=tf.zeros_initializer())
    with tf.variable_scope("dense_1"):
        w2 = tf.get_variable("kernel", [16, 3])
        b2 = tf.get_variable("bias", [3], initializer=tf.zeros_initializer())
    logits = tf.matmul(tf.nn.relu(tf.matmul(x, w1) + b1), w2) + b2
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y,
                                                                         logits=logits))
    step = tf.train.get_or_create_global_step()
    train = tf.train.AdamOptimizer(0.01).minimize(loss, global_step=step)
    saver = tf.train.Saver()
    out = {}
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        if restore:
            if not restore.endswith("-3"):
                restore = tf.train.latest_checkpoint(restore)
            out["restored_from"] = np.array(restore.rpartition("-")[2])
            saver.restore(sess, restore)
        out["restored_logits"] = sess.run(logits, {x: x_data})
        for _ in range(steps):
            sess.run(train, {x: x_data, y: y_data})
        out["logits"], out["w1"], out["step"] = sess.run([logits, w1, step], {x: x_data})
        out["names"] = np.array(sorted(v.op.name for v in tf.global_variables()))
        if save:
            saver.save(sess, save, global_step=step)
    return out


def test_restores_tensorflows_adam_checkpoint_and_continues(tmp_path):
    expected = _fixture_values("mlp")
    state = tf.train.get_checkpoint_state(os.path.join(FIXTURES, "mlp"))
    assert [os.path.basename(p) for p in state.all_model_checkpoint_paths] == [
        "model-1", "model-2", "model-3"]
    out = mlp_program(tf, np, restore=os.path.join(FIXTURES, "mlp"), steps=2,
                      save=str(tmp_path / "again" / "model"))
    assert out["names"].tolist() == sorted(k for k in expected if not k.startswith(":"))
    np.testing.assert_allclose(out["restored_logits"], expected[":logits"], atol=1e-6)
    assert out["step"] == 5 and str(out["restored_from"]) == "3"
    assert tf.train.latest_checkpoint(str(tmp_path / "again")) == str(tmp_path / "again" /
                                                                      "model-5")


def test_restores_partitioned_sharded_and_every_dtype(tmp_path):
    parts = _fixture_values("partitioned")
    emb = tf.Variable(np.zeros((10, 4), np.float32), name="emb")
    big = tf.Variable(np.zeros((7, 3), np.float32), name="scope/big")
    whole = tf.Variable(np.zeros(5, np.float32), name="whole")
    with tf.Session() as sess:
        tf.train.Saver([emb, big, whole]).restore(sess, os.path.join(FIXTURES, "partitioned",
                                                                     "model"))
        got = sess.run([emb, big, whole])
    for value, name in zip(got, ["emb", "scope/big", "whole"], strict=True):
        np.testing.assert_array_equal(value, parts[name])
    tf.reset_default_graph()
    expected = _fixture_values("dtypes")
    variables = {name: tf.Variable(np.zeros_like(value), name=name)
                 for name, value in expected.items()}
    text = tf.Variable(np.array([b""] * 4, object), name="text")
    word = tf.Variable(np.array(b"", object), name="word")
    with tf.Session() as sess:
        tf.train.Saver().restore(sess, os.path.join(FIXTURES, "dtypes", "model"))
        for name, v in variables.items():
            value = sess.run(v)
            assert value.dtype == expected[name].dtype
            np.testing.assert_array_equal(value, expected[name])
        assert sess.run(text).tolist() == [b"hello", b"", b"\x00\xff bytes", b"x" * 300]
        assert sess.run(word) == b"graph"


def test_sharded_save_writes_one_data_file_per_device(tmp_path):
    with tf.device("/cpu:0"):
        a = tf.Variable([1.0, 2.0], name="a")
    with tf.device("/cpu:1"):
        b = tf.Variable(np.array([b"x", b"yz"], object), name="b")
    saver = tf.train.Saver(sharded=True, write_version=tf.train.SaverDef.V2)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        path = saver.save(sess, str(tmp_path / "m"), global_step=1, write_meta_graph=False)
        sess.run([tf.assign(a, [0.0, 0.0]), tf.assign(b, [b"", b""])])
        saver.restore(sess, path)
        assert sess.run(a).tolist() == [1.0, 2.0] and sess.run(b).tolist() == [b"x", b"yz"]
    assert sorted(os.listdir(tmp_path)) == ["checkpoint", "m-1.data-00000-of-00002",
                                            "m-1.data-00001-of-00002", "m-1.index"]
    with pytest.warns(UserWarning, match="V1 checkpoint format is deprecated"):
        tf.train.Saver(write_version=tf.train.SaverDef.V1)
    with pytest.raises(ValueError, match="write_version"):
        tf.train.Saver(write_version=7)


def test_save_creates_one_missing_parent_directory_and_prunes_every_shard(tmp_path):
    tf.Variable([1.0], name="v")
    saver = tf.train.Saver(sharded=True, max_to_keep=1)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        saver.save(sess, str(tmp_path / "new" / "m"), global_step=1)
        saver.save(sess, str(tmp_path / "new" / "m"), global_step=2)
    assert sorted(os.listdir(tmp_path / "new")) == ["checkpoint", "m-2.data-00000-of-00001",
                                                    "m-2.index", "m-2.meta"]


def test_old_npz_checkpoints_and_json_state_files_still_work(tmp_path):
    from graphflow.fileformat import file_io
    for step in (1, 2):
        with file_io.atomic_write(tmp_path / f"old-{step}.npz") as f:
            file_io.write_npz(f, {"v": np.array([float(step)], np.float32)})
    (tmp_path / "checkpoint").write_text(json.dumps({
        "format": "graphflow-checkpoint-state", "version": 1,
        "model_checkpoint_path": "old-2", "all_model_checkpoint_paths": ["old-1", "old-2"]}))
    v = tf.Variable([0.0], name="v")
    saver = tf.train.Saver(max_to_keep=2)
    with tf.Session() as sess:
        latest = tf.train.latest_checkpoint(str(tmp_path))
        assert latest == str(tmp_path / "old-2") and tf.train.checkpoint_exists(latest)
        saver.restore(sess, latest)
        assert sess.run(v).tolist() == [2.0]
        assert tf.train.list_variables(str(tmp_path)) == [("v", [1])]
        saver.recover_last_checkpoints(
            tf.train.get_checkpoint_state(str(tmp_path)).all_model_checkpoint_paths)
        saver.save(sess, str(tmp_path / "old"), global_step=3, write_meta_graph=False)
    assert sorted(os.listdir(tmp_path)) == ["checkpoint", "old-2.npz",
                                            "old-3.data-00000-of-00001", "old-3.index"]
    assert tf.train.latest_checkpoint(str(tmp_path)) == str(tmp_path / "old-3")
    os.remove(tmp_path / "old-3.index")
    assert tf.train.latest_checkpoint(str(tmp_path)) == str(tmp_path / "old-2")


def test_damaged_index_or_data_is_a_graph_format_error_before_any_change(tmp_path):
    v = tf.Variable([1.0, 2.0], name="v")
    w = tf.Variable([3.0], name="w")
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        path = tf.train.Saver().save(sess, str(tmp_path / "m"), write_meta_graph=False)
        data = tmp_path / "m.data-00000-of-00001"
        data.write_bytes(data.read_bytes()[:-1] + b"\x01")  # w's last byte
        sess.run([tf.assign(v, [0.0, 0.0]), tf.assign(w, [0.0])])
        with pytest.raises(GraphFormatError, match="tensor 'w' fails its checksum"):
            tf.train.Saver().restore(sess, path)
        assert sess.run(v).tolist() == [0.0, 0.0]
        (tmp_path / "m.index").write_bytes(b"\0" * 100)
        with pytest.raises(GraphFormatError, match="bad magic number"):
            tf.train.Saver().restore(sess, path)
        (tmp_path / "checkpoint").write_text("model_checkpoint_path: 3")
        with pytest.raises(GraphFormatError, match="not a checkpoint state file"):
            tf.train.latest_checkpoint(str(tmp_path))


# ------------------------------------------------------------------ live, with TensorFlow
def _need_tensorflow():
    from tests.tf_reference import tf_python
    if tf_python() is None:
        pytest.skip("TensorFlow is not installed (set GRAPHFLOW_TF_PYTHON to compare with it)")


def test_tensorflow_restores_graphflows_checkpoint_and_continues_training(tmp_path):
    """graphflow trains 3 steps and saves; TensorFlow restores it (Adam slots, beta powers,
    global step), computes the same logits and trains on exactly as graphflow does."""
    _need_tensorflow()
    from tests.tf_reference import run_in_tensorflow
    ckpt = str(tmp_path / "gf")
    mine = mlp_program(tf, np, steps=3, save=os.path.join(ckpt, "model"))
    theirs = run_in_tensorflow([("tf", mlp_program, {"restore": ckpt, "steps": 4})])["tf"]
    np.testing.assert_allclose(theirs["restored_logits"], mine["logits"], atol=1e-6)
    assert str(theirs["restored_from"]) == "3" and theirs["step"] == 7
    assert theirs["names"].tolist() == mine["names"].tolist()
    again = mlp_program(tf, np, restore=ckpt, steps=4)
    np.testing.assert_allclose(theirs["logits"], again["logits"], atol=1e-5)
    np.testing.assert_allclose(theirs["w1"], again["w1"], atol=1e-6)


def tf_reads_checkpoint(tf, np, prefix):
    """TensorFlow's readers on graphflow's files: the reader, list_variables, the state."""
    reader = tf.train.NewCheckpointReader(prefix)
    directory = prefix.rpartition("/")[0]
    out = {}
    for name in reader.get_variable_to_shape_map():
        value = np.asarray(reader.get_tensor(name))
        out[name] = np.array([v.hex() for v in value.reshape(-1)]) if value.dtype == object \
            else value
    out[":latest"] = np.array(tf.train.latest_checkpoint(directory))
    out[":listed"] = np.array([n for n, _ in tf.train.list_variables(directory)])
    return out


def test_tensorflow_reads_every_dtype_and_graphflow_reads_tensorflows_save(tmp_path):
    _need_tensorflow()
    from tests.tf_reference import run_in_tensorflow
    values = _fixture_values("dtypes")
    variables = [tf.Variable(value, name=name) for name, value in values.items()]
    variables.append(tf.Variable(np.array([b"a\x00", b""], object), name="text"))
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        prefix = tf.train.Saver().save(sess, str(tmp_path / "model"), global_step=9)
    got = run_in_tensorflow([("r", tf_reads_checkpoint, {"prefix": prefix})])["r"]
    assert str(got[":latest"]) == prefix
    assert got[":listed"].tolist() == sorted(list(values) + ["text"])
    for name, value in values.items():
        assert got[name].dtype == value.dtype
        np.testing.assert_array_equal(got[name], value)
    assert got["text"].tolist() == [b"a\x00".hex(), ""]
    # and back: TensorFlow saves (from graphflow's checkpoint), graphflow restores
    tf_dir = str(tmp_path / "tf")
    theirs = run_in_tensorflow([("tf", mlp_program, {"restore": None, "steps": 2,
                                                     "save": tf_dir + "/model"})])["tf"]
    mine = mlp_program(tf, np, restore=tf_dir, steps=0)
    np.testing.assert_allclose(mine["restored_logits"], theirs["logits"], atol=1e-6)
    assert mine["step"] == 2
