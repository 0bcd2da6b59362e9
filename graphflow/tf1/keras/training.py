"""`tf.keras.Model`: a `Network` with `compile`, `fit`, `evaluate`, `predict`, `summary` and
weight files, run in graph mode as TF1 Keras did.

`compile` resolves the optimizer, losses and metrics; the graph pieces (one target placeholder per
output, the loss = the batch mean of each output's per-sample loss, weighted, plus the layers'
regularization losses, the metric tensors and the training op that also runs the layers' updates)
are built on first use, once the model has inputs (a deferred `Sequential` or a subclassed model
builds on the first data it sees). `fit` runs mini-batches in `backend.get_session()` with the
learning phase fed True; the epoch's loss and metrics are the sample-weighted means over its
batches, as Keras reports them. `verbose=1` draws a progress bar over the batches (progbar.py:
redrawn in place on a terminal, its last line only in a file), `verbose=2` prints one line an
epoch, `verbose=0` nothing.
"""

import warnings

import numpy as np

from graphflow.framework.graph import get_default_graph
from graphflow.ops import math_ops
from graphflow.ops.core_ops import group, placeholder
from graphflow.tf1.keras import backend, losses_classes, metrics_classes
from graphflow.tf1.keras import losses as keras_losses
from graphflow.tf1.keras import optimizers as keras_optimizers
from graphflow.tf1.keras.base_layer import Input, to_list
from graphflow.tf1.keras.callbacks import CallbackList
from graphflow.tf1.keras.data_adapter import ArraySource, is_dataset, is_generator, make_source
from graphflow.tf1.keras.network import Network
from graphflow.tf1.keras.progbar import Progbar
from graphflow.tf1.keras.training_utils import (
    History,
    read_weights,
    standardize,
    write_weights,
)


def _graph_mode_only(what):
    """`fit`, `evaluate`, `predict` build and run the model's graph in a session."""
    if get_default_graph().eager:
        raise NotImplementedError(
            f"Model.{what} runs the model's graph in a session, which graphflow does not do in "
            "eager mode: train with a tf.GradientTape loop and call the model on eager tensors "
            "(docs/eager.md), or build the model in graph mode")


class Model(Network):
    """`tf.keras.Model(inputs, outputs)` (functional) or a subclass defining `call`."""

    optimizer = None
    stop_training = False

    def compile(self, optimizer="rmsprop", loss=None, metrics=None, loss_weights=None,
                sample_weight_mode=None, weighted_metrics=None, target_tensors=None, **kwargs):
        if loss is None:
            raise ValueError("compile needs a `loss`")
        self.optimizer = keras_optimizers.get(optimizer)
        self._loss_spec, self._metric_spec = loss, list(metrics or [])
        self._loss_weights = loss_weights
        if not isinstance(loss, (list, tuple, dict)):
            keras_losses.get(loss)            # an unknown name fails here, at compile time
        else:
            for item in (loss.values() if isinstance(loss, dict) else loss):
                keras_losses.get(item)
        self._compiled = None
        self._train_op = None
        if self.outputs is not None:
            try:
                self._compile_graph()
            except Exception:
                self.optimizer = None          # a failed compile leaves the model uncompiled
                raise

    # ------------------------------------------------------------------ graph pieces
    def _per_output(self, spec, fallback):
        names = [t_layer.name for t_layer in self.output_layers()]
        if isinstance(spec, dict):
            return [spec.get(n, fallback) for n in names]
        if isinstance(spec, (list, tuple)) and spec and isinstance(spec[0], (list, tuple)):
            return list(spec)
        if isinstance(spec, (list, tuple)) and len(self.outputs) > 1 and fallback is None:
            if len(spec) != len(self.outputs):
                raise ValueError(f"The model has {len(self.outputs)} outputs, but {len(spec)} "
                                 "losses were given")
            return list(spec)
        return [spec] * len(self.outputs)

    def output_layers(self):
        from graphflow.tf1.keras.base_layer import history
        return [history(t)[0] for t in self.outputs]

    def _compile_graph(self):
        if getattr(self, "_compiled", None) is not None:
            return self._compiled
        if self.optimizer is None:
            raise RuntimeError("You must compile your model before using it.")
        loss_fns = [keras_losses.get(s) for s in self._per_output(self._loss_spec, None)]
        weights = self._loss_weights or [1.0] * len(self.outputs)
        if isinstance(weights, dict):
            weights = [weights.get(n, 1.0) for n in (x.name for x in self.output_layers())]
        metric_lists = self._per_output(self._metric_spec, [])
        if metric_lists and not isinstance(metric_lists[0], (list, tuple)):
            metric_lists = [self._metric_spec] * len(self.outputs)
        targets, total, metrics, stateful = [], None, [], []
        prefixes = ([""] if len(self.outputs) == 1 else
                    [layer.name + "_" for layer in self.output_layers()])
        for out, fn, weight, names, prefix in zip(self.outputs, loss_fns, weights, metric_lists,
                                                  prefixes):
            rank = out.shape.ndims
            sparse = losses_classes.is_sparse_loss(fn)
            shape = [None] * (rank - 1) if sparse else [None] + out.shape.as_list()[1:]
            target = placeholder(backend.floatx(), shape, name=f"{prefix}target")
            targets.append(target)
            loss = math_ops.reduce_mean(fn(target, out)) * weight
            total = loss if total is None else total + loss
            for name in names:
                if isinstance(name, metrics_classes.Metric):   # stateful: see _run_source
                    metrics.append((prefix + name.name, name(target, out)))
                    stateful.append(name)
                    continue
                metric_fn = keras_losses.get_metric(name, fn, out.shape.as_list())
                label = name if isinstance(name, str) else getattr(name, "__name__", "metric")
                label = "acc" if label == "accuracy" else label   # TF1 Keras's name
                metrics.append((prefix + label, math_ops.reduce_mean(metric_fn(target, out))))
                stateful.append(None)
        regularization = self.losses
        if regularization:
            total = total + math_ops.add_n(regularization)
        self._compiled = {"targets": targets, "loss": total, "metrics": metrics,
                          "stateful": stateful,
                          "sparse": [len(t.shape.as_list()) < o.shape.ndims
                                     for t, o in zip(targets, self.outputs)]}
        self.metrics_names = ["loss"] + [n for n, _ in metrics]
        return self._compiled

    def _training_op(self):
        if self._train_op is None:
            compiled = self._compile_graph()
            minimize = self.optimizer.minimize(compiled["loss"], var_list=self.trainable_weights)
            self._train_op = group(minimize, *self.model_updates())
            for variable in self.optimizer.variables():
                backend.track_variable(variable)
        return self._train_op

    def _arrays(self, data, tensors):
        """`data` (an array, a list, or a dict by input/output layer name) as a list of arrays."""
        if isinstance(data, dict):
            from graphflow.tf1.keras.base_layer import history
            names = [history(t)[0].name for t in tensors]
            missing = [n for n in names if n not in data]
            if missing:
                raise ValueError(f"No data provided for {missing} (the model's names are "
                                 f"{names})")
            data = [data[n] for n in names]
        return [np.asarray(a) for a in to_list(data)]

    def _ensure_inputs(self, x):
        if self.inputs is not None:
            return self._arrays(x, self.inputs)
        if isinstance(x, dict):
            raise ValueError("a model without inputs builds on arrays, not a dict")
        arrays = to_list(x)
        inputs = [Input(shape=np.shape(a)[1:]) for a in arrays]
        outputs = self(inputs[0] if len(inputs) == 1 else inputs)
        self._init_data_graph(inputs, outputs)
        return self._arrays(x, self.inputs)

    def _init_data_graph(self, inputs, outputs):
        self.inputs, self.outputs = inputs, to_list(outputs)
        self._single_output = not isinstance(outputs, (list, tuple))
        if getattr(self, "_loss_spec", None) is not None:
            self._compile_graph()

    def _feed(self, x, y=None):
        feed = dict(zip(self.inputs, standardize(x, self.inputs, "input")))
        if y is not None:
            compiled = self._compile_graph()
            ys = [np.asarray(v) for v in (y if isinstance(y, (list, tuple)) else [y])]
            targets = compiled["targets"]
            ys = [v.reshape(v.shape[:-1]) if sparse and v.ndim == len(t.shape.as_list()) + 1
                  and v.shape[-1] == 1 else v
                  for v, t, sparse in zip(ys, targets, compiled["sparse"])]
            feed.update(zip(targets, standardize(ys, targets, "target")))
        return feed

    # ------------------------------------------------------------------ loops
    def _fetches(self, training):
        compiled = self._compile_graph()
        fetches = [compiled["loss"]] + [t for _, t in compiled["metrics"]]
        return [self._training_op()] + fetches if training else fetches

    def _run_source(self, source, training, callbacks=None, bar=None):
        """Runs the loss and metrics (and the training op when `training`) over one epoch of
        `source`; their batch-size-weighted means (a stateful metric object: reset first, its
        last result). A `Progbar` is given the means so far after each batch."""
        fetches, session, totals, count, stateful = None, None, None, 0, []
        for step, (xs, ys) in enumerate(source.epoch(self)):
            if fetches is None:
                fetches = self._fetches(training)
                session = backend.get_session()
                totals = np.zeros(len(fetches) - (1 if training else 0))
                metrics = self._compile_graph()["stateful"]   # (built by the first batch)
                stateful = [i + 1 for i, m in enumerate(metrics) if m is not None]
                for i in stateful:
                    metrics[i - 1].reset_states()
            size = len(xs[0])
            if callbacks is not None:
                callbacks.call_batch("begin", step, {"batch": step, "size": size})
            feed = self._feed(xs, ys)
            phase = backend.phase_placeholder(self.inputs[0].graph)
            if phase is not None:
                feed[phase] = training
            values = np.asarray(session.run(fetches, feed)[1 if training else 0:],
                                dtype=np.float64)
            totals += values * size
            count += size
            totals[stateful] = values[stateful] * count
            if bar is not None:
                bar.stateful_metrics.update(self.metrics_names)  # known once compiled
                bar.update(step + 1, list(zip(self.metrics_names, totals / count)),
                           finalize=False)
            if callbacks is not None:
                logs = {"batch": step, "size": size}
                logs.update(zip(self.metrics_names, (float(v) for v in values)))
                callbacks.call_batch("end", step, logs)
                if self.stop_training:
                    break
        if totals is None:
            raise ValueError("the data gave no batch (an exhausted generator or an empty dataset)")
        return totals / max(count, 1)

    def _train_source(self, x, y, batch_size, shuffle, steps, validation_split, validation_data,
                      validation_steps):
        if is_dataset(x) or is_generator(x):
            if validation_split:
                raise ValueError("validation_split needs numpy arrays, not a dataset or "
                                 "generator")
            source = make_source(self, x, y, batch_size, steps)
        else:
            if y is None:
                raise ValueError("fit needs targets `y` with array inputs")
            xs, ys = self._ensure_inputs(x), self._arrays(y, self.outputs)
            if validation_data is None and validation_split:
                split = int(len(xs[0]) * (1.0 - validation_split))
                validation_data = ([a[split:] for a in xs], [a[split:] for a in ys])
                xs, ys = [a[:split] for a in xs], [a[:split] for a in ys]
            source = ArraySource(xs, ys, batch_size, shuffle)
        validation = None
        if validation_data is not None:
            if is_dataset(validation_data) or is_generator(validation_data):
                validation = make_source(self, validation_data, None, batch_size,
                                         validation_steps)
            else:
                validation = make_source(self, validation_data[0], validation_data[1],
                                         batch_size, None)
        return source, validation

    def fit(self, x=None, y=None, batch_size=None, epochs=1, verbose=1, callbacks=None,
            validation_split=0.0, validation_data=None, shuffle=True, initial_epoch=0,
            steps_per_epoch=None, validation_steps=None, **kwargs):
        """Trains on arrays, a `tf.data.Dataset` of (x, y) or a generator of (x, y) (with
        `steps_per_epoch` batches an epoch), calling the callbacks' hooks; the `History`."""
        _graph_mode_only("fit")
        if x is None:
            raise ValueError("fit needs data `x`")
        batch_size = batch_size or 32
        source, validation = self._train_source(x, y, batch_size, shuffle, steps_per_epoch,
                                                validation_split, validation_data,
                                                validation_steps)
        history = History(self)
        callbacks = CallbackList(list(callbacks or []) + [history], self, {
            "epochs": epochs, "batch_size": batch_size, "steps": source.steps,
            "samples": len(source.xs[0]) if isinstance(source, ArraySource) else None,
            "verbose": verbose, "do_validation": validation is not None,
            "metrics": None})
        self.stop_training = False
        steps = source.steps     # None for a dataset without steps_per_epoch: counted once run
        callbacks.call("on_train_begin", {})
        for epoch in range(initial_epoch, epochs):
            callbacks.call("on_epoch_begin", epoch, {})
            bar = Progbar(steps, verbose=verbose) if verbose else None
            if verbose:
                print(f"Epoch {epoch + 1}/{epochs}")
            values = self._run_source(source, True, callbacks, bar)
            logs = dict(zip(self.metrics_names, (float(v) for v in values)))
            if validation is not None:
                for name, value in zip(self.metrics_names, self._run_source(validation, False)):
                    logs["val_" + name] = float(value)
            if bar is not None:
                bar.stateful_metrics.update(logs)
                bar.finish(list(logs.items()))
                steps = steps or bar.seen
            callbacks.call("on_epoch_end", epoch, logs)
            if self.stop_training:
                break
        callbacks.call("on_train_end", {})
        return history

    def evaluate(self, x=None, y=None, batch_size=None, verbose=1, steps=None, callbacks=None,
                 **kwargs):
        """The loss (and the metrics, in `metrics_names` order) over arrays `x`, `y`, a
        dataset of (x, y) or a generator (`steps` batches)."""
        _graph_mode_only("evaluate")
        source = make_source(self, x, y, batch_size, steps)
        if y is None and isinstance(source, ArraySource):
            raise ValueError("evaluate needs targets `y` with array inputs")
        self.stop_training = False
        bar = Progbar(source.steps, verbose=verbose) if verbose else None
        values = self._run_source(source, False, bar=bar)
        if bar is not None:
            bar.finish(list(zip(self.metrics_names, values)))
        return float(values[0]) if len(values) == 1 else [float(v) for v in values]

    def predict(self, x, batch_size=None, verbose=0, steps=None, callbacks=None, **kwargs):
        """The outputs over arrays, a dataset (of x, or of (x, y) whose y is ignored) or a
        generator (`steps` batches), concatenated."""
        _graph_mode_only("predict")
        source = make_source(self, x, None, batch_size, steps)
        session = backend.get_session()
        bar = Progbar(source.steps, verbose=verbose) if verbose else None
        chunks = []
        for xs, _ in source.epoch(self):
            chunks.append(session.run(self.outputs, self._feed(xs)))
            if bar is not None:
                bar.update(len(chunks), finalize=False)
        if bar is not None:
            bar.finish()
        outputs = [np.concatenate([c[i] for c in chunks]) for i in range(len(self.outputs))]
        return outputs[0] if len(outputs) == 1 else outputs

    def fit_generator(self, generator, steps_per_epoch=None, epochs=1, verbose=1,
                      callbacks=None, validation_data=None, validation_steps=None,
                      class_weight=None, max_queue_size=10, workers=1,
                      use_multiprocessing=False, shuffle=True, initial_epoch=0):
        """`fit` over a generator (or Sequence) of (x, y) batches."""
        _graph_mode_only("fit_generator")
        return self.fit(generator, steps_per_epoch=steps_per_epoch, epochs=epochs,
                        verbose=verbose, callbacks=callbacks, validation_data=validation_data,
                        validation_steps=validation_steps, initial_epoch=initial_epoch)

    def evaluate_generator(self, generator, steps=None, callbacks=None, max_queue_size=10,
                           workers=1, use_multiprocessing=False, verbose=0):
        _graph_mode_only("evaluate_generator")
        return self.evaluate(generator, steps=steps, verbose=verbose)

    def predict_generator(self, generator, steps=None, callbacks=None, max_queue_size=10,
                          workers=1, use_multiprocessing=False, verbose=0):
        return self.predict(generator, steps=steps, verbose=verbose)

    def train_on_batch(self, x, y, **kwargs):
        _graph_mode_only("train_on_batch")
        xs, ys = self._ensure_inputs(x), self._arrays(y, self.outputs)
        self.stop_training = False
        values = self._run_source(ArraySource(xs, ys, len(xs[0])), True)
        return float(values[0]) if len(values) == 1 else [float(v) for v in values]

    def test_on_batch(self, x, y, **kwargs):
        return self.evaluate(x, y, batch_size=len(to_list(x)[0]), verbose=0)

    def predict_on_batch(self, x):
        return self.predict(x, batch_size=len(to_list(x)[0]))

    # ------------------------------------------------------------------ inspection and files
    def summary(self, line_length=None, positions=None, print_fn=None):
        from graphflow.tf1.keras.training_utils import summary_lines
        for line in summary_lines(self):
            (print_fn or print)(line)

    def save_weights(self, filepath, overwrite=True, save_format=None):
        """Writes every weight to `filepath`: Keras's HDF5 layout when the name ends in .h5 or
        .hdf5 (or save_format='h5'; tf_keras reads it), else graphflow's .npz of the weights in
        the model's order."""
        from graphflow.tf1.keras import hdf5_format
        if save_format == "h5" or (save_format is None and hdf5_format.is_hdf5_path(filepath)):
            hdf5_format.save_weights(self, filepath)
            return
        weights = self.weights
        write_weights(filepath, [w.op.name for w in weights], backend.batch_get_value(weights))

    def load_weights(self, filepath, by_name=False, skip_mismatch=False):
        """Reads a weights file into this model's weights, checking counts and shapes first:
        a Keras HDF5 file (matched by the order of the layers with weights, or by layer name
        with by_name=True; `skip_mismatch` skips layers whose count or shapes differ), or
        graphflow's .npz (by order, or by weight name)."""
        from graphflow.tf1.keras import hdf5_format
        kind = hdf5_format.file_kind(filepath)
        if kind == "hdf5":
            hdf5_format.load_weights(self, filepath, by_name, skip_mismatch)
            return
        if kind != "zip" and hdf5_format.is_hdf5_path(filepath):
            hdf5_format.Reader(filepath)         # says what the file is instead
        if kind == "zip" and hdf5_format.is_hdf5_path(filepath):
            warnings.warn(f"{filepath} is graphflow's own weights format (a zip, as graphflow "
                          "wrote .h5 names before it wrote Keras HDF5), not HDF5: read with "
                          "graphflow's reader; save it again for a file TensorFlow opens", stacklevel=2)
        names, values = read_weights(filepath)
        weights = self.weights
        if by_name:
            lookup = dict(zip(names, values))
            pairs = [(w, lookup[w.op.name]) for w in weights if w.op.name in lookup]
        else:
            if len(values) != len(weights):
                raise ValueError(f"{filepath} holds {len(values)} weights, the model has "
                                 f"{len(weights)}")
            pairs = list(zip(weights, values))
        for w, value in pairs:
            if tuple(value.shape) != tuple(w.shape.as_list()):
                raise ValueError(f"weight {w.op.name} has shape {w.shape.as_list()}, the file "
                                 f"gives {value.shape}")
        backend.batch_set_value(pairs)

    def save(self, filepath, overwrite=True, include_optimizer=True, save_format=None):
        """Writes the architecture, the weights and the compile arguments to `filepath`:
        Keras's HDF5 layout when the name ends in .h5 or .hdf5 (or save_format='h5'; tf_keras's
        load_model reads it), else graphflow's format (see `saving`);
        `tf.keras.models.load_model` reads both."""
        from graphflow.tf1.keras.saving import save_model
        save_model(self, filepath, overwrite, include_optimizer, save_format)


__all__ = ["Model"]
