"""Tests for graphflow/tf1/summary_hooks.py: SummarySaverHook, StepCounterHook and ProfilerHook
with a MonitoredSession (the steps they write at, as TensorFlow's hooks do; the timelines), and
MonitoredTrainingSession's summary hooks."""

import glob
import json
import os

import pytest

import graphflow as tf
from tests.tf_reference import run_in_tensorflow, tf_python

event_accumulator = pytest.importorskip(
    "tensorboard.backend.event_processing.event_accumulator",
    reason="tf.summary needs the tensorboard package")


def _events(logdir):
    return [e for path in sorted(glob.glob(os.path.join(str(logdir), "events.out.tfevents*")))
            for e in tf.train.summary_iterator(path)]


def _scalars(logdir, tag):
    return [(e.step, v.simple_value) for e in _events(logdir) for v in e.summary.value
            if v.tag == tag]


def _model():
    step = tf.train.get_or_create_global_step()
    w = tf.Variable(3.0)
    loss = tf.square(w)
    tf.summary.scalar("loss", loss)
    train = tf.train.GradientDescentOptimizer(0.1).minimize(loss, global_step=step)
    return loss, train


def tf_hook_steps(tf, np, logdir):
    """The steps TensorFlow's SummarySaverHook(save_steps=2) writes at over 6 runs and the
    timelines ProfilerHook(save_steps=2) writes over them."""
    import glob
    import os
    step = tf.train.get_or_create_global_step()
    w = tf.Variable(3.0)
    loss = tf.square(w)
    summary = tf.summary.scalar("loss", loss)
    train = tf.train.GradientDescentOptimizer(0.1).minimize(loss, global_step=step)
    hooks = [tf.train.SummarySaverHook(save_steps=2, output_dir=logdir, summary_op=summary),
             tf.train.ProfilerHook(save_steps=2, output_dir=logdir)]
    with tf.train.MonitoredSession(hooks=hooks) as sess:
        for _ in range(6):
            sess.run(train)
    tf.summary.FileWriterCache.clear()
    steps = [e.step for path in glob.glob(os.path.join(logdir, "events*"))
             for e in tf.train.summary_iterator(path) if e.summary.value
             and e.summary.value[0].tag == "loss"]
    timelines = sorted(int(p.split("-")[-1][:-5]) for p in glob.glob(logdir + "/timeline-*"))
    return {"steps": sorted(steps), "timelines": timelines}


# Made by a Python with TensorFlow 2.21 running tf_hook_steps
TF_STEPS = {"steps": [1, 3, 5], "timelines": [2, 4, 6]}


def _graphflow_hook_steps(logdir):
    loss, train = _model()
    hooks = [tf.train.SummarySaverHook(save_steps=2, output_dir=logdir,
                                       summary_op=tf.summary.merge_all()),
             tf.train.ProfilerHook(save_steps=2, output_dir=logdir)]
    with tf.train.MonitoredSession(hooks=hooks) as sess:
        for _ in range(6):
            sess.run(train)
    tf.summary.FileWriterCache.clear()
    steps = [s for s, _ in _scalars(logdir, "loss")]
    timelines = sorted(int(p.split("-")[-1][:-5]) for p in glob.glob(logdir + "/timeline-*"))
    return {"steps": steps, "timelines": timelines}


def test_hooks_write_at_tensorflows_steps(tmp_path):
    ours = _graphflow_hook_steps(str(tmp_path))
    assert ours == TF_STEPS
    with open(os.path.join(str(tmp_path), "timeline-4.json")) as f:
        trace = json.load(f)
    names = {e.get("args", {}).get("name") for e in trace["traceEvents"]}
    assert any(n and "GradientDescent" in n for n in names)
    acc = event_accumulator.EventAccumulator(str(tmp_path))
    acc.Reload()
    assert "step_4" in acc.Tags()["run_metadata"]


def test_hooks_match_tensorflow_live(tmp_path):
    if tf_python() is None:
        pytest.skip("TensorFlow is not installed (set GRAPHFLOW_TF_PYTHON to compare with it)")
    theirs = run_in_tensorflow([("h", tf_hook_steps, {"logdir": str(tmp_path / "tf")})])["h"]
    ours = _graphflow_hook_steps(str(tmp_path / "gf"))
    assert ours == {k: [int(v) for v in theirs[k]] for k in ours}


def test_monitored_training_session_writes_summaries_and_steps_per_second(tmp_path):
    loss, train = _model()
    profiler = tf.train.ProfilerHook(save_steps=3, output_dir=str(tmp_path / "profile"))
    with tf.train.MonitoredTrainingSession(checkpoint_dir=str(tmp_path), save_summaries_steps=3,
                                           log_step_count_steps=2, hooks=[profiler]) as sess:
        for _ in range(7):
            sess.run(train)
    tf.summary.FileWriterCache.clear()
    # TensorFlow 2.21 writes this session's 'loss' at steps 1, 4, 7 and global_step/sec at 3, 5, 7
    assert [s for s, _ in _scalars(tmp_path, "loss")] == [1, 4, 7]
    rates = _scalars(tmp_path, "global_step/sec")
    assert [s for s, _ in rates] == [3, 5, 7] and all(r > 0 for _, r in rates)
    timelines = sorted(n for n in os.listdir(tmp_path / "profile") if n.startswith("timeline"))
    assert timelines == ["timeline-3.json", "timeline-6.json"]  # not step 1, then every 3


def test_hook_arguments():
    with pytest.raises(ValueError, match="Exactly one of scaffold or summary_op"):
        tf.train.SummarySaverHook(save_steps=1)
    with pytest.raises(ValueError, match="every_secs or every_steps"):
        tf.train.SummarySaverHook(summary_op=tf.constant(""))
    tf.Variable(1.0)
    hook = tf.train.StepCounterHook(every_n_steps=1)
    with pytest.raises(RuntimeError, match="Global step should be created"):
        hook.begin()
