"""`tf.keras.utils`: `to_categorical` (class indices to one-hot rows) and `normalize`."""

import numpy as np


def to_categorical(y, num_classes=None, dtype="float32"):
    """Integer class vector (any shape) -> one-hot array with a last axis of `num_classes`."""
    y = np.array(y, dtype="int")
    shape = y.shape
    if shape and shape[-1] == 1 and len(shape) > 1:
        shape = shape[:-1]
    y = y.ravel()
    if num_classes is None:
        num_classes = int(np.max(y)) + 1
    if y.size and (y.min() < 0 or y.max() >= num_classes):
        raise ValueError(f"to_categorical: class indices must be in [0, {num_classes}), got "
                         f"[{y.min()}, {y.max()}]")
    out = np.zeros((y.shape[0], num_classes), dtype=dtype)
    out[np.arange(y.shape[0]), y] = 1
    return out.reshape(shape + (num_classes,))


def normalize(x, axis=-1, order=2):
    norms = np.atleast_1d(np.linalg.norm(x, order, axis))
    norms[norms == 0] = 1
    return x / np.expand_dims(norms, axis)


__all__ = ["to_categorical", "normalize"]
