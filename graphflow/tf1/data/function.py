"""User functions of a pipeline (`map`, `filter`, `flat_map`, `interleave`) as graph functions.

As in TF1, the function is called once, at pipeline-construction time, on placeholders standing
for one element; the ops it builds go into a graph of its own, and a Session of that graph runs
them for each element (numpy values in, numpy values out). So a function written with tf ops works
(`lambda x, y: (tf.cast(x, tf.float32) / 255.0, y)`), its output dtypes and static shapes are known
before anything runs, and random ops inside it draw new values for each element. The element's
components are passed as separate arguments when it is a tuple, as one argument otherwise.

Limits: the function cannot use tensors of the outer graph (build them inside the function, or
pass numpy values), and it cannot create or read variables.
"""

import numpy as np

from graphflow.engine.session import Session
from graphflow.framework import dtypes
from graphflow.framework.graph import Graph, Tensor, name_scope
from graphflow.ops.core_ops import convert_to_tensor, placeholder
from graphflow.tf1.data import nest


def call_with_element(fn, element):
    """TF1's convention: a tuple element is spread over the arguments, anything else is one."""
    if isinstance(element, tuple) and not hasattr(element, "_fields"):
        return fn(*element)
    return fn(element)


class TracedFunction:
    """`fn` called on placeholders in a graph of its own; `evaluator(tensors)` runs it."""

    def __init__(self, fn, element_spec, what, seed=None):
        self.what = what
        self.graph = Graph()
        self.graph.seed = seed
        specs = nest.flatten(element_spec)
        with self.graph.as_default(), name_scope(what):
            self.placeholders = [placeholder(spec.dtype, spec.shape, name=f"arg{i}")
                                 for i, spec in enumerate(specs)]
            args = nest.to_sparse(nest.pack_as(element_spec, self.placeholders))
            try:
                self.result = call_with_element(fn, args)
            except ValueError as exc:
                if "different graph" not in str(exc):
                    raise
                raise ValueError(f"The function passed to {what} uses a tensor of the outer graph "
                                 f"({exc}); build its constants inside the function or pass numpy "
                                 "values") from None
        self.session = Session(graph=self.graph)

    def evaluator(self, tensors):
        """A function `(flat element values) -> list of the values of tensors` (thread-safe)."""
        tensors = list(tensors)
        if not tensors:
            return lambda values: []
        call = self.session.make_callable(tensors, self.placeholders)
        if not any(t.dtype == dtypes.string and t.shape.ndims in (None, 0) for t in tensors):
            return lambda values: call(*values)
        # a session hands a scalar string out as bytes; inside a pipeline it stays an array
        return lambda values: [_string_scalar(v) if isinstance(v, bytes) else v
                               for v in call(*values)]


def _string_scalar(data):
    out = np.empty((), dtype=object)
    out[()] = data
    return out


class ElementFunction:
    """A function from one element to one element (`map`) or to a scalar bool (`filter`)."""

    def __init__(self, fn, element_spec, what, seed=None):
        traced = TracedFunction(fn, element_spec, what, seed)
        result = traced.result
        if isinstance(result, list):  # TF1 also reads a returned list as a tuple
            result = tuple(result)
        result = nest.from_sparse(result)
        with traced.graph.as_default():
            result = nest.map_structure(
                lambda t: t if isinstance(t, Tensor) else convert_to_tensor(t), result)
        self.output_structure = result
        flat = nest.flatten(result)
        self.output_spec = nest.pack_as(result, [nest.ComponentSpec(t.dtype, t.shape)
                                                 for t in flat])
        self._run = traced.evaluator(flat)

    def __call__(self, flat_values):
        return self._run(flat_values)
