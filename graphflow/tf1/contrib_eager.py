"""`tf.contrib.eager` (`import tensorflow.contrib.eager as tfe`): TF1's eager-execution names.

Eager mode itself is `engine/eager.py` (ops run as they are built), gradients are
`engine/tape.py` (`GradientTape`) and graph functions `engine/eager_function.py` (`defun`). Here
are the TF 1.x helpers on top: the implicit-gradient functions, which differentiate a Python
function with respect to the trainable variables it reads (`implicit_gradients`) or to its
arguments (`gradients_function`); `Network`, the 1.x container of layers; `Checkpoint`
(also `tf.train.Checkpoint`) and `Saver`, which save eager variables as TensorFlow V2
checkpoints through `tf.train.Saver`.
"""

import functools
import os

from graphflow.engine import eager as eager_mode
from graphflow.engine.eager_function import defun, function
from graphflow.engine.tape import GradientTape
from graphflow.fileformat import checkpoint as checkpoint_module
from graphflow.framework import nest
from graphflow.framework.errors import NotFoundError
from graphflow.ops.core_ops import convert_to_tensor
from graphflow.ops.state_ops import Variable
from graphflow.tf1.data.iterator_ops import EagerIterator as Iterator


def enable_eager_execution(config=None, device_policy=None, execution_mode=None):
    """`tfe.enable_eager_execution()`: see `tf.enable_eager_execution`."""
    eager_mode.enable(config, device_policy, execution_mode)


def executing_eagerly():
    return eager_mode.executing_eagerly()


in_eager_mode = executing_eagerly


def num_gpus():
    """GPUs eager ops may run on: none (eager ops run on the CPU kernels)."""
    return 0


# ---------------------------------------------------------------- gradients of Python functions

def implicit_value_and_gradients(f):
    """`f(*args)` -> (value, [(gradient, variable)]) for the trainable variables `f` reads, in
    the order it first reads them."""
    @functools.wraps(f)
    def value_and_grads(*args, **kwargs):
        with GradientTape() as tape:
            value = f(*args, **kwargs)
        variables = list(tape.watched_variables())
        if not variables:
            raise ValueError("No trainable variables were accessed while the function was "
                             "being computed.")
        grads = tape.gradient(value, variables)
        return value, list(zip(grads, variables))
    return value_and_grads


def implicit_gradients(f):
    """`f(*args)` -> [(gradient, variable)] for the trainable variables `f` reads (what
    `optimizer.apply_gradients` takes)."""
    value_and_grads = implicit_value_and_gradients(f)

    @functools.wraps(f)
    def grads_fn(*args, **kwargs):
        return value_and_grads(*args, **kwargs)[1]
    return grads_fn


def _chosen(args, params, f):
    if params is None:
        return list(range(len(args)))
    names = list(getattr(f, "__code__", None).co_varnames[:len(args)]) \
        if hasattr(f, "__code__") else []
    out = []
    for p in params:
        if isinstance(p, int):
            out.append(p)
        elif p in names:
            out.append(names.index(p))
        else:
            raise ValueError(f"gradients_function: unknown parameter {p!r} of {f!r}")
    return out


def value_and_gradients_function(f, params=None):
    """`f(*args)` -> (value, gradients with respect to the arguments `params` names (indices or
    parameter names; all by default))."""
    @functools.wraps(f)
    def value_and_grads(*args, **kwargs):
        chosen = _chosen(args, params, f)
        args = [convert_to_tensor(a) if i in chosen else a for i, a in enumerate(args)]
        with GradientTape() as tape:
            for i in chosen:
                tape.watch(args[i])
            value = f(*args, **kwargs)
        return value, tape.gradient(value, [args[i] for i in chosen])
    return value_and_grads


def gradients_function(f, params=None):
    """`f(*args)` -> its gradients with respect to the arguments (see
    `value_and_gradients_function`); nest it for higher derivatives."""
    value_and_grads = value_and_gradients_function(f, params)

    @functools.wraps(f)
    def grads_fn(*args, **kwargs):
        return value_and_grads(*args, **kwargs)[1]
    return grads_fn


# ---------------------------------------------------------------- Network: TF 1.4-1.7's container

class Network:
    """`tfe.Network`: a model made of layers, called like one; `track_layer` (or assigning a
    layer to an attribute) registers a layer, whose variables the network's `variables` list."""

    def __init__(self, name=None):
        self._layers = []
        self._name = name or type(self).__name__

    @property
    def name(self):
        return self._name

    def __setattr__(self, key, value):
        if not key.startswith("_") and hasattr(value, "variables") and callable(value) \
                and value not in getattr(self, "_layers", ()):
            self.__dict__.setdefault("_layers", []).append(value)
        object.__setattr__(self, key, value)

    def track_layer(self, layer):
        if layer not in self._layers:
            self._layers.append(layer)
        return layer

    @property
    def layers(self):
        return list(self._layers)

    def __call__(self, *args, **kwargs):
        return self.call(*args, **kwargs)

    def call(self, *args, **kwargs):
        raise NotImplementedError("a tfe.Network subclass defines call(inputs)")

    def _variables(self, trainable_only):
        seen, out = set(), []
        for layer in self._layers:
            attr = "trainable_variables" if trainable_only else "variables"
            found = getattr(layer, attr)
            for v in (found() if callable(found) else found):
                if id(v) not in seen:
                    seen.add(id(v))
                    out.append(v)
        return out

    @property
    def variables(self):
        return self._variables(False)

    weights = variables

    @property
    def trainable_variables(self):
        return self._variables(True)

    trainable_weights = trainable_variables


# ---------------------------------------------------------------- checkpoints of eager variables

def _variables_of(obj):
    """The variables an object holds: a Variable, or what its `variables` gives (layers,
    networks, Keras models, optimizers)."""
    if isinstance(obj, Variable):
        return [obj]
    found = getattr(obj, "variables", None)
    if found is None:
        raise TypeError(f"Checkpoint: {obj!r} holds no variables (expected a tf.Variable, a "
                        "layer, a model or an optimizer)")
    return list(found() if callable(found) else found)


def _eager_store():
    store = eager_mode.eager_variables()
    if store is None:
        raise RuntimeError("saving eager variables needs eager execution (tf.enable_eager_"
                           "execution()); in graph mode use tf.train.Saver with a Session")
    return store


class Checkpoint:
    """`tf.train.Checkpoint(**objects)` in eager mode: `save(file_prefix)` writes the variables
    of the named objects (keys `<name>/<variable name>`) as a TensorFlow V2 checkpoint
    `<file_prefix>-<n>` and returns it; `restore(path)` reads them back into the same objects'
    variables (which must exist: call the model once first)."""

    def __init__(self, **kwargs):
        self._objects = dict(kwargs)
        self.save_counter = 0

    def __getattr__(self, name):
        objects = self.__dict__.get("_objects", {})
        if name in objects:
            return objects[name]
        raise AttributeError(name)

    def _var_list(self):
        var_list = {}
        for name in sorted(self._objects):
            for v in _variables_of(self._objects[name]):
                var_list[f"{name}/{v.op.name}"] = v
        return var_list

    def save(self, file_prefix, session=None):
        self.save_counter += 1
        return self.write(f"{os.fspath(file_prefix)}-{self.save_counter}", session)

    def write(self, file_prefix, session=None):
        saver = checkpoint_module.Saver(self._var_list())
        return saver.save(session or _eager_store(), file_prefix, write_meta_graph=False,
                          write_state=True)

    def restore(self, save_path, session=None):
        if save_path is None:
            return _Status()
        saver = checkpoint_module.Saver(self._var_list())
        try:
            saver.restore(session or _eager_store(), save_path)
        except NotFoundError as exc:
            raise NotFoundError(None, None, f"{exc} (a Checkpoint restores the variables of "
                                "the objects it names: create them, e.g. call the model once, "
                                "before restore)") from None
        return _Status()


class _Status:
    """What `Checkpoint.restore` returns: every value was restored when it returns."""

    def assert_consumed(self):
        return self

    def assert_existing_objects_matched(self):
        return self

    def run_restore_ops(self, session=None):
        return None

    def initialize_or_restore(self, session=None):
        return None


class Saver:
    """`tfe.Saver(var_list)`: `save(file_prefix, global_step=None)` / `restore(file_prefix)` of
    eager variables, as `tf.train.Saver` writes them."""

    def __init__(self, var_list):
        self._saver = checkpoint_module.Saver(var_list)

    def save(self, file_prefix, global_step=None):
        step = None if global_step is None else int(nest.flatten(
            global_step.numpy() if hasattr(global_step, "numpy") else global_step)[0])
        return self._saver.save(_eager_store(), file_prefix, global_step=step,
                                write_meta_graph=False)

    def restore(self, file_prefix):
        self._saver.restore(_eager_store(), file_prefix)


__all__ = ["Checkpoint", "GradientTape", "Iterator", "Network", "Saver", "Variable", "defun",
           "enable_eager_execution", "executing_eagerly", "function", "gradients_function",
           "implicit_gradients", "implicit_value_and_gradients", "in_eager_mode", "num_gpus",
           "value_and_gradients_function"]
