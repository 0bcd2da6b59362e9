"""tf.keras.callbacks: early stopping stops (and restores the best weights), checkpoints are
written per epoch or only when better, the learning-rate schedule reaches the optimizer's
variable and the update, CSVLogger rows, LambdaCallback hooks, TerminateOnNaN."""

import csv
import math

import numpy as np
import pytest

import graphflow as tf


def _data(n=200, seed=0):
    rng = np.random.RandomState(seed)
    x = rng.randn(n, 3).astype(np.float32)
    y = (x @ np.array([[1.0], [-2.0], [0.5]], np.float32) + 0.3).astype(np.float32)
    return x, y


def _model(optimizer="sgd"):
    tf.keras.backend.clear_session()
    tf.set_random_seed(0)
    model = tf.keras.Sequential([tf.keras.layers.Dense(1, input_shape=(3,))])
    model.compile(optimizer=optimizer, loss="mse")
    return model


class _Fixed(tf.keras.callbacks.Callback):
    """Replaces the logs' `val_loss` with the given sequence (a controlled plateau)."""

    def __init__(self, values):
        super().__init__()
        self.values = values

    def on_epoch_end(self, epoch, logs=None):
        logs["val_loss"] = self.values[epoch]


def test_early_stopping_stops_after_patience_and_restores_best_weights():
    x, y = _data()
    model = _model()
    values = [1.0, 0.5, 0.6, 0.55, 0.7, 0.3, 0.2, 0.1, 0.1, 0.1]
    snapshots = []
    keep = tf.keras.callbacks.LambdaCallback(
        on_epoch_end=lambda e, logs: snapshots.append(model.get_weights()))
    stop = tf.keras.callbacks.EarlyStopping(monitor="val_loss", patience=3,
                                            restore_best_weights=True)
    history = model.fit(x, y, epochs=10, verbose=0, callbacks=[_Fixed(values), keep, stop])
    assert history.epoch == [0, 1, 2, 3, 4]          # best at epoch 1, three without improving
    assert stop.stopped_epoch == 4 and model.stop_training
    for got, want in zip(model.get_weights(), snapshots[1]):
        np.testing.assert_array_equal(got, want)
    # min_delta: an improvement smaller than it does not count
    model = _model()
    stop = tf.keras.callbacks.EarlyStopping(monitor="val_loss", patience=2, min_delta=0.2)
    history = model.fit(x, y, epochs=10, verbose=0,
                        callbacks=[_Fixed([1.0, 0.9, 0.85, 0.5, 0.4, 0.35] + [0] * 4), stop])
    assert history.epoch == [0, 1, 2]


def test_early_stopping_on_real_loss_stops_a_plateaued_fit():
    x, y = _data()
    model = _model(tf.keras.optimizers.SGD(0.1))
    stop = tf.keras.callbacks.EarlyStopping(monitor="loss", patience=2, min_delta=1e-4)
    history = model.fit(x, y, epochs=200, batch_size=200, verbose=0, callbacks=[stop])
    assert len(history.epoch) < 200 and history.history["loss"][-1] < 1e-3


def test_model_checkpoint_writes_epoch_files_and_best_only(tmp_path):
    x, y = _data()
    model = _model()
    pattern = str(tmp_path / "w.{epoch:02d}-{loss:.3f}.npz")
    history = model.fit(x, y, epochs=3, verbose=0,
                        callbacks=[tf.keras.callbacks.ModelCheckpoint(pattern,
                                                                      save_weights_only=True)])
    names = sorted(p.name for p in tmp_path.iterdir())
    assert names == [f"w.{e + 1:02d}-{loss:.3f}.npz"
                     for e, loss in enumerate(history.history["loss"])]
    final = model.get_weights()
    model.set_weights([np.zeros_like(w) for w in final])
    model.load_weights(str(tmp_path / names[-1]))
    for got, want in zip(model.get_weights(), final):
        np.testing.assert_array_equal(got, want)

    best = tmp_path / "best"
    best.mkdir()
    model = _model()
    saved = []
    check = tf.keras.callbacks.ModelCheckpoint(str(best / "e{epoch}.npz"), monitor="val_loss",
                                               save_best_only=True)
    model.fit(x, y, epochs=5, verbose=0, callbacks=[
        _Fixed([1.0, 2.0, 0.5, 0.7, 0.4]), check,
        tf.keras.callbacks.LambdaCallback(on_epoch_end=lambda e, logs: saved.append(
            sorted(p.name for p in best.iterdir())))])
    assert saved[-1] == ["e1.npz", "e3.npz", "e5.npz"]
    # without save_weights_only the files hold whole models
    expected = model.predict(x[:5])
    tf.keras.backend.clear_session()
    loaded = tf.keras.models.load_model(str(best / "e5.npz"))
    np.testing.assert_allclose(loaded.predict(x[:5]), expected, rtol=1e-6)


def test_learning_rate_scheduler_sets_the_variable_the_update_reads():
    x, y = _data(32)
    model = _model(tf.keras.optimizers.SGD(0.1))
    rates, steps = [], []
    weights_before = []

    def schedule(epoch, lr):
        return 0.1 * 0.5 ** epoch if epoch < 2 else 0.0

    sched = tf.keras.callbacks.LearningRateScheduler(schedule)
    keep = tf.keras.callbacks.LambdaCallback(
        on_epoch_begin=lambda e, logs: weights_before.append(model.get_weights()),
        on_epoch_end=lambda e, logs: (rates.append(logs["lr"]),
                                      steps.append(model.get_weights())))
    history = model.fit(x, y, epochs=3, batch_size=32, shuffle=False, verbose=0,
                        callbacks=[sched, keep])
    assert rates == pytest.approx([0.1, 0.05, 0.0])
    assert history.history["lr"] == pytest.approx([0.1, 0.05, 0.0])
    assert tf.keras.backend.get_value(model.optimizer.lr) == pytest.approx(0.0)
    # one full batch per epoch: w -= lr * dL/dw, so the step halves and then stops
    kernel, bias = weights_before[1]
    error = x @ kernel + bias - y
    grad = 2.0 * x.T @ error / len(x)
    np.testing.assert_allclose(steps[1][0], kernel - 0.05 * grad, rtol=1e-4, atol=1e-6)
    np.testing.assert_array_equal(steps[2][0], steps[1][0])
    # one-argument schedules, and a tf.train optimizer without `lr` is refused
    model = _model(tf.keras.optimizers.Adam())
    model.fit(x, y, epochs=2, verbose=0,
              callbacks=[tf.keras.callbacks.LearningRateScheduler(lambda epoch: 0.25)])
    assert tf.keras.backend.get_value(model.optimizer.learning_rate) == pytest.approx(0.25)
    model = _model(tf.train.GradientDescentOptimizer(0.1))
    with pytest.raises(ValueError, match='"lr"'):
        model.fit(x, y, epochs=1, verbose=0,
                  callbacks=[tf.keras.callbacks.LearningRateScheduler(lambda epoch: 0.1)])


def test_reduce_lr_on_plateau_multiplies_the_rate():
    x, y = _data(32)
    model = _model(tf.keras.optimizers.SGD(0.1))
    reduce = tf.keras.callbacks.ReduceLROnPlateau(monitor="val_loss", factor=0.5, patience=2,
                                                  min_lr=0.02)
    history = model.fit(x, y, epochs=8, verbose=0, callbacks=[
        _Fixed([1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0]), reduce])
    assert history.history["lr"] == pytest.approx([0.1, 0.1, 0.1, 0.05, 0.05, 0.025, 0.025,
                                                   0.02])


@pytest.mark.filterwarnings("ignore:overflow")
def test_csv_logger_lambda_and_terminate_on_nan(tmp_path):
    x, y = _data()
    model = _model()
    path = tmp_path / "log.csv"
    events = []
    hooks = tf.keras.callbacks.LambdaCallback(
        on_train_begin=lambda logs: events.append("begin"),
        on_epoch_begin=lambda e, logs: events.append(f"epoch{e}"),
        on_train_end=lambda logs: events.append("end"))
    history = model.fit(x, y, epochs=3, verbose=0, validation_split=0.25,
                        callbacks=[tf.keras.callbacks.CSVLogger(str(path)), hooks])
    assert events == ["begin", "epoch0", "epoch1", "epoch2", "end"]
    with open(path) as f:
        rows = list(csv.DictReader(f))
    assert [r["epoch"] for r in rows] == ["0", "1", "2"]
    assert [float(r["val_loss"]) for r in rows] == pytest.approx(history.history["val_loss"])

    model = _model(tf.keras.optimizers.SGD(1e6))           # diverges to inf, then nan
    batches = []
    history = model.fit(x * 1e3, y, epochs=5, batch_size=10, verbose=0, shuffle=False, callbacks=[
        tf.keras.callbacks.TerminateOnNaN(),
        tf.keras.callbacks.LambdaCallback(on_batch_end=lambda b, logs: batches.append(
            logs["loss"]))])
    assert len(history.epoch) == 1 and not math.isfinite(batches[-1])
    assert all(math.isfinite(v) for v in batches[:-1]) and len(batches) < 20

