"""`flat_map` and `interleave`: a function from an element to a dataset, and the elements of those
datasets in sequence (`flat_map`) or round-robin (`interleave`, TF1's cycle/block order).

The function is traced once on placeholders (see `function`); the dataset it returns captures
tensors of the function's graph (`Dataset.from_tensor_slices(x)` captures the placeholder `x`), so
for each element the function's graph computes those tensors and the inner dataset starts with
them.
"""

from graphflow.framework.graph import get_default_graph
from graphflow.tf1.data import threads
from graphflow.tf1.data.dataset import Dataset, ElementError, RunContext
from graphflow.tf1.data.function import TracedFunction


class _DatasetFunction:
    def __init__(self, fn, element_spec, what):
        traced = TracedFunction(fn, element_spec, what, get_default_graph().seed)
        inner = traced.result
        if not isinstance(inner, Dataset):
            raise TypeError(f"The function passed to {what} must return a Dataset, got "
                            f"{type(inner).__name__}")
        self.inner = inner
        self.captures = inner.captured_tensors()
        outside = [t.name for t in self.captures if t.graph is not traced.graph]
        if outside:
            raise ValueError(f"The dataset made by the function passed to {what} captures "
                             f"tensors of the outer graph ({outside}); build them inside the "
                             "function")
        self._evaluate = traced.evaluator(self.captures)

    def start(self, element):
        """A running iterator of the inner dataset for one element."""
        ctx = RunContext(self.captures, self._evaluate(element))
        return self.inner._iterate(ctx)


class FlatMapDataset(Dataset):
    def __init__(self, input_dataset, map_func):
        self._fn = _DatasetFunction(map_func, input_dataset.element_spec, "Dataset.flat_map")
        super().__init__(self._fn.inner.element_spec, inputs=[input_dataset])

    def _iterate(self, ctx):
        upstream = self._inputs[0]._iterate(ctx)
        try:
            for element in upstream:
                if type(element) is ElementError:
                    yield element
                    continue
                inner = self._fn.start(element)
                try:
                    yield from inner
                finally:
                    inner.close()
        finally:
            upstream.close()


class InterleaveDataset(Dataset):
    def __init__(self, input_dataset, map_func, cycle_length, block_length):
        self._fn = _DatasetFunction(map_func, input_dataset.element_spec, "Dataset.interleave")
        self._cycle_length = threads.resolve_parallelism(cycle_length)
        self._block_length = int(block_length)
        if self._cycle_length < 1 or self._block_length < 1:
            raise ValueError(f"interleave: cycle_length and block_length must be positive, got "
                             f"{cycle_length} and {block_length}")
        super().__init__(self._fn.inner.element_spec, inputs=[input_dataset])

    def _iterate(self, ctx):
        upstream = self._inputs[0]._iterate(ctx)
        cycle = [None] * self._cycle_length
        index = block = 0
        open_count, input_done = 0, False
        try:
            while not input_done or open_count:
                current = cycle[index]
                if current is not None:
                    element = next(current, None)
                    if element is not None:
                        block += 1
                        if block == self._block_length:
                            index, block = (index + 1) % self._cycle_length, 0
                        yield element
                        continue
                    current.close()
                    cycle[index] = None
                    open_count -= 1
                    index, block = (index + 1) % self._cycle_length, 0
                elif not input_done:
                    source = next(upstream, None)
                    if source is None:
                        input_done = True
                    elif type(source) is ElementError:
                        yield source
                    else:
                        cycle[index] = self._fn.start(source)
                        open_count += 1
                else:
                    index, block = (index + 1) % self._cycle_length, 0
        finally:
            for current in cycle:
                if current is not None:
                    current.close()
            upstream.close()
