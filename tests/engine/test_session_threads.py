"""Session's thread contract (docs/sessions.md): snapshots of the variables taken while other
threads train are whole steps; a session closed while another thread compiles or runs makes that
thread raise "Attempted to use a closed Session."."""

import sys
import threading
import time

import numpy as np
import pytest

import graphflow as tf
from graphflow.engine import executor
from tests.tooling import run_on_threads


def _adam_model():
    """Variables trained by Adam with constant gradients, and a step counter updated in the same
    run; `w` is large enough for the compiled update, which, as the run's last op, writes the
    variable and its slots in place."""
    w = tf.Variable(tf.zeros([128, 128]), name="w")
    b = tf.Variable(tf.zeros([8]), name="b")
    step = tf.Variable(tf.constant(0, tf.int64), name="step", trainable=False)
    loss = tf.reduce_sum(w * 0.5) + tf.reduce_sum(b * 2.0)
    opt = tf.train.AdamOptimizer(0.01, use_locking=True)
    train = tf.group(opt.minimize(loss), tf.assign_add(step, 1, use_locking=True))
    return train


def _probe(values):
    """(step, the first element of every other variable and slot) of {name: array}."""
    return int(values["step"]), tuple(sorted(
        (name, np.asarray(value).reshape(-1)[0].item()) for name, value in values.items()
        if name != "step"))


def _states(train, init, steps):
    """{step: probe} of the states a single thread goes through (use_locking runs from several
    threads go through the same ones, one run at a time)."""
    states = {}
    with tf.Session() as sess:
        sess.run(init)
        for _ in range(steps + 1):
            step, probe = _probe(sess.variable_values())
            states[step] = probe
            sess.run(train)
    return states


@pytest.fixture
def fine_thread_switches():
    """Switch threads every microsecond (not every 5 ms), so a reader lands between a run's
    updates far more often than it would by chance."""
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    yield
    sys.setswitchinterval(interval)


def test_snapshots_taken_while_threads_train_adam_are_whole_steps(fine_thread_switches):
    steps, trainers = 300, 2
    train = _adam_model()
    init = tf.global_variables_initializer()
    states = _states(train, init, steps)
    taken, wrong = [0], []
    finished = []
    with tf.Session() as sess:
        sess.run(init)

        def work(k):
            if k < trainers:
                for _ in range(steps // trainers):
                    sess.run(train)
                finished.append(k)
                return
            while len(finished) < trainers or not taken[0]:
                step, probe = _probe(sess.variable_values())
                taken[0] += 1
                if probe != states[step]:
                    wrong.append(step)
        assert run_on_threads(work, trainers + 2) == []
        assert sess.variable_values()["step"] == steps
    assert not wrong, f"{len(wrong)} of {taken[0]} snapshots mix steps (e.g. at step {wrong[0]})"


def test_saver_writes_a_whole_step_while_threads_train(tmp_path, fine_thread_switches):
    steps = 200
    train = _adam_model()
    init = tf.global_variables_initializer()
    states = _states(train, init, steps)
    saver = tf.train.Saver(max_to_keep=None)
    with tf.Session() as sess:
        sess.run(init)
        thread = threading.Thread(target=lambda: [sess.run(train) for _ in range(steps)])
        thread.start()
        paths = []
        while thread.is_alive():
            paths.append(saver.save(sess, str(tmp_path / "m"), global_step=len(paths),
                                    write_meta_graph=False))
        thread.join()
    wrong = []
    for path in paths:
        reader = tf.train.NewCheckpointReader(path)
        step, probe = _probe({name: reader.get_tensor(name) for name in reader.get_variable_to_shape_map()})
        if probe != states[step]:
            wrong.append(step)
    assert not wrong, f"{len(wrong)} of {len(paths)} checkpoints mix steps"


def test_close_while_another_thread_compiles_says_the_session_is_closed(monkeypatch):
    x = tf.Variable(1.0)
    y = x * 3.0
    sess = tf.Session()
    sess.run(x.initializer)
    compiling, closed = threading.Event(), threading.Event()
    real_plan = executor.Plan

    def slow_plan(*args, **kwargs):
        compiling.set()
        assert closed.wait(10)
        return real_plan(*args, **kwargs)
    monkeypatch.setattr("graphflow.engine.session.Plan", slow_plan)
    errors = []

    def run():
        try:
            sess.run(y)
        except Exception as exc:  # noqa: BLE001 - checked below
            errors.append(exc)
    thread = threading.Thread(target=run)
    thread.start()
    assert compiling.wait(10)
    sess.close()
    closed.set()
    thread.join()
    assert len(errors) == 1 and type(errors[0]) is RuntimeError, errors
    assert str(errors[0]) == "Attempted to use a closed Session."
    with pytest.raises(RuntimeError, match="^Attempted to use a closed Session.$"):
        sess.run(y)


def test_close_while_another_thread_runs_says_the_session_is_closed():
    v = tf.Variable(tf.zeros([64, 64]))
    step = v.assign(tf.matmul(v, v) * 0.0 + 1.0)
    sess = tf.Session()
    sess.run(v.initializer)
    sess.run(step)
    stop_at = time.monotonic() + 0.3
    errors = []

    def work(k):
        if k == 1:
            time.sleep(0.05)
            sess.close()
            return
        try:
            while time.monotonic() < stop_at:
                sess.run(step)
        except Exception as exc:  # noqa: BLE001 - checked below
            errors.append(exc)
    assert run_on_threads(work, 2) == []
    assert len(errors) == 1 and type(errors[0]) is RuntimeError, errors
    assert str(errors[0]) == "Attempted to use a closed Session."
