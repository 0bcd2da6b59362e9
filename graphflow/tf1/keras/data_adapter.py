"""Where `fit`/`evaluate`/`predict` take their batches from, as TF 1.15 Keras allowed: numpy
arrays (shuffled batches of `batch_size`), a `tf.data.Dataset` (run through an initializable
iterator in the backend's session, `steps` batches per epoch or until the data runs out), or a
Python generator / `tf.keras.utils.Sequence` yielding `(x, y)` tuples.

Each source gives, per epoch, an iterator of `(xs, ys)`: lists of numpy arrays (ys None when the
data has no targets); the model feeds them to its placeholders.
"""

import inspect

import numpy as np

from graphflow.framework.errors import OutOfRangeError
from graphflow.tf1.data.dataset import Dataset
from graphflow.tf1.data.iterator_ops import Iterator
from graphflow.tf1.keras.training_utils import batches


def is_dataset(x):
    return isinstance(x, (Dataset, Iterator))


def is_generator(x):
    """A generator / iterator or a Sequence (`__len__` and `__getitem__`, not an array)."""
    if inspect.isgenerator(x) or (hasattr(x, "__next__") and not isinstance(x, np.ndarray)):
        return True
    return isinstance(x, Sequence)


def split_element(element):
    """(x, y) from a dataset/generator element: `(x, y)`; `(x, y, sample_weight)` is refused;
    anything else is x alone."""
    if isinstance(element, tuple) and len(element) == 3:
        raise NotImplementedError("graphflow's tf.keras takes no sample weights from datasets "
                                  "or generators")
    if isinstance(element, tuple) and len(element) == 2:
        return element[0], element[1]
    return element, None


class Sequence:
    """`tf.keras.utils.Sequence`: batches by index (`__getitem__`), `__len__` batches per epoch,
    `on_epoch_end` called after each epoch."""

    def __getitem__(self, index):
        raise NotImplementedError

    def __len__(self):
        raise NotImplementedError

    def on_epoch_end(self):
        pass


class ArraySource:
    """Numpy arrays in batches of `batch_size`, shuffled each epoch when asked."""

    def __init__(self, xs, ys, batch_size, shuffle=False):
        self.xs, self.ys, self.batch_size, self.shuffle = xs, ys, batch_size, shuffle
        self.steps = -(-len(xs[0]) // batch_size)

    def epoch(self, model):
        order = np.random.permutation(len(self.xs[0])) if self.shuffle else None
        for rows in batches(len(self.xs[0]), self.batch_size, order):
            yield ([a[rows] for a in self.xs],
                   None if self.ys is None else [a[rows] for a in self.ys])


class DatasetSource:
    """A dataset run through one initializable iterator. With `steps`, an epoch is `steps`
    batches and the iterator carries on across epochs (a repeated dataset); without, an epoch
    is one pass, re-initialized each time."""

    def __init__(self, dataset, steps):
        self.dataset, self.steps = dataset, steps
        self.iterator, self.next, self.fresh = None, None, True

    def _start(self, session):
        if self.iterator is None:
            if isinstance(self.dataset, Iterator):
                self.iterator = self.dataset
            else:
                self.iterator = self.dataset.make_initializable_iterator()
            self.next = self.iterator.get_next()
        if isinstance(self.dataset, Dataset):
            session.run(self.iterator.initializer)
        self.fresh = False

    def epoch(self, model):
        from graphflow.tf1.keras import backend
        session = backend.get_session()
        if self.fresh or self.steps is None:
            self._start(session)
        step = 0
        while self.steps is None or step < self.steps:
            try:
                element = session.run(self.next)
            except OutOfRangeError:
                if self.steps is not None:
                    print(f"WARNING: the dataset ran out of data after {step} of {self.steps} "
                          "steps; it starts again next epoch (use .repeat())")
                    self.fresh = True
                break
            step += 1
            x, y = split_element(element)
            yield _as_lists(model, x, y)


class GeneratorSource:
    """A generator (`steps` items per epoch, required) or a Sequence (`len` batches)."""

    def __init__(self, generator, steps):
        if steps is None and not isinstance(generator, Sequence):
            raise ValueError("fitting/evaluating/predicting from a generator needs "
                             "`steps_per_epoch` / `steps`")
        self.generator = generator
        self.steps = steps if steps is not None else len(generator)

    def epoch(self, model):
        for step in range(self.steps):
            if isinstance(self.generator, Sequence):
                element = self.generator[step]
            else:
                try:
                    element = next(self.generator)
                except StopIteration:
                    break
            x, y = split_element(element)
            yield _as_lists(model, x, y)
        if isinstance(self.generator, Sequence):
            self.generator.on_epoch_end()


def _as_lists(model, x, y):
    xs = model._ensure_inputs(x)
    ys = None if y is None else model._arrays(y, model.outputs)
    return xs, ys


def make_source(model, x, y, batch_size, steps, shuffle=False):
    """The source for `fit`/`evaluate`/`predict`'s `x` (and `y` for arrays)."""
    if is_dataset(x):
        if y is not None:
            raise ValueError("`y` must not be given when `x` is a dataset (its elements are "
                             "(x, y) tuples)")
        return DatasetSource(x, steps)
    if is_generator(x):
        return GeneratorSource(x, steps)
    xs = model._ensure_inputs(x)
    ys = None if y is None else model._arrays(y, model.outputs)
    return ArraySource(xs, ys, batch_size or 32, shuffle)


__all__ = ["Sequence"]
