"""`tf.data.Dataset`: the TF1 input-pipeline API (sources, transformations, iterators).

A dataset is a description: building one runs nothing. Its elements have a nested structure
(tuples, namedtuples, dicts; see `nest`) of components with known dtypes and (partial) static
shapes, `element_spec`. An iterator made from it (`make_one_shot_iterator`,
`make_initializable_iterator`, `Iterator.from_structure`) puts ops in the graph; when a Session runs
those ops, the pipeline runs in that session as Python generators over numpy arrays, with real
threads where TF1 has them (`map(num_parallel_calls=)`, `prefetch`). Tensors a dataset is built
from (`from_tensor_slices(x_placeholder)`, `batch(batch_size_tensor)`) are *captured*: the
iterator's initializer op takes them as inputs and the pipeline reads their values when it starts.
"""

from graphflow.framework.graph import Tensor, get_default_graph
from graphflow.ops.core_ops import convert_to_tensor
from graphflow.tf1.data import nest

AUTOTUNE = -1  # tf.data.experimental.AUTOTUNE: let graphflow pick (the number of CPU cores)


class RunContext:
    """What one started pipeline shares: the captured tensors' values and per-start state (the
    generators of seeded shuffles, in-memory caches)."""

    def __init__(self, captures, values):
        self._values = {id(t): v for t, v in zip(captures, values)}
        self.state = {}

    def value(self, x):
        """The value of a captured Tensor; anything else is returned as it is."""
        return self._values[id(x)] if isinstance(x, Tensor) else x

    def count(self, x):
        return int(self.value(x))


def scalar_arg(value, what):
    """An int argument (`batch_size`, `count` ...) or a scalar Tensor captured for run time."""
    if isinstance(value, Tensor) or hasattr(value, "_as_graph_element"):
        tensor = convert_to_tensor(value)
        if not tensor.dtype.is_integer or tensor.shape.ndims not in (None, 0):
            raise TypeError(f"{what} must be a scalar integer tensor, got {tensor.name} of "
                            f"dtype {tensor.dtype.name} and shape {tensor.shape}")
        return tensor
    return int(value)


class ElementError:
    """An element whose computation raised (in `map`'s function): it travels down the pipeline in
    the element's place, and the iterator's `get_next` raises `error` for it; the next `get_next`
    gives the element after it (TF's rule: an error in one element ends no epoch). Transforms pass
    it on unchanged; a batch, zip or flat_map that holds one gives it in place of its result."""

    __slots__ = ("error",)

    def __init__(self, error):
        self.error = error


def first_error(elements):
    """The first ElementError among `elements`, or None."""
    for element in elements:
        if type(element) is ElementError:
            return element
    return None


class Dataset:
    """`tf.data.Dataset`. Subclasses set the element spec and implement `_iterate(ctx)`, a
    generator of elements as flat tuples of numpy arrays."""

    def __init__(self, element_spec, inputs=(), captures=()):
        self._element_spec = element_spec
        self._inputs = tuple(inputs)  # the datasets this one reads
        self._captures = tuple(c for c in captures if isinstance(c, Tensor))

    def _iterate(self, ctx):
        raise NotImplementedError(f"{type(self).__name__} does not implement _iterate")

    def captured_tensors(self):
        """The Tensors of the graph this pipeline reads when it starts (each once, in order)."""
        seen, out, stack = set(), [], [self]
        while stack:
            dataset = stack.pop()
            for t in dataset._captures:
                if id(t) not in seen:
                    seen.add(id(t))
                    out.append(t)
            stack.extend(reversed(dataset._inputs))
        return out

    # --- structure --------------------------------------------------------------------------
    @property
    def element_spec(self):
        return self._element_spec

    @property
    def output_types(self):
        return nest.pack_as(self._element_spec, [s.dtype for s in nest.flatten(self._element_spec)])

    @property
    def output_shapes(self):
        return nest.pack_as(self._element_spec, [s.shape for s in nest.flatten(self._element_spec)])

    @property
    def output_classes(self):
        return nest.pack_as(self._element_spec, [Tensor] * len(nest.flatten(self._element_spec)))

    def __repr__(self):
        types = nest.map_structure(lambda s: s.dtype.name, self._element_spec)
        shapes = nest.map_structure(lambda s: str(s.shape), self._element_spec)
        return f"<{type(self).__name__} shapes: {shapes}, types: {types}>"

    def __iter__(self):
        if get_default_graph().eager:  # eager mode: a Python iterator over eager elements
            from graphflow.tf1.data import iterator_ops
            return iterator_ops.EagerIterator(self)
        raise TypeError("A tf.data.Dataset is not iterable in graph mode: make an iterator "
                        "(dataset.make_one_shot_iterator().get_next()) and run it in a Session")

    # --- sources ----------------------------------------------------------------------------
    @staticmethod
    def from_tensor_slices(tensors):
        from graphflow.tf1.data import sources
        return sources.TensorSliceDataset(tensors)

    @staticmethod
    def from_tensors(tensors):
        from graphflow.tf1.data import sources
        return sources.TensorDataset(tensors)

    @staticmethod
    def from_generator(generator, output_types, output_shapes=None, args=None):
        from graphflow.tf1.data import sources
        return sources.GeneratorDataset(generator, output_types, output_shapes, args)

    @staticmethod
    def range(*args, output_type=None):
        from graphflow.tf1.data import sources
        return sources.RangeDataset(*args, output_type=output_type)

    @staticmethod
    def zip(datasets):
        from graphflow.tf1.data import transforms
        return transforms.ZipDataset(datasets)

    # --- transformations --------------------------------------------------------------------
    def concatenate(self, dataset):
        from graphflow.tf1.data import transforms
        return transforms.ConcatenateDataset(self, dataset)

    def map(self, map_func, num_parallel_calls=None):
        from graphflow.tf1.data import transforms
        return transforms.MapDataset(self, map_func, num_parallel_calls)

    def filter(self, predicate):
        from graphflow.tf1.data import transforms
        return transforms.FilterDataset(self, predicate)

    def flat_map(self, map_func):
        from graphflow.tf1.data import nested
        return nested.FlatMapDataset(self, map_func)

    def interleave(self, map_func, cycle_length=AUTOTUNE, block_length=1, num_parallel_calls=None):
        """Elements of the datasets `map_func` makes, `block_length` at a time from each of
        `cycle_length` open ones (TF1's order). `num_parallel_calls` is accepted; the inner
        datasets are read one at a time."""
        from graphflow.tf1.data import nested
        return nested.InterleaveDataset(self, map_func, cycle_length, block_length)

    def batch(self, batch_size, drop_remainder=False):
        from graphflow.tf1.data import batching
        return batching.BatchDataset(self, batch_size, drop_remainder)

    def padded_batch(self, batch_size, padded_shapes=None, padding_values=None,
                     drop_remainder=False):
        from graphflow.tf1.data import batching
        return batching.PaddedBatchDataset(self, batch_size, padded_shapes, padding_values,
                                           drop_remainder)

    def shuffle(self, buffer_size, seed=None, reshuffle_each_iteration=None):
        from graphflow.tf1.data import transforms
        return transforms.ShuffleDataset(self, buffer_size, seed,
                                         True if reshuffle_each_iteration is None
                                         else reshuffle_each_iteration)

    def repeat(self, count=None):
        from graphflow.tf1.data import transforms
        return transforms.RepeatDataset(self, count)

    def take(self, count):
        from graphflow.tf1.data import transforms
        return transforms.TakeDataset(self, count)

    def skip(self, count):
        from graphflow.tf1.data import transforms
        return transforms.SkipDataset(self, count)

    def prefetch(self, buffer_size):
        from graphflow.tf1.data import transforms
        return transforms.PrefetchDataset(self, buffer_size)

    def cache(self, filename=""):
        from graphflow.tf1.data import transforms
        return transforms.CacheDataset(self, filename)

    def apply(self, transformation_func):
        result = transformation_func(self)
        if not isinstance(result, Dataset):
            raise TypeError("`transformation_func` must return a Dataset, got "
                            f"{type(result).__name__}")
        return result

    # --- iterators --------------------------------------------------------------------------
    def make_one_shot_iterator(self):
        from graphflow.tf1.data import iterator_ops
        return iterator_ops.make_one_shot_iterator(self)

    def make_initializable_iterator(self, shared_name=None):
        from graphflow.tf1.data import iterator_ops
        return iterator_ops.make_initializable_iterator(self, shared_name)
