"""Element-wise and ordering transformations: map, filter, shuffle, repeat, take, skip, zip,
concatenate, cache, prefetch. (Batching is in `batching`, nested datasets in `nested`.)

TF1 semantics kept: `repeat()` with no count repeats forever (and stops if an epoch is empty);
`take(-1)`/`skip(-1)` take or skip everything; `shuffle` fills a buffer of `buffer_size`
elements and yields a uniformly chosen one, refilling its slot from upstream. A seeded shuffle
(op seed, or the graph seed via `tf.set_random_seed`) gives the same order every time its iterator
starts; with `reshuffle_each_iteration=True` (the default) each `repeat` epoch has a new order,
with False every epoch repeats the first one.
"""

import numpy as np

from graphflow.framework.graph import get_default_graph
from graphflow.framework.tensor_shape import TensorShape
from graphflow.ops.random_ops import get_seed
from graphflow.tf1.data import nest, threads
from graphflow.tf1.data.dataset import Dataset, ElementError, first_error, scalar_arg
from graphflow.tf1.data.function import ElementFunction
from graphflow.tf1.data.nest import ComponentSpec


class MapDataset(Dataset):
    """`map(map_func, num_parallel_calls)`: `map_func` traced once into a graph function (see
    `function`) and run on each element; with `num_parallel_calls` > 1 on a thread pool. An
    element whose function raises becomes an `ElementError` (get_next raises it, the pipeline goes
    on with the next element, as TF's)."""

    def __init__(self, input_dataset, map_func, num_parallel_calls=None):
        self._fn = ElementFunction(map_func, input_dataset.element_spec, "Dataset.map",
                                   get_default_graph().seed)
        self._workers = 1 if num_parallel_calls is None else threads.resolve_parallelism(
            num_parallel_calls)
        if self._workers < 1:
            raise ValueError(f"num_parallel_calls must be positive or AUTOTUNE, got "
                             f"{num_parallel_calls}")
        super().__init__(self._fn.output_spec, inputs=[input_dataset])

    def _iterate(self, ctx):
        upstream = self._inputs[0]._iterate(ctx)
        if self._workers > 1:
            yield from threads.parallel_map(upstream, self._apply, self._workers)
            return
        try:
            for element in upstream:
                yield self._apply(element)
        finally:
            upstream.close()

    def _apply(self, element):
        if type(element) is ElementError:
            return element
        try:
            return tuple(self._fn(element))
        except Exception as exc:  # (not KeyboardInterrupt, SystemExit: those stop the pipeline)
            return ElementError(exc)


class FilterDataset(Dataset):
    """`filter(predicate)`: the elements for which the traced `predicate` gives True."""

    def __init__(self, input_dataset, predicate):
        self._fn = ElementFunction(predicate, input_dataset.element_spec, "Dataset.filter",
                                   get_default_graph().seed)
        spec = self._fn.output_spec
        if (not isinstance(spec, ComponentSpec) or not spec.dtype.is_bool
                or not spec.shape.is_compatible_with([])):
            raise ValueError(f"`predicate` must return a scalar boolean tensor, got {spec}")
        super().__init__(input_dataset.element_spec, inputs=[input_dataset])

    def _iterate(self, ctx):
        upstream = self._inputs[0]._iterate(ctx)
        try:
            for element in upstream:
                if type(element) is ElementError:
                    yield element
                    continue
                try:
                    keep = bool(self._fn(element)[0])
                except Exception as exc:
                    yield ElementError(exc)
                    continue
                if keep:
                    yield element
        finally:
            upstream.close()


class ShuffleDataset(Dataset):
    def __init__(self, input_dataset, buffer_size, seed, reshuffle_each_iteration):
        self._buffer_size = scalar_arg(buffer_size, "buffer_size")
        seed1, seed2 = get_seed(seed)
        self._entropy = None if seed1 is None else [seed1, seed2]
        self._reshuffle = bool(reshuffle_each_iteration)
        super().__init__(input_dataset.element_spec, inputs=[input_dataset],
                         captures=[self._buffer_size])

    def _epoch_rng(self, ctx):
        """This epoch's generator: drawn from a per-start seed sequence when reshuffling, else
        the same seed for every epoch of one start."""
        key = ("shuffle", id(self))
        if key not in ctx.state:
            ctx.state[key] = np.random.default_rng(self._entropy)
            ctx.state[key + ("fixed",)] = ctx.state[key].integers(2**63)
        if self._reshuffle:
            return np.random.default_rng(ctx.state[key].integers(2**63))
        return np.random.default_rng(ctx.state[key + ("fixed",)])

    def _iterate(self, ctx):
        size = ctx.count(self._buffer_size)
        if size <= 0:
            raise ValueError(f"shuffle: buffer_size must be greater than zero, got {size}")
        rng = self._epoch_rng(ctx)
        upstream = self._inputs[0]._iterate(ctx)
        try:
            buffer = []
            for element in upstream:
                if len(buffer) < size:
                    buffer.append(element)
                    continue
                i = int(rng.integers(len(buffer)))
                yield buffer[i]
                buffer[i] = element
            while buffer:
                i = int(rng.integers(len(buffer)))
                yield buffer[i]
                buffer[i] = buffer[-1]
                buffer.pop()
        finally:
            upstream.close()


class RepeatDataset(Dataset):
    def __init__(self, input_dataset, count=None):
        self._count = -1 if count is None else scalar_arg(count, "count")
        super().__init__(input_dataset.element_spec, inputs=[input_dataset],
                         captures=[self._count])

    def _iterate(self, ctx):
        count = ctx.count(self._count)
        epoch = 0
        while count < 0 or epoch < count:
            produced = False
            upstream = self._inputs[0]._iterate(ctx)
            try:
                for element in upstream:
                    produced = True
                    yield element
            finally:
                upstream.close()
            if not produced:
                return
            epoch += 1


class TakeDataset(Dataset):
    def __init__(self, input_dataset, count):
        self._count = scalar_arg(count, "count")
        super().__init__(input_dataset.element_spec, inputs=[input_dataset],
                         captures=[self._count])

    def _iterate(self, ctx):
        count = ctx.count(self._count)
        if count == 0:
            return
        upstream = self._inputs[0]._iterate(ctx)
        taken = 0
        try:
            for element in upstream:
                yield element
                if type(element) is not ElementError:  # (TF: a failed element is not counted)
                    taken += 1
                    if taken == count:
                        return
        finally:
            upstream.close()


class SkipDataset(Dataset):
    def __init__(self, input_dataset, count):
        self._count = scalar_arg(count, "count")
        super().__init__(input_dataset.element_spec, inputs=[input_dataset],
                         captures=[self._count])

    def _iterate(self, ctx):
        count = ctx.count(self._count)
        upstream = self._inputs[0]._iterate(ctx)
        seen = 0
        try:
            for element in upstream:
                if type(element) is ElementError:  # raised, not counted (TF)
                    yield element
                    continue
                if count >= 0 and seen >= count:
                    yield element
                seen += 1
        finally:
            upstream.close()


class ZipDataset(Dataset):
    """`Dataset.zip((a, b))`: elements (a_i, b_i) until the shortest input ends."""

    def __init__(self, datasets):
        parts = nest.flatten(datasets)
        if not parts or not all(isinstance(d, Dataset) for d in parts):
            raise TypeError("Dataset.zip takes a (nested) tuple or dict of Datasets")
        self._structure = datasets
        super().__init__(nest.pack_as(datasets, [d.element_spec for d in parts]), inputs=parts)

    def _iterate(self, ctx):
        upstreams = [d._iterate(ctx) for d in self._inputs]
        try:
            for elements in zip(*upstreams):
                error = first_error(elements)
                yield error if error is not None else tuple(c for element in elements for c in element)
        finally:
            for upstream in upstreams:
                upstream.close()


def _most_specific_compatible(a, b):
    if a.dims is None or b.dims is None or len(a.dims) != len(b.dims):
        return TensorShape(None)
    return TensorShape([x if x == y else None for x, y in zip(a.dims, b.dims)])


class ConcatenateDataset(Dataset):
    def __init__(self, first, second):
        try:
            nest.assert_same_structure(first.element_spec, second.element_spec)
        except TypeError:
            raise TypeError(f"Datasets to concatenate have different structures: {first} and "
                            f"{second}") from None
        specs = []
        for a, b in zip(nest.flatten(first.element_spec), nest.flatten(second.element_spec)):
            if a.dtype != b.dtype:
                raise TypeError(f"Datasets to concatenate have different types: {a.dtype.name} "
                                f"and {b.dtype.name}")
            specs.append(ComponentSpec(a.dtype, _most_specific_compatible(a.shape, b.shape)))
        super().__init__(nest.pack_as(first.element_spec, specs), inputs=[first, second])

    def _iterate(self, ctx):
        for dataset in self._inputs:
            upstream = dataset._iterate(ctx)
            try:
                yield from upstream
            finally:
                upstream.close()


class CacheDataset(Dataset):
    """`cache()`: the first complete pass is kept in memory and replayed by later passes (later
    `repeat` epochs) of the same started iterator; an interrupted pass is not kept."""

    def __init__(self, input_dataset, filename=""):
        if filename:
            raise NotImplementedError(f"cache(filename={filename!r}): graphflow caches in memory "
                                      "only; use cache()")
        super().__init__(input_dataset.element_spec, inputs=[input_dataset])

    def _iterate(self, ctx):
        key = ("cache", id(self))
        cached = ctx.state.get(key)
        if cached is not None:
            yield from cached
            return
        elements = []
        upstream = self._inputs[0]._iterate(ctx)
        try:
            for element in upstream:
                if type(element) is not ElementError:  # (a failed element is not kept)
                    elements.append(element)
                yield element
        finally:
            upstream.close()
        ctx.state[key] = elements


class PrefetchDataset(Dataset):
    """`prefetch(buffer_size)`: a producer thread keeps up to `buffer_size` elements ready."""

    def __init__(self, input_dataset, buffer_size):
        self._buffer_size = threads.resolve_parallelism(buffer_size)
        if self._buffer_size < 1:
            raise ValueError(f"prefetch: buffer_size must be positive or AUTOTUNE, got "
                             f"{buffer_size}")
        super().__init__(input_dataset.element_spec, inputs=[input_dataset])

    def _iterate(self, ctx):
        yield from threads.prefetch(self._inputs[0]._iterate(ctx), self._buffer_size)
