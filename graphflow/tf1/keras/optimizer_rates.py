"""What every tf.keras optimizer shares: the learning rate as a variable a callback can change
(`_RateVariable`, `optimizer.lr`), and Keras's `lr=` / `decay=` arguments read into one rate
(`_rate`). `optimizers.py` (SGD, Adam, RMSprop and `get`) and `optimizers_more.py` (Adagrad,
Adadelta, Adamax, Nadam, Ftrl) build on it."""


class _RateVariable:
    """`optimizer.lr` / `optimizer.learning_rate`: the learning rate as a non-trainable variable
    of the default graph (made on first use, tracked by the backend) that the update reads, so
    callbacks and `backend.set_value` change it between steps, as in TF 1.15 Keras."""

    _rate_attr = "_learning_rate"

    def _rate_variable(self):
        from graphflow.ops.core_ops import convert_to_tensor
        from graphflow.ops.state_ops import Variable
        from graphflow.tf1.keras import backend
        value = getattr(self, self._rate_attr)
        if not isinstance(value, Variable):
            value = Variable(convert_to_tensor(float(value), dtype="float32"), trainable=False,
                             name=self._name + "/learning_rate")
            backend.track_variable(value)
            setattr(self, self._rate_attr, value)
        return value

    lr = learning_rate = property(_rate_variable)

    def minimize(self, loss, *args, **kwargs):
        self._rate_variable()      # the rate is a variable before the update reads it
        return super().minimize(loss, *args, **kwargs)


def _rate(learning_rate, kwargs, default):
    lr = kwargs.pop("lr", None)
    if kwargs.pop("decay", 0.0):
        raise NotImplementedError("Keras optimizers' `decay` is not supported: use a tf.train "
                                  "learning-rate schedule")
    if kwargs:
        raise TypeError(f"unexpected optimizer arguments {sorted(kwargs)}")
    if learning_rate is None:
        learning_rate = lr if lr is not None else default
    return learning_rate
