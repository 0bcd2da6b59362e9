"""`tf.keras.Model`: a `Network` with `compile`, `fit`, `evaluate`, `predict`, `summary` and
weight files, run in graph mode as TF1 Keras did.

`compile` resolves the optimizer, losses and metrics; the graph pieces (one target placeholder per
output, the loss = the batch mean of each output's per-sample loss, weighted, plus the layers'
regularization losses, the metric tensors and the training op that also runs the layers' updates)
are built on first use, once the model has inputs (a deferred `Sequential` or a subclassed model
builds on the first data it sees). `fit` runs mini-batches in `backend.get_session()` with the
learning phase fed True; the epoch's loss and metrics are the sample-weighted means over its
batches, as Keras reports them.
"""

import numpy as np

from graphflow.ops import math_ops
from graphflow.ops.core_ops import group, placeholder
from graphflow.tf1.keras import backend
from graphflow.tf1.keras import losses as keras_losses
from graphflow.tf1.keras import optimizers as keras_optimizers
from graphflow.tf1.keras.base_layer import Input, to_list
from graphflow.tf1.keras.network import Network
from graphflow.tf1.keras.training_utils import (
    History,
    batches,
    format_logs,
    read_weights,
    standardize,
    write_weights,
)


class Model(Network):
    """`tf.keras.Model(inputs, outputs)` (functional) or a subclass defining `call`."""

    optimizer = None

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
        targets, total, metrics = [], None, []
        prefixes = ([""] if len(self.outputs) == 1 else
                    [layer.name + "_" for layer in self.output_layers()])
        for out, fn, weight, names, prefix in zip(self.outputs, loss_fns, weights, metric_lists,
                                                  prefixes):
            rank = out.shape.ndims
            sparse = fn is keras_losses.sparse_categorical_crossentropy
            shape = [None] * (rank - 1) if sparse else [None] + out.shape.as_list()[1:]
            target = placeholder(backend.floatx(), shape, name=f"{prefix}target")
            targets.append(target)
            loss = math_ops.reduce_mean(fn(target, out)) * weight
            total = loss if total is None else total + loss
            for name in names:
                metric_fn = keras_losses.get_metric(name, fn, out.shape.as_list())
                label = name if isinstance(name, str) else getattr(name, "__name__", "metric")
                label = "acc" if label == "accuracy" else label   # TF1 Keras's name
                metrics.append((prefix + label, math_ops.reduce_mean(metric_fn(target, out))))
        regularization = self.losses
        if regularization:
            total = total + math_ops.add_n(regularization)
        self._compiled = {"targets": targets, "loss": total, "metrics": metrics,
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
    def _run_batches(self, fetches, x, y, batch_size, training, order=None):
        """Runs `fetches` (scalar tensors) per batch; their batch-size-weighted means."""
        session = backend.get_session()
        phase = backend.phase_placeholder(self.inputs[0].graph)
        xs, ys = to_list(x), (to_list(y) if y is not None else None)
        totals, count = np.zeros(len(fetches) - (1 if training else 0)), 0
        for rows in batches(len(xs[0]), batch_size, order):
            feed = self._feed([a[rows] for a in xs], [a[rows] for a in ys])
            if phase is not None:
                feed[phase] = training
            values = session.run(fetches, feed)
            values = values[1:] if training else values
            totals += np.asarray(values, dtype=np.float64) * len(rows)
            count += len(rows)
        return totals / max(count, 1)

    def fit(self, x=None, y=None, batch_size=None, epochs=1, verbose=1, callbacks=None,
            validation_split=0.0, validation_data=None, shuffle=True, initial_epoch=0,
            steps_per_epoch=None, **kwargs):
        if x is None or y is None:
            raise ValueError("fit needs numpy arrays x and y (graphflow's tf.keras does not fit "
                             "from datasets or generators)")
        batch_size = batch_size or 32
        x = self._ensure_inputs(x)
        y = self._arrays(y, self.outputs)
        if validation_data is None and validation_split:
            split = int(len(x[0]) * (1.0 - validation_split))
            validation_data = ([a[split:] for a in x], [a[split:] for a in y])
            x, y = [a[:split] for a in x], [a[:split] for a in y]
        train_op = self._training_op()
        compiled = self._compile_graph()
        fetches = [train_op, compiled["loss"]] + [t for _, t in compiled["metrics"]]
        history = History(self, {"epochs": epochs, "batch_size": batch_size,
                                 "samples": len(x[0])})
        callbacks = [history] + list(callbacks or [])
        for cb in callbacks:
            cb.set_model(self) if hasattr(cb, "set_model") else None
            getattr(cb, "on_train_begin", lambda logs=None: None)({})
        self.stop_training = False
        for epoch in range(initial_epoch, epochs):
            for cb in callbacks:
                getattr(cb, "on_epoch_begin", lambda e, logs=None: None)(epoch, {})
            order = np.random.permutation(len(x[0])) if shuffle else None
            values = self._run_batches(fetches, x, y, batch_size, True, order)
            logs = dict(zip(self.metrics_names, (float(v) for v in values)))
            if validation_data is not None:
                vx, vy = validation_data[0], validation_data[1]
                val = self.evaluate(vx, vy, batch_size=batch_size, verbose=0)
                for name, value in zip(self.metrics_names, to_list(val)):
                    logs["val_" + name] = float(value)
            if verbose:
                print(f"Epoch {epoch + 1}/{epochs}\n{len(x[0])}/{len(x[0])} - "
                      f"{format_logs(logs)}")
            for cb in callbacks:
                getattr(cb, "on_epoch_end", lambda e, logs=None: None)(epoch, logs)
            if self.stop_training:
                break
        for cb in callbacks:
            getattr(cb, "on_train_end", lambda logs=None: None)({})
        return history

    def evaluate(self, x=None, y=None, batch_size=None, verbose=1, **kwargs):
        """The loss (and the metrics, in `metrics_names` order) over `x`, `y`."""
        x = self._ensure_inputs(x)
        compiled = self._compile_graph()
        fetches = [compiled["loss"]] + [t for _, t in compiled["metrics"]]
        values = self._run_batches(fetches, x, self._arrays(y, self.outputs), batch_size or 32,
                                   False)
        if verbose:
            print(format_logs(dict(zip(self.metrics_names, values))))
        return float(values[0]) if len(values) == 1 else [float(v) for v in values]

    def predict(self, x, batch_size=None, verbose=0, **kwargs):
        xs = self._ensure_inputs(x)
        session = backend.get_session()
        chunks = []
        for rows in batches(len(xs[0]), batch_size or 32, None):
            chunks.append(session.run(self.outputs, self._feed([a[rows] for a in xs])))
        outputs = [np.concatenate([c[i] for c in chunks]) for i in range(len(self.outputs))]
        return outputs[0] if len(outputs) == 1 else outputs

    def train_on_batch(self, x, y, **kwargs):
        x = self._ensure_inputs(x)
        compiled = self._compile_graph()
        fetches = [self._training_op(), compiled["loss"]] + [t for _, t in compiled["metrics"]]
        values = self._run_batches(fetches, x, self._arrays(y, self.outputs), len(x[0]), True)
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
        """Writes every weight, in the model's order, to `filepath` (graphflow's .npz)."""
        weights = self.weights
        write_weights(filepath, [w.op.name for w in weights], backend.batch_get_value(weights))

    def load_weights(self, filepath, by_name=False):
        """Reads a file of `save_weights` into this model's weights (matched by order, or by
        the layer/weight names with by_name=True), checking count and shapes first."""
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

    def save(self, filepath, *args, **kwargs):
        raise NotImplementedError("graphflow's tf.keras cannot save whole models (HDF5); use "
                                  "model.save_weights and rebuild the model in code")


__all__ = ["Model"]
