"""`tf.estimator.inputs` (also `tf.compat.v1.estimator.inputs`): `numpy_input_fn`.

The returned input_fn builds one placeholder per feature (and label) array, shaped
`[None] + array.shape[1:]` with the array's dtype, and registers an `ArrayFeeder` that monitored
sessions use to feed successive batches (see `graphflow.tf1.input_feeders`).
"""

import collections

import numpy as np

from graphflow.framework.dtypes import as_dtype
from graphflow.framework.graph import get_default_graph, name_scope
from graphflow.ops.core_ops import placeholder
from graphflow.tf1.input_feeders import INPUT_FEEDERS, ArrayFeeder


def _as_arrays(value, what):
    if isinstance(value, dict):
        if not value:
            raise ValueError(f"{what} cannot be an empty dict")
        return collections.OrderedDict((k, np.asarray(v)) for k, v in value.items())
    return np.asarray(value)


def _placeholder_for(array, name):
    if array.ndim == 0:
        raise ValueError(f"input '{name}' must have a batch dimension, got a scalar")
    return placeholder(as_dtype(array.dtype), [None] + list(array.shape[1:]), name=name)


def numpy_input_fn(x, y=None, batch_size=128, num_epochs=1, shuffle=None, queue_capacity=1000,
                   num_threads=1):
    """An input_fn giving `(features, labels)` batches of numpy data: `x` is an array or a dict
    of arrays (features), `y` an array or a dict of arrays (labels) or None. `num_epochs=None`
    repeats forever; `shuffle` must be given as a bool (TF1 requires it)."""
    if not isinstance(shuffle, bool):
        raise ValueError(f"shuffle must be provided explicitly as a bool, got {shuffle}")
    if num_epochs is not None and int(num_epochs) <= 0:
        raise ValueError(f"num_epochs must be None or positive, got {num_epochs}")
    features_data = _as_arrays(x, "x")
    labels_data = None if y is None else _as_arrays(y, "y")
    if isinstance(features_data, dict) and isinstance(labels_data, dict):
        shared = set(features_data) & set(labels_data)
        if shared:
            raise ValueError(f"x and y have the same keys: {sorted(shared)}")

    def input_fn():
        graph = get_default_graph()
        arrays = {}
        with name_scope("numpy_input"):
            if isinstance(features_data, dict):
                features = collections.OrderedDict()
                for key, array in features_data.items():
                    features[key] = _placeholder_for(array, str(key))
                    arrays[features[key]] = array
            else:
                features = _placeholder_for(features_data, "x")
                arrays[features] = features_data
            labels = None
            if isinstance(labels_data, dict):
                labels = collections.OrderedDict()
                for key, array in labels_data.items():
                    labels[key] = _placeholder_for(array, str(key))
                    arrays[labels[key]] = array
            elif labels_data is not None:
                labels = _placeholder_for(labels_data, "y")
                arrays[labels] = labels_data
        seed = graph.seed
        graph.add_to_collection(INPUT_FEEDERS,
                                ArrayFeeder(arrays, batch_size, num_epochs, shuffle, seed=seed))
        return features if labels is None else (features, labels)

    return input_fn


__all__ = ["numpy_input_fn"]
