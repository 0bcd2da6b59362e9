"""`tf.keras.callbacks`: the hooks `fit` calls (`CallbackList`) and TF 1.15 Keras's common
callbacks: EarlyStopping, ModelCheckpoint (`model.save` or `save_weights`, graphflow's .npz),
LearningRateScheduler and ReduceLROnPlateau (on the Keras optimizer's learning-rate variable),
CSVLogger, LambdaCallback and TerminateOnNaN; `Callback` and `History` come from
`training_utils`."""

import csv
import os

import numpy as np

from graphflow.tf1.keras import backend
from graphflow.tf1.keras.training_utils import Callback, History


class CallbackList:
    """The callbacks of one `fit`, each given the model and the params, hooks called in order
    (a hook a duck-typed callback lacks is skipped)."""

    def __init__(self, callbacks, model, params):
        self.callbacks = list(callbacks)
        for cb in self.callbacks:
            if hasattr(cb, "set_model"):
                cb.set_model(model)
            if hasattr(cb, "set_params"):
                cb.set_params(dict(params))

    def call(self, hook, *args):
        for cb in self.callbacks:
            method = getattr(cb, hook, None)
            if method is not None:
                method(*args)

    def call_batch(self, when, batch, logs):
        """`on_train_batch_<when>` (TF 1.15's name; the base class passes it on to
        `on_batch_<when>`), or `on_batch_<when>` for a callback without it."""
        for cb in self.callbacks:
            method = getattr(cb, f"on_train_batch_{when}", None) or \
                getattr(cb, f"on_batch_{when}", None)
            if method is not None:
                method(batch, logs)


def _monitor_op(mode, monitor):
    if mode not in ("auto", "min", "max"):
        mode = "auto"
    if mode == "max" or (mode == "auto" and ("acc" in monitor or monitor.startswith("fmeasure"))):
        return np.greater
    return np.less


class EarlyStopping(Callback):
    """Stops `fit` (`model.stop_training`) once `monitor` has not improved by more than
    `min_delta` for `patience` epochs; `restore_best_weights` puts the best epoch's weights back
    when it stops."""

    def __init__(self, monitor="val_loss", min_delta=0, patience=0, verbose=0, mode="auto",
                 baseline=None, restore_best_weights=False):
        super().__init__()
        self.monitor, self.patience, self.verbose = monitor, int(patience), verbose
        self.baseline, self.restore_best_weights = baseline, restore_best_weights
        self.monitor_op = _monitor_op(mode, monitor)
        self.min_delta = abs(min_delta) if self.monitor_op is np.greater else -abs(min_delta)
        self.wait, self.stopped_epoch, self.best_weights = 0, 0, None

    def on_train_begin(self, logs=None):
        self.wait, self.stopped_epoch, self.best_weights = 0, 0, None
        if self.baseline is not None:
            self.best = self.baseline
        else:
            self.best = np.inf if self.monitor_op is np.less else -np.inf

    def on_epoch_end(self, epoch, logs=None):
        current = (logs or {}).get(self.monitor)
        if current is None:
            print(f"WARNING: early stopping conditioned on metric `{self.monitor}`, which is not "
                  f"available. Available metrics are: {','.join(logs or {})}")
            return
        if self.monitor_op(current - self.min_delta, self.best):
            self.best, self.wait = current, 0
            if self.restore_best_weights:
                self.best_weights = self.model.get_weights()
            return
        self.wait += 1
        if self.wait >= self.patience:
            self.stopped_epoch = epoch
            self.model.stop_training = True
            if self.restore_best_weights and self.best_weights is not None:
                self.model.set_weights(self.best_weights)

    def on_train_end(self, logs=None):
        if self.stopped_epoch > 0 and self.verbose > 0:
            print(f"Epoch {self.stopped_epoch + 1:05d}: early stopping")


class ModelCheckpoint(Callback):
    """Saves the model's weights after epochs to `filepath` formatted with the epoch (1-based)
    and the logs (`'w.{epoch:02d}-{val_loss:.2f}.npz'`); with `save_best_only`, only when
    `monitor` improved. The whole model (`model.save`, read by `load_model`) or, with
    `save_weights_only`, the weights (`save_weights`, read by `load_weights`)."""

    def __init__(self, filepath, monitor="val_loss", verbose=0, save_best_only=False,
                 save_weights_only=False, mode="auto", save_freq="epoch", period=1, **kwargs):
        super().__init__()
        self.filepath, self.monitor, self.verbose = filepath, monitor, verbose
        self.save_best_only, self.save_weights_only = save_best_only, save_weights_only
        self.period, self.since_last = int(period), 0
        self.monitor_op = _monitor_op(mode, monitor)
        self.best = np.inf if self.monitor_op is np.less else -np.inf

    def on_epoch_end(self, epoch, logs=None):
        logs = logs or {}
        self.since_last += 1
        if self.since_last < self.period:
            return
        self.since_last = 0
        path = self.filepath.format(epoch=epoch + 1, **logs)
        if self.save_best_only:
            current = logs.get(self.monitor)
            if current is None:
                print(f"WARNING: can save best model only with {self.monitor} available, "
                      "skipping.")
                return
            if not self.monitor_op(current, self.best):
                return
            self.best = current
        if self.verbose > 0:
            print(f"Epoch {epoch + 1:05d}: saving model to {path}")
        if self.save_weights_only:
            self.model.save_weights(path, overwrite=True)
        else:
            self.model.save(path, overwrite=True)


def _rate_variable(model):
    optimizer = model.optimizer
    if optimizer is None or not hasattr(optimizer, "lr"):
        raise ValueError('Optimizer must have a "lr" attribute.')
    return optimizer.lr


class LearningRateScheduler(Callback):
    """Sets the optimizer's learning rate at each epoch's start to `schedule(epoch)` (or
    `schedule(epoch, lr)` for a two-argument schedule)."""

    def __init__(self, schedule, verbose=0):
        super().__init__()
        self.schedule, self.verbose = schedule, verbose

    def on_epoch_begin(self, epoch, logs=None):
        variable = _rate_variable(self.model)
        try:
            lr = self.schedule(epoch, float(backend.get_value(variable)))
        except TypeError:
            lr = self.schedule(epoch)
        if not isinstance(lr, (float, int, np.floating, np.integer)):
            raise ValueError('The output of the "schedule" function should be float.')
        backend.set_value(variable, float(lr))
        if self.verbose > 0:
            print(f"\nEpoch {epoch + 1:05d}: LearningRateScheduler setting learning rate to "
                  f"{lr}.")

    def on_epoch_end(self, epoch, logs=None):
        if logs is not None:
            logs["lr"] = float(backend.get_value(_rate_variable(self.model)))


class ReduceLROnPlateau(Callback):
    """Multiplies the learning rate by `factor` (not below `min_lr`) once `monitor` has not
    improved by `min_delta` for `patience` epochs, then waits `cooldown` epochs."""

    def __init__(self, monitor="val_loss", factor=0.1, patience=10, verbose=0, mode="auto",
                 min_delta=1e-4, cooldown=0, min_lr=0, **kwargs):
        super().__init__()
        if factor >= 1.0:
            raise ValueError("ReduceLROnPlateau does not support a factor >= 1.0.")
        self.monitor, self.factor, self.patience = monitor, factor, patience
        self.verbose, self.min_delta, self.cooldown, self.min_lr = verbose, min_delta, cooldown, \
            min_lr
        self.monitor_op = _monitor_op(mode, monitor)
        self.cooldown_counter, self.wait = 0, 0
        self.best = np.inf if self.monitor_op is np.less else -np.inf

    def _improved(self, current):
        if self.monitor_op is np.less:
            return current < self.best - self.min_delta
        return current > self.best + self.min_delta

    def on_epoch_end(self, epoch, logs=None):
        logs = logs if logs is not None else {}
        variable = _rate_variable(self.model)
        logs["lr"] = float(backend.get_value(variable))
        current = logs.get(self.monitor)
        if current is None:
            return
        if self.cooldown_counter > 0:
            self.cooldown_counter -= 1
            self.wait = 0
        if self._improved(current):
            self.best, self.wait = current, 0
        elif self.cooldown_counter <= 0:
            self.wait += 1
            if self.wait >= self.patience:
                old = logs["lr"]
                if old > self.min_lr:
                    new = max(old * self.factor, self.min_lr)
                    backend.set_value(variable, new)
                    if self.verbose > 0:
                        print(f"\nEpoch {epoch + 1:05d}: ReduceLROnPlateau reducing learning "
                              f"rate to {new}.")
                    self.cooldown_counter, self.wait = self.cooldown, 0


class CSVLogger(Callback):
    """Writes one CSV row per epoch: `epoch` then the logs' keys (sorted), to `filename`."""

    def __init__(self, filename, separator=",", append=False):
        super().__init__()
        self.filename, self.sep, self.append = filename, separator, append
        self.keys, self.file, self.writer = None, None, None

    def on_train_begin(self, logs=None):
        exists = self.append and os.path.exists(self.filename) and \
            os.path.getsize(self.filename) > 0
        self.file = open(self.filename, "a" if self.append else "w", newline="")
        self.append_header = not exists
        self.keys, self.writer = None, None

    def on_epoch_end(self, epoch, logs=None):
        logs = logs or {}
        if self.keys is None:
            self.keys = sorted(logs)
        if self.writer is None:
            self.writer = csv.DictWriter(self.file, fieldnames=["epoch"] + self.keys,
                                         delimiter=self.sep)
            if self.append_header:
                self.writer.writeheader()
        row = {"epoch": epoch}
        row.update((k, logs.get(k, "NA")) for k in self.keys)
        self.writer.writerow(row)
        self.file.flush()

    def on_train_end(self, logs=None):
        if self.file is not None:
            self.file.close()
        self.file, self.writer = None, None


class LambdaCallback(Callback):
    """A callback from functions: `on_epoch_begin(epoch, logs)`, `on_epoch_end(epoch, logs)`,
    `on_batch_begin(batch, logs)`, `on_batch_end(batch, logs)`, `on_train_begin(logs)`,
    `on_train_end(logs)`."""

    def __init__(self, on_epoch_begin=None, on_epoch_end=None, on_batch_begin=None,
                 on_batch_end=None, on_train_begin=None, on_train_end=None, **kwargs):
        super().__init__()
        hooks = {"on_epoch_begin": on_epoch_begin, "on_epoch_end": on_epoch_end,
                 "on_batch_begin": on_batch_begin, "on_batch_end": on_batch_end,
                 "on_train_begin": on_train_begin, "on_train_end": on_train_end}
        for name, fn in hooks.items():
            if fn is not None:
                setattr(self, name, fn)


class TerminateOnNaN(Callback):
    """Stops training at the first batch whose loss is NaN or infinite."""

    def on_batch_end(self, batch, logs=None):
        loss = (logs or {}).get("loss")
        if loss is not None and not np.isfinite(loss):
            print(f"Batch {batch}: Invalid loss, terminating training")
            self.model.stop_training = True


__all__ = ["Callback", "History", "EarlyStopping", "ModelCheckpoint", "LearningRateScheduler",
           "ReduceLROnPlateau", "CSVLogger", "LambdaCallback", "TerminateOnNaN"]
