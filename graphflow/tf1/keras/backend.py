"""`tf.keras.backend`: the session Keras runs in, the learning phase, layer-name counters and the
float type.

`get_session()` is the default session when one is open (`with tf.Session() as sess:`), else a
session of the default graph that the backend creates once and keeps; before returning it, it
initializes the variables Keras created that are not initialized yet (TF1 Keras did the same), so
`model.fit` works without `tf.global_variables_initializer()`. `learning_phase()` is a boolean
`placeholder_with_default(False, [])` per graph that `fit` feeds True; `set_learning_phase(0|1)`
fixes it to a Python value instead.
"""

import contextlib
import weakref

import numpy as np

from graphflow.framework import dtypes
from graphflow.framework.default_session import get_default_session
from graphflow.framework.graph import get_default_graph, reset_default_graph
from graphflow.ops.core_ops import convert_to_tensor, placeholder_with_default

_STATE = {"session": None, "floatx": "float32", "epsilon": 1e-7, "phase": None,
          "image_data_format": "channels_last"}
_UIDS = weakref.WeakKeyDictionary()         # graph -> {prefix: count}
_PHASES = weakref.WeakKeyDictionary()       # graph -> the learning-phase placeholder
_TRACKED = weakref.WeakKeyDictionary()      # graph -> [Keras's variables], see get_session
_INITIALIZED = weakref.WeakKeyDictionary()  # session -> {id of a variable seen initialized}


def floatx():
    return _STATE["floatx"]


def set_floatx(value):
    if value not in ("float16", "float32", "float64"):
        raise ValueError(f"Unknown floatx type: {value!r}")
    _STATE["floatx"] = value


def epsilon():
    return _STATE["epsilon"]


def set_epsilon(value):
    _STATE["epsilon"] = float(value)


def image_data_format():
    return _STATE["image_data_format"]


def set_image_data_format(data_format):
    if data_format not in ("channels_last", "channels_first"):
        raise ValueError(f"Unknown data_format: {data_format!r}")
    _STATE["image_data_format"] = data_format


def get_uid(prefix=""):
    """1, 2, 3, ... per prefix and graph (Keras names layers 'dense', 'dense_1', ...)."""
    counts = _UIDS.setdefault(get_default_graph(), {})
    counts[prefix] = counts.get(prefix, 0) + 1
    return counts[prefix]


def reset_uids():
    """Restarts the layer-name counters of the default graph."""
    _UIDS.pop(get_default_graph(), None)


def unique_name(prefix):
    uid = get_uid(prefix)
    return prefix if uid == 1 else f"{prefix}_{uid - 1}"


def learning_phase():
    """The learning phase: a Python 0/1 after `set_learning_phase`, else the graph's boolean
    placeholder (False unless fed)."""
    if _STATE["phase"] is not None:
        return _STATE["phase"]
    graph = get_default_graph()
    if graph not in _PHASES:
        with graph.name_scope(None):
            _PHASES[graph] = placeholder_with_default(
                convert_to_tensor(False, dtype=dtypes.bool_), [], name="keras_learning_phase")
    return _PHASES[graph]


@contextlib.contextmanager
def learning_phase_scope(value):
    """Within the block the learning phase is the Python value 0 or 1."""
    if value not in (0, 1):
        raise ValueError("Expected learning phase to be 0 or 1.")
    previous = _STATE["phase"]
    _STATE["phase"] = int(value)
    try:
        yield value
    finally:
        _STATE["phase"] = previous


def phase_placeholder(graph=None):
    """The learning-phase placeholder of `graph` when one was made (what `fit` feeds), else None."""
    return _PHASES.get(graph or get_default_graph())


def set_learning_phase(value):
    if value not in (0, 1, True, False):
        raise ValueError("Expected learning phase to be 0 or 1.")
    _STATE["phase"] = int(value)


def track_variable(variable):
    _TRACKED.setdefault(variable.graph, []).append(variable)


def get_session():
    """The session Keras runs in (see the module docstring), its Keras variables initialized."""
    from graphflow.engine.session import Session
    session = get_default_session()
    if session is None:
        session = _STATE["session"]
        if session is None or session.graph is not get_default_graph() or session._closed:
            session = _STATE["session"] = Session(graph=get_default_graph())
    _initialize(session)
    return session


def _initialize(session):
    done = _INITIALIZED.setdefault(session, set())
    pending = [v for v in _TRACKED.get(session.graph, ()) if id(v) not in done]
    if not pending:
        return
    from graphflow.ops.state_ops import is_variable_initialized, variables_initializer
    with session.graph.as_default():
        flags = session.run([is_variable_initialized(v) for v in pending])
        fresh = [v for v, done in zip(pending, flags) if not done]
        if fresh:
            session.run(variables_initializer(fresh))
    done.update(id(v) for v in pending)


def set_session(session):
    _STATE["session"] = session


def clear_session():
    """A fresh default graph; the backend forgets its session, names and learning phase."""
    if _STATE["session"] is not None:
        _STATE["session"].close()
    _STATE["session"] = None
    _STATE["phase"] = None
    reset_default_graph()


def get_value(x):
    return get_session().run(x)


def batch_get_value(xs):
    return get_session().run(list(xs))


def set_value(x, value):
    batch_set_value([(x, value)])


def batch_set_value(pairs):
    session = get_session()
    for variable, value in pairs:
        variable.load(np.asarray(value, dtype=variable.dtype.as_numpy_dtype), session)


def int_shape(x):
    return tuple(x.shape.as_list()) if x.shape.ndims is not None else None


__all__ = ["floatx", "set_floatx", "epsilon", "set_epsilon", "image_data_format",
           "set_image_data_format", "get_uid", "reset_uids", "learning_phase_scope", "learning_phase",
           "set_learning_phase", "get_session", "set_session", "clear_session", "get_value",
           "batch_get_value", "set_value", "batch_set_value", "int_shape"]
