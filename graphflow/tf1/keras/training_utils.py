"""What `training.Model` needs besides the graph: the `History` callback, batch index ranges,
matching numpy data to a model's inputs, the summary table and the weight-file format (an `.npz`
of the weights in model order plus their names as JSON bytes, written atomically)."""

import json

import numpy as np

from graphflow.fileformat import file_io


class Callback:
    """The base of Keras callbacks: hooks called by `fit` with the logs (`on_train_begin/end`,
    `on_epoch_begin/end`, `on_batch_begin/end`); `self.model` is the model being fitted."""

    def __init__(self):
        self.model, self.params = None, {}

    def set_model(self, model):
        self.model = model

    def set_params(self, params):
        self.params = params

    def on_epoch_begin(self, epoch, logs=None):
        pass

    def on_epoch_end(self, epoch, logs=None):
        pass

    def on_batch_begin(self, batch, logs=None):
        pass

    def on_batch_end(self, batch, logs=None):
        pass

    def on_train_batch_begin(self, batch, logs=None):
        self.on_batch_begin(batch, logs)

    def on_train_batch_end(self, batch, logs=None):
        self.on_batch_end(batch, logs)

    def on_train_begin(self, logs=None):
        pass

    def on_train_end(self, logs=None):
        pass


class _Logs(dict):
    """History's dict: TF1 Keras names accuracy 'acc'; 'accuracy' (TF2's name) reads it too."""

    def __missing__(self, key):
        if isinstance(key, str) and key.endswith("accuracy"):
            short = key[:-len("accuracy")] + "acc"
            if short in self:
                return self[short]
        raise KeyError(key)

    def __contains__(self, key):
        return dict.__contains__(self, key) or (
            isinstance(key, str) and key.endswith("accuracy")
            and dict.__contains__(self, key[:-len("accuracy")] + "acc"))

    def get(self, key, default=None):
        return self[key] if key in self else default


class History(Callback):
    """`fit`'s return value: `history` = {metric name: [value per epoch]}, `epoch` = [indices].
    Accuracy is named 'acc' (and 'val_acc') as TF1 Keras named it; `history['accuracy']`
    reads the same list."""

    def __init__(self, model=None, params=None):
        super().__init__()
        self.model, self.params = model, dict(params or {})
        self.history, self.epoch = _Logs(), []

    def on_epoch_end(self, epoch, logs=None):
        self.epoch.append(epoch)
        for key, value in (logs or {}).items():
            self.history.setdefault(key, []).append(value)


def batches(n, batch_size, order):
    """Index arrays of consecutive batches over `n` rows (in `order` when given)."""
    order = np.arange(n) if order is None else order
    for start in range(0, n, int(batch_size)):
        yield order[start:start + int(batch_size)]


def standardize(data, tensors, what):
    """`data` (an array, a list of arrays or a dict by tensor name) as a list matching `tensors`,
    each array cast to its tensor's dtype and checked against its static shape."""
    if isinstance(data, dict):
        by_name = {t.name.split(":")[0]: t for t in tensors}
        missing = [n for n in by_name if n not in data]
        if missing:
            raise ValueError(f"No data provided for {what}s {missing}")
        data = [data[n] for n in by_name]
    arrays = data if isinstance(data, (list, tuple)) else [data]
    if len(arrays) != len(tensors):
        raise ValueError(f"The model expects {len(tensors)} {what} arrays, got {len(arrays)}")
    out = []
    for tensor, array in zip(tensors, arrays):
        array = np.asarray(array, dtype=tensor.dtype.as_numpy_dtype)
        dims = tensor.shape.as_list() if tensor.shape.ndims is not None else None
        if dims is not None and array.ndim == 1 and len(dims) == 2 and dims[1] == 1:
            array = array.reshape(-1, 1)   # Keras takes a vector for a one-unit output
        if dims is not None and (array.ndim != len(dims) or any(
                d is not None and d != a for d, a in zip(dims[1:], array.shape[1:]))):
            raise ValueError(f"Error when checking {what}: expected {tensor.name.split(':')[0]} "
                             f"to have shape {dims} but got array with shape {array.shape}")
        out.append(array)
    return out


def summary_lines(model):
    """The lines of `model.summary()`: layer, output shape, parameter count, and the totals."""
    rule = "_" * 65
    lines = [f'Model: "{model.name}"', rule,
             f"{'Layer (type)':<29}{'Output Shape':<26}{'Param #':<10}", "=" * 65]
    for layer in model.layers:
        try:
            shape = str(layer.output_shape).replace("None", "None")
        except AttributeError:
            shape = "multiple"
        lines += [f"{layer.name + ' (' + type(layer).__name__ + ')':<29}{shape:<26}"
                  f"{layer.count_params():<10}", rule]
    lines[-1] = "=" * 65
    trainable = int(sum(np.prod(w.shape.as_list()) for w in model.trainable_weights))
    total = int(sum(np.prod(w.shape.as_list()) for w in model.weights))
    lines += [f"Total params: {total:,}", f"Trainable params: {trainable:,}",
              f"Non-trainable params: {total - trainable:,}", rule]
    return lines


def write_weights(path, names, values, extra=None):
    """The weights file; `extra` adds text entries (stored as utf-8 bytes) by name."""
    arrays = {f"w{i:05d}": np.asarray(v) for i, v in enumerate(values)}
    arrays["names"] = np.frombuffer(json.dumps(list(names)).encode(), dtype=np.uint8)
    for key, text in (extra or {}).items():
        arrays[key] = np.frombuffer(text.encode(), dtype=np.uint8)
    with file_io.atomic_write(path) as f:
        file_io.write_npz(f, arrays)


def read_weights(path):
    """(names, arrays) from a file `write_weights` wrote."""
    with np.load(path, allow_pickle=False) as data:
        if "names" not in data.files:
            raise ValueError(f"{path} is not a graphflow Keras weights file (no 'names' entry)")
        names = json.loads(data["names"].tobytes().decode())
        values = [data[f"w{i:05d}"] for i in range(len(names))]
    return names, values


__all__ = ["Callback", "History"]
