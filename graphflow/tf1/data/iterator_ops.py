"""Iterators: the graph side of a pipeline (`tf.data.Iterator`, one-shot and initializable).

`get_next()` adds an `IteratorGetNext` op whose outputs are the next element's components,
repacked in the element's structure; each `Session.run` that runs it takes one element, and
past the end it raises `tf.errors.OutOfRangeError`. An initializable iterator's `initializer` (a
`MakeIterator` op) starts the pipeline afresh in the session, reading the values of the tensors the
dataset captured (so it can be re-run with different feeds); `Iterator.from_structure` makes an
iterator that `make_initializer(dataset)` points at any dataset of a compatible structure. A
one-shot iterator starts by itself on its first `get_next` and cannot capture fed tensors.

Iterator state lives in the Session (each session has its own position). As in TF1 it is not
rolled back: an element taken by a run that fails in another op is consumed (variables still keep
their old values: the failed run changes none). Saving a graph file that holds iterator ops works
when the saved outputs do not need them (e.g. the model reads `placeholder_with_default(next)`
and `x` is a saved input); saving outputs that read an iterator is an error naming the op.
"""

import uuid

from graphflow.framework import dtypes
from graphflow.framework.errors import OutOfRangeError
from graphflow.framework.graph import Tensor, get_default_graph
from graphflow.framework.tensor_shape import TensorShape, as_shape
from graphflow.ops import data_ops
from graphflow.ops.registry import make_op
from graphflow.ops.static_value import constant_value
from graphflow.tf1.data import nest
from graphflow.tf1.data.dataset import Dataset, ElementError, RunContext
from graphflow.tf1.data.nest import ComponentSpec


class _Pipeline:
    """What `MakeIterator` starts: the dataset with the values of its captured tensors."""

    def __init__(self, dataset, captures, fixed_values=None):
        self.dataset = dataset
        self.captures = captures
        self.fixed_values = fixed_values

    def start(self, capture_values):
        values = self.fixed_values if self.fixed_values is not None else capture_values
        return _Elements(self.dataset._iterate(RunContext(self.captures, values)))


class _Elements:
    """A running pipeline as the iterator resource reads it: `next` gives the next element, raises
    the error of a failed one (`ElementError`; the pipeline goes on: the next call gives the
    element after it) and StopIteration at the end; `close` stops the pipeline."""

    __slots__ = ("_generator",)

    def __init__(self, generator):
        self._generator = generator

    def __iter__(self):
        return self

    def __next__(self):
        element = next(self._generator)
        if type(element) is ElementError:
            raise element.error
        return element

    def close(self):
        self._generator.close()


class Iterator:
    """`tf.data.Iterator`: made by `make_one_shot_iterator`, `make_initializable_iterator` or
    `Iterator.from_structure`."""

    def __init__(self, iterator_name, element_spec, one_shot_token="", handle=None):
        self._name = iterator_name
        self._element_spec = element_spec
        self._one_shot = one_shot_token
        self._initializer = None
        self._handle = handle  # a string tensor naming the iterator to read (from_string_handle)

    @staticmethod
    def from_structure(output_types, output_shapes=None, shared_name=None, output_classes=None):
        """An iterator of elements of this structure, not bound to a dataset yet."""
        types = nest.map_structure(dtypes.as_dtype, output_types)
        flat_types = nest.flatten(types)
        if output_shapes is None:
            flat_shapes = [TensorShape(None)] * len(flat_types)
        else:
            flat_shapes = [as_shape(s) for s in _flat_shape_list(output_shapes, types)]
        spec = nest.pack_as(types, [ComponentSpec(t, s) for t, s in zip(flat_types, flat_shapes)])
        return Iterator(_iterator_name(shared_name), spec)

    @staticmethod
    def from_string_handle(string_handle, output_types, output_shapes=None, output_classes=None):
        """A feedable iterator: each run reads the iterator whose `string_handle()` value the
        scalar string tensor `string_handle` holds (e.g. a placeholder fed the training or the
        validation iterator's handle). Elements have the structure given."""
        if not isinstance(string_handle, Tensor) or string_handle.dtype != dtypes.string:
            raise TypeError("from_string_handle needs a scalar tf.string tensor (e.g. "
                            "tf.placeholder(tf.string, shape=[]))")
        spec = Iterator.from_structure(output_types, output_shapes)._element_spec
        return Iterator("", spec, handle=string_handle)

    def string_handle(self, name=None):
        """A scalar string tensor identifying this iterator, for `from_string_handle`."""
        if self._handle is not None:
            return self._handle
        from graphflow.ops.core_ops import constant
        return constant(data_ops.iterator_handle(self._name, self._one_shot), dtype=dtypes.string,
                        name=name or "IteratorToStringHandle")

    @property
    def initializer(self):
        if self._initializer is None:
            raise ValueError("Iterator does not have an initializer: it was made by "
                             "Iterator.from_structure (use make_initializer(dataset)) or by "
                             "make_one_shot_iterator (it needs none)")
        return self._initializer

    @property
    def element_spec(self):
        return self._element_spec

    @property
    def output_types(self):
        return nest.map_structure(lambda s: s.dtype, self._element_spec)

    @property
    def output_shapes(self):
        return nest.map_structure(lambda s: s.shape, self._element_spec)

    @property
    def output_classes(self):
        return nest.map_structure(lambda s: Tensor, self._element_spec)

    def make_initializer(self, dataset, name=None):
        """An op that (re)starts this iterator over `dataset` when run."""
        if not isinstance(dataset, Dataset):
            raise TypeError(f"make_initializer expects a Dataset, got {type(dataset).__name__}")
        _check_compatible(self._element_spec, dataset.element_spec)
        captures = dataset.captured_tensors()
        graph = captures[0].graph if captures else get_default_graph()
        token = data_ops.register_dataset(_Pipeline(dataset, captures), graph)
        return make_op("MakeIterator", captures, {"iterator": self._name, "dataset": token},
                       name=name or "make_initializer", graph=graph)

    def get_next(self, name=None):
        """The next element (Tensors in the element's structure); OutOfRangeError at the end."""
        specs = nest.flatten(self._element_spec)
        attrs = {"iterator": self._name,
                 "output_types": [s.dtype.name for s in specs],
                 # a list of dims, or the shape itself where its rank is unknown (a py_func's)
                 "output_shapes": [s.shape if s.shape.dims is None else s.shape.dims
                                   for s in specs],
                 "one_shot": self._one_shot}
        inputs = () if self._handle is None else (self._handle,)
        op = make_op("IteratorGetNext", inputs, attrs, name=name or "IteratorGetNext")
        return nest.to_sparse(nest.pack_as(self._element_spec, op.outputs))

    def __repr__(self):
        return f"<Iterator '{self._name}' types: {self.output_types}>"


class EagerIterator:
    """`tfe.Iterator(dataset)`, and what `for x in dataset` uses in eager mode: a Python iterator
    whose elements are eager tensors, read by the same `IteratorGetNext` kernel a session runs."""

    def __init__(self, dataset):
        if not get_default_graph().eager:
            raise RuntimeError("tf.contrib.eager.Iterator can only be used when eager execution "
                               "is enabled; in graph mode use dataset.make_one_shot_iterator()")
        self._iterator = make_one_shot_iterator(dataset)

    @property
    def element_spec(self):
        return self._iterator.element_spec

    @property
    def output_types(self):
        return self._iterator.output_types

    @property
    def output_shapes(self):
        return self._iterator.output_shapes

    def __iter__(self):
        return self

    def __next__(self):
        try:
            return self._iterator.get_next()
        except OutOfRangeError:
            self._release()
            raise StopIteration from None

    next = __next__

    def _release(self):
        """At the end: the eager graph forgets this iterator's pipeline (a loop over a dataset
        every epoch keeps nothing of the epochs before)."""
        graph = get_default_graph()
        if not graph.eager:
            return
        resource = graph.state.resources.pop(("iterator", self._iterator._name), None)
        if resource is not None:
            resource.close()
        data_ops.forget_dataset(self._iterator._one_shot, graph)

    def get_next(self, name=None):
        """The next element; `tf.errors.OutOfRangeError` at the end (TF's eager iterator)."""
        return self._iterator.get_next(name)


def _iterator_name(shared_name):
    return shared_name or f"Iterator_{uuid.uuid4().hex[:16]}"


def _flat_shape_list(output_shapes, types):
    """Shapes given as lists are leaves (one component's dims), matched against `types`."""
    def walk(shapes, spec):
        if isinstance(spec, dict):
            return [s for k in sorted(spec) for s in walk(shapes[k], spec[k])]
        if isinstance(spec, tuple):
            return [s for sh, sp in zip(shapes, spec) for s in walk(sh, sp)]
        return [shapes]
    return walk(output_shapes, types)


def _check_compatible(expected, actual):
    try:
        nest.assert_same_structure(expected, actual)
    except TypeError:
        raise TypeError(f"Expected a dataset with element structure {expected}, got "
                        f"{actual}") from None
    for want, got in zip(nest.flatten(expected), nest.flatten(actual)):
        if want.dtype != got.dtype:
            raise TypeError(f"Expected output types {want.dtype.name}, got dataset with output "
                            f"type {got.dtype.name}")
        if not want.shape.is_compatible_with(got.shape):
            raise TypeError(f"Expected output shapes compatible with {want.shape}, got dataset "
                            f"with output shape {got.shape}")


def make_initializable_iterator(dataset, shared_name=None):
    """`tf.compat.v1.data.make_initializable_iterator(dataset)`."""
    iterator = Iterator(_iterator_name(shared_name), dataset.element_spec)
    iterator._initializer = iterator.make_initializer(dataset)
    return iterator


def make_one_shot_iterator(dataset):
    """`tf.compat.v1.data.make_one_shot_iterator(dataset)`: starts on its first `get_next`.

    The dataset may capture constants only (as in TF1): a dataset built from a placeholder needs
    an initializable iterator, whose initializer reads the fed value."""
    captures = dataset.captured_tensors()
    values = []
    for t in captures:
        value = constant_value(t)
        if value is None:
            raise ValueError(
                f"make_one_shot_iterator: the dataset captures tensor '{t.name}' (a "
                f"{t.op.type} op), whose value is not known without running the graph; use "
                "make_initializable_iterator() and run its initializer (with feeds)")
        values.append(value)
    graph = get_default_graph()
    token = data_ops.register_dataset(_Pipeline(dataset, captures, values), graph)
    return Iterator(_iterator_name(None), dataset.element_spec, one_shot_token=token)


def get_output_types(dataset_or_iterator):
    return dataset_or_iterator.output_types


def get_output_shapes(dataset_or_iterator):
    return dataset_or_iterator.output_shapes


def get_output_classes(dataset_or_iterator):
    return dataset_or_iterator.output_classes
