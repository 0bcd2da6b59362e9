"""`Session`: runs a graph. `run(fetches, feed_dict)` flattens the fetch structure, finds (or compiles)
the plan for this (graph version, fetches, feeds) signature, runs it and rebuilds the structure.

Plans are compiled by `graphflow.executor`; the session owns the cache, the variable store and the
default-session stack. `run` is safe to call from several threads on one session.
"""

import collections
import threading

from graphflow.executor import Plan
from graphflow.graph import Operation, Tensor, get_default_graph
from graphflow.kernels import SessionState


class _DefaultSessionStack(threading.local):
    def __init__(self):
        self.stack = []


_default_sessions = _DefaultSessionStack()


def get_default_session():
    return _default_sessions.stack[-1] if _default_sessions.stack else None


def get_default_session_or_error():
    session = get_default_session()
    if session is None:
        raise ValueError("Cannot evaluate a tensor: no default session is registered. Use "
                         "`with tf.Session() as sess:` or pass session=sess.")
    return session


# ----------------------------------------------------------------------------- fetch structures
def _is_leaf(x):
    return not isinstance(x, (list, tuple, dict))


def flatten_fetches(fetches):
    """(leaves, rebuild) for any nesting of list/tuple/namedtuple/dict; `rebuild(values)` restores."""
    leaves = []

    def walk(x):
        if _is_leaf(x):
            leaves.append(x)
            return None
        if isinstance(x, dict):
            return (type(x), [(k, walk(v)) for k, v in x.items()])
        return (type(x), [walk(v) for v in x])

    shape = walk(fetches)

    def rebuild(values):
        it = iter(values)

        def build(node):
            if node is None:
                return next(it)
            kind, children = node
            if issubclass(kind, dict):
                out = kind() if kind is not collections.defaultdict else {}
                for k, child in children:
                    out[k] = build(child)
                return out
            items = [build(c) for c in children]
            if hasattr(kind, "_fields"):  # namedtuple
                return kind(*items)
            return kind(items)
        return build(shape)

    return leaves, rebuild


class Session:
    """`tf.Session(graph=None)`: a context manager that runs ops of `graph` (default graph if None).

    Options beyond TF1: `optimize` (default True) and `passes` choose graph-optimization passes
    applied to each compiled plan.
    """

    def __init__(self, target="", graph=None, config=None, optimize=True, passes=None):
        self.graph = graph if graph is not None else get_default_graph()
        self._state = SessionState()
        self._plans = {}
        self._compile_lock = threading.Lock()
        self._closed = False
        self._optimize = optimize
        self._passes = passes
        self._context_stack = []

    # --- context management ------------------------------------------------------------------
    def __enter__(self):
        graph_ctx = self.graph.as_default()
        graph_ctx.__enter__()
        self._context_stack.append(graph_ctx)
        _default_sessions.stack.append(self)
        return self

    def __exit__(self, exc_type, exc, tb):
        if _default_sessions.stack and _default_sessions.stack[-1] is self:
            _default_sessions.stack.pop()
        graph_ctx = self._context_stack.pop()
        graph_ctx.__exit__(exc_type, exc, tb)
        self.close()

    def as_default(self):
        return _SessionDefault(self)

    def close(self):
        """Release plans, variable values and random generators."""
        self._closed = True
        self._plans.clear()
        self._state.clear()

    # --- running -------------------------------------------------------------------------------
    def run(self, fetches, feed_dict=None, options=None, run_metadata=None):
        """Evaluate `fetches` (any nesting of Tensors/Operations/names) with `feed_dict` values."""
        if self._closed:
            raise RuntimeError("Attempted to use a closed Session.")
        single = isinstance(fetches, (Tensor, Operation, str)) or hasattr(fetches,
                                                                          "_as_graph_element")
        if single:
            leaves, rebuild = [fetches], None
        else:
            leaves, rebuild = flatten_fetches(fetches)
        elements = tuple(self.graph.as_graph_element(f) for f in leaves)
        if feed_dict:
            feed_tensors = tuple(self._feed_key(k) for k in feed_dict)
            feed_values = tuple(feed_dict.values())
        else:
            feed_tensors, feed_values = (), ()
        plan = self._plan_for(elements, feed_tensors)
        out = plan.run(feed_values)
        if run_metadata is not None:
            run_metadata.plan = plan
        if single:
            return out[0]
        return rebuild(out)

    def _feed_key(self, key):
        element = self.graph.as_graph_element(key)
        if not isinstance(element, Tensor):
            raise TypeError(f"Cannot feed the Operation '{element.name}': feed_dict keys must be "
                            "Tensors (or tensor names like 'x:0').")
        return element

    def _plan_for(self, elements, feed_tensors):
        key = (self.graph.version, tuple(map(id, elements)), tuple(map(id, feed_tensors)))
        plan = self._plans.get(key)
        if plan is None:
            with self._compile_lock:
                plan = self._plans.get(key)
                if plan is None:
                    plan = self._compile(list(elements), list(feed_tensors))
                    self._plans[key] = plan
        return plan

    def _compile(self, elements, feed_tensors):
        return Plan(elements, feed_tensors, self._state)

    def make_callable(self, fetches, feed_list=None, accept_options=False):
        """A function `f(*feed_values)` running `fetches` with the lowest per-call overhead."""
        feed_list = list(feed_list or [])
        single = isinstance(fetches, (Tensor, Operation, str)) or hasattr(fetches,
                                                                          "_as_graph_element")
        leaves, rebuild = ([fetches], None) if single else flatten_fetches(fetches)
        elements = tuple(self.graph.as_graph_element(f) for f in leaves)
        feed_tensors = tuple(self._feed_key(k) for k in feed_list)
        plan = self._plan_for(elements, feed_tensors)
        run = plan.run

        if single:
            def call(*feed_values):
                return run(feed_values)[0]
        else:
            def call(*feed_values):
                return rebuild(run(feed_values))
        return call

    def _load_variable(self, variable, value):
        import numpy as np
        arr = np.array(value, dtype=variable.dtype.as_numpy_dtype)
        if not variable.shape.is_compatible_with(arr.shape):
            raise ValueError(f"Cannot load a value of shape {arr.shape} into variable "
                             f"{variable.name} of shape {variable.shape}")
        self._state.variables.write(variable.op.attrs["shared_name"], arr)

    def list_devices(self):
        return ["/cpu:0"]


class _SessionDefault:
    def __init__(self, session):
        self.session = session

    def __enter__(self):
        _default_sessions.stack.append(self.session)
        return self.session

    def __exit__(self, *exc):
        _default_sessions.stack.pop()


class InteractiveSession(Session):
    """A Session that installs itself as the default session when created (for notebooks)."""

    def __init__(self, target="", graph=None, config=None, **kwargs):
        super().__init__(target, graph, config, **kwargs)
        _default_sessions.stack.append(self)

    def close(self):
        super().close()
        if self in _default_sessions.stack:
            _default_sessions.stack.remove(self)
