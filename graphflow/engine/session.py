"""`Session`: runs a graph. `run(fetches, feed_dict)` flattens the fetch structure, finds (or
compiles) the plan for this (graph version, fetches, feeds) signature, runs it and rebuilds the
structure.

Plans are compiled by `graphflow.engine.executor`; the session owns the cache, the variable store
and the default-session stack. A signature that feeds scalar bool flags (`is_training`) or tensors
declared with unknown dimensions gets plans made for the flags' values and the feeds' shapes
(`_SpecializedPlans`). `run` is safe to call from several threads on one session, and no lock
is held for a whole run: a run waiting in a queue op (a dequeue waiting for another thread's
enqueue) blocks no other run, and `close` wakes it (the queues are session resources).
"""

import collections
import functools
import threading

import numpy as np

from graphflow import optimizer_passes
from graphflow.engine import placement
from graphflow.engine.executor import Plan
from graphflow.framework import default_session, dtypes
from graphflow.framework.config import session_intra_op_threads
from graphflow.framework.errors import CancelledError
from graphflow.framework.graph import Operation, Tensor, get_default_graph
from graphflow.kernels import SessionState
from graphflow.kernels.variable_store import DeviceVariableStore
from graphflow.ops import registry
from graphflow.ops.indexed_slices import IndexedSlices, IndexedSlicesValue
from graphflow.ops.sparse_tensor import SparseTensor, SparseTensorValue

_CLOSED = "Attempted to use a closed Session."  # TF1's words


# ----------------------------------------------------------------------------- fetch structures
def _is_leaf(x):
    return not isinstance(x, (list, tuple, dict))


def flatten_fetches(fetches):
    """(leaves, rebuild) for any nesting of list/tuple/namedtuple/dict; `rebuild(values)` restores.

    Both walks are iterative (explicit stacks), so any nesting depth works without RecursionError.
    The structure is recorded as nodes: None for a leaf, (kind, keys, children) for a container."""
    leaves = []
    root = [None]
    stack = [(fetches, root, 0)]
    containers = 0
    while stack:
        x, parent, slot = stack.pop()
        if isinstance(x, SparseTensor):  # fetched as a SparseTensorValue of its three tensors
            x = _SparseParts(x)
        elif isinstance(x, IndexedSlices):  # fetched as an IndexedSlicesValue
            x = (_IndexedParts if x.dense_shape is not None else _ShapelessIndexedParts)(x)
        if _is_leaf(x):
            leaves.append(x)
            continue
        containers += 1
        if containers > _MAX_FETCH_CONTAINERS:
            raise ValueError(f"fetches hold more than {_MAX_FETCH_CONTAINERS} nested lists/tuples/"
                             "dicts (does the structure contain itself?)")
        if isinstance(x, dict):
            keys, items = list(x.keys()), list(x.values())
        else:
            keys, items = None, list(x)
        node = (_PARTS_KIND.get(type(x), type(x)), keys, [None] * len(items))
        parent[slot] = node
        for i in range(len(items) - 1, -1, -1):  # pushed in reverse: leaves come out in order
            stack.append((items[i], node[2], i))
    shape = root[0]

    def rebuild(values):
        values = iter(values)
        if shape is None:
            return next(values)
        return _assemble(shape, values)

    return leaves, rebuild


_MAX_FETCH_CONTAINERS = 10_000_000


class _SparseParts(tuple):
    """A fetched SparseTensor while flattening: its (indices, values, dense_shape) tensors."""

    def __new__(cls, sparse):
        return super().__new__(cls, (sparse.indices, sparse.values, sparse.dense_shape))


class _IndexedParts(tuple):
    """A fetched IndexedSlices while flattening: its (values, indices, dense_shape) tensors."""

    def __new__(cls, slices):
        return super().__new__(cls, (slices.values, slices.indices, slices.dense_shape))


class _ShapelessIndexedParts(tuple):
    """A fetched IndexedSlices without a dense_shape: its (values, indices) tensors."""

    def __new__(cls, slices):
        return super().__new__(cls, (slices.values, slices.indices))


class _ShapelessIndexedSlicesValue:
    """Builds the IndexedSlicesValue (dense_shape None) of a fetched shapeless IndexedSlices."""

    _fields = ("values", "indices")

    def __new__(cls, values, indices):
        return IndexedSlicesValue(values, indices, None)


_PARTS_KIND = {_SparseParts: SparseTensorValue, _IndexedParts: IndexedSlicesValue,
               _ShapelessIndexedParts: _ShapelessIndexedSlicesValue}


class _Frame:
    """One container being rebuilt: its node and the items built so far."""

    __slots__ = ("kind", "keys", "children", "items")

    def __init__(self, node):
        self.kind, self.keys, self.children = node
        self.items = []


def _assemble(shape, values):
    """Build the container tree `shape`, taking leaves from `values` in order (iteratively)."""
    stack = [_Frame(shape)]
    while True:
        frame = stack[-1]
        if len(frame.items) < len(frame.children):
            child = frame.children[len(frame.items)]
            if child is None:
                frame.items.append(next(values))
            else:
                stack.append(_Frame(child))
            continue
        stack.pop()
        built = _container(frame.kind, frame.keys, frame.items)
        if not stack:
            return built
        stack[-1].items.append(built)


def _container(kind, keys, items):
    if issubclass(kind, dict):
        out = kind() if kind is not collections.defaultdict else {}
        for k, v in zip(keys, items):
            out[k] = v
        return out
    if hasattr(kind, "_fields"):  # namedtuple
        return kind(*items)
    return kind(items)


_TENSOR_TYPE = frozenset([Tensor])


def _flatten_structured_feeds(feed_dict):
    """TF1 lets a feed_dict key be a tuple of tensors (an RNN's state tuple) fed with a value of
    the same structure: {(c, h): (c_value, h_value)}. Such keys become one entry per tensor. A
    SparseTensor key (`tf.sparse_placeholder`) is its (indices, values, dense_shape) tuple, fed a
    `SparseTensorValue` or a tuple of three."""
    flat = {}
    for key, value in feed_dict.items():
        stack = [(key, value, "")]
        while stack:
            k, v, path = stack.pop()
            if isinstance(k, SparseTensor):
                k = _SparseParts(k)
            if type(k) is not Tensor and isinstance(k, tuple):
                if not isinstance(v, (tuple, list)) or len(v) != len(k):
                    raise ValueError(f"feed_dict key {path or 'a tuple'} of {len(k)} tensors is fed "
                                     f"{type(v).__name__} {_short(v)}, not a structure of "
                                     f"{len(k)} values")
                stack.extend((ki, vi, f"{path}[{i}]") for i, (ki, vi) in enumerate(zip(k, v)))
            else:
                flat[k] = v
    return flat


def _sparse_feed_values(values, sparse_at):
    """Feed values with the SparseTensorValue (or 3-tuple) at each of `sparse_at` spread into its
    (indices, values, dense_shape)."""
    flat = []
    for i, v in enumerate(values):
        if i in sparse_at:
            if not isinstance(v, (tuple, list)) or len(v) != 3:
                raise ValueError(f"feed value {i} is for a SparseTensor and must be a "
                                 f"SparseTensorValue or (indices, values, dense_shape), got "
                                 f"{type(v).__name__} {_short(v)}")
            flat.extend(v)
        else:
            flat.append(v)
    return flat


def _short(value):
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


class Session:
    """`tf.Session(graph=None)`: a context manager that runs ops of `graph` (default graph if None).

    Options beyond TF1: `optimize` (default True) and `passes` choose graph-optimization passes
    applied to each compiled plan; `device` (e.g. "/gpu:0") is the default device of ops built
    without `tf.device`: every op with a kernel for it runs there, the others fall back to the CPU
    (see `graphflow.engine.placement`; a missing GPU is reported here, when the session is created).

    Threads (docs/sessions.md): all methods may be called from several threads at once (building
    the graph may not). A run's reads see the runs committed before each read; its writes are
    committed at once when it succeeds; `variable_values()` (so `Saver.save`) is a consistent
    snapshot of whole runs. `close()` makes calls, compiles and runs in other threads raise
    `RuntimeError("Attempted to use a closed Session.")` (a queue wait: `CancelledError`, as TF1).
    """

    def __init__(self, target="", graph=None, config=None, optimize=True, passes=None, device=None):
        self.graph = graph if graph is not None else get_default_graph()
        if self.graph.eager:
            raise RuntimeError("tf.Session is not compatible with eager execution: ops run as "
                               "they are called, read a value with `t.numpy()` (or build a graph "
                               "inside `with tf.Graph().as_default():` and run it there)")
        self._state = SessionState()
        self._state.intra_op_threads = session_intra_op_threads(config)  # config: tf.ConfigProto
        self._state.allow_soft_placement = bool(getattr(config, "allow_soft_placement", False))
        self.default_device = placement.check_device(device)
        self._state.variables = DeviceVariableStore()  # may hold GPU-resident values
        self._plans = {}
        self._compile_lock = threading.Lock()
        self._closed = False
        self._optimize = optimize
        self._passes = optimizer_passes.resolve_passes(passes)  # unknown names fail here
        self._context_stack = []

    # --- context management ------------------------------------------------------------------
    def __enter__(self):
        graph_ctx = self.graph.as_default()
        graph_ctx.__enter__()
        self._context_stack.append(graph_ctx)
        default_session.push(self)
        return self

    def __exit__(self, exc_type, exc, tb):
        default_session.pop(self)
        graph_ctx = self._context_stack.pop()
        graph_ctx.__exit__(exc_type, exc, tb)
        self.close()

    def as_default(self):
        return _SessionDefault(self)

    @property
    def graph_def(self):
        """`Session.graph_def`: the session's graph as a TensorFlow GraphDef protobuf."""
        return self.graph.as_graph_def()

    def close(self):
        """Release plans, variable values and random generators."""
        self._closed = True
        self._plans.clear()
        self._state.clear()

    # --- running -------------------------------------------------------------------------------
    def run(self, fetches, feed_dict=None, options=None, run_metadata=None):
        """Evaluate `fetches` (any nesting of Tensors/Operations/names) with `feed_dict` values."""
        if self._closed:
            raise RuntimeError(_CLOSED)
        kind = type(fetches)
        if kind is Tensor or kind is Operation:
            leaves, rebuild = (fetches,), _first
        elif (kind is list or kind is tuple) and all(type(f) is Tensor for f in fetches):
            leaves, rebuild = fetches, kind
        elif isinstance(fetches, (Tensor, Operation, str)) or hasattr(fetches, "_as_graph_element"):
            leaves, rebuild = (fetches,), _first
        else:
            leaves, rebuild = flatten_fetches(fetches)
        if feed_dict and not _TENSOR_TYPE.issuperset(map(type, feed_dict)) \
                and any(type(k) is not Tensor and isinstance(k, (tuple, SparseTensor))
                        for k in feed_dict):
            feed_dict = _flatten_structured_feeds(feed_dict)  # only keys that are not all Tensors
        if options is not None and run_metadata is not None and options.trace_level:
            return rebuild(self._run_traced(leaves, feed_dict, run_metadata))
        values = tuple(feed_dict.values()) if feed_dict else ()
        plan = self._plan_for(leaves, feed_dict or ())
        try:
            out = plan.run(values)
        except Exception as exc:
            self._reraise(exc)
        if run_metadata is not None:
            run_metadata.plan = plan.pick(values)
        return rebuild(out)

    def _run_traced(self, leaves, feed_dict, run_metadata):
        """A run with per-op start/end times in `run_metadata.step_stats` (engine/tracing.py)."""
        feed_dict = feed_dict or {}
        plan = self._plan_for(leaves, feed_dict or ())
        values = tuple(feed_dict.values())
        plan = plan.pick(values)
        try:
            out, run_metadata.step_stats = plan.run_traced(values)
        except Exception as exc:
            self._reraise(exc)
        run_metadata.plan = plan
        return out

    def _plan_for(self, leaves, feed_keys):
        """The cached plan for these fetch leaves and feed keys (compiled on first use).

        The key uses object ids for Tensors/Operations (kept alive by the graph, so ids are stable)
        and values for names; anything else is resolved to its graph element first."""
        key = (self.graph.version, tuple(map(_cache_key, leaves)), tuple(map(_cache_key, feed_keys)))
        plan = self._plans.get(key)
        if plan is None:
            with self._compile_lock:
                plan = self._plans.get(key)
                if plan is None:
                    elements = [self.graph.as_graph_element(f) for f in leaves]
                    feed_tensors = [self._feed_key(k) for k in feed_keys]
                    if len(set(map(id, feed_tensors))) != len(feed_tensors):
                        raise ValueError("The same tensor is fed twice in feed_dict")
                    flags = _flag_positions(feed_tensors) if self._optimize else ()
                    shaped = _unknown_shape_positions(feed_tensors) if self._optimize else ()
                    if flags or shaped:
                        plan = _SpecializedPlans(self, elements, feed_tensors, flags, shaped)
                    else:
                        plan = self._compile(elements, feed_tensors)
                    if self._closed:  # closed by another thread while this one compiled
                        raise RuntimeError(_CLOSED)
                    self._plans[key] = plan
        return plan

    def _compiled_plans(self):
        """Every Plan this session compiled, in the order of their signatures (a signature's
        plans for its flags' values and feeds' shapes in the order they were made)."""
        out = []
        for plan in self._plans.values():
            out.extend(plan.plans.values() if type(plan) is _SpecializedPlans else [plan])
        return out

    def _feed_key(self, key):
        element = self.graph.as_graph_element(key)
        if not isinstance(element, Tensor):
            raise TypeError(f"Cannot feed the Operation '{element.name}': feed_dict keys must be "
                            "Tensors (or tensor names like 'x:0').")
        return element

    def _compile(self, elements, feed_tensors, known=None, shapes=None):
        if not self._optimize:
            return Plan(elements, feed_tensors, self._state, device=self.default_device)
        # optimize a copy of what the plan needs (the user's graph is never modified)
        optimizer = functools.partial(optimizer_passes.optimize_for_plan, passes=self._passes)
        opt = optimizer(elements, feed_tensors, known=known, shapes=shapes)
        plan = Plan(opt.fetches, opt.feeds, self._state, device=self.default_device,
                    origin=opt.origin, optimizer=optimizer, ops=opt.graph.get_operations())
        plan.optimization = opt.report
        return plan

    def make_callable(self, fetches, feed_list=None, accept_options=False):
        """A function `f(*feed_values)` running `fetches` with the lowest per-call overhead."""
        feed_list = list(feed_list or [])
        single = isinstance(fetches, (Tensor, Operation, str)) or hasattr(fetches,
                                                                          "_as_graph_element")
        kind = type(fetches)
        if single:
            leaves, rebuild = [fetches], None
        elif (kind is list or kind is tuple) and all(type(f) is Tensor for f in fetches):
            leaves, rebuild = list(fetches), kind  # a flat list: no structure to rebuild
        else:
            leaves, rebuild = flatten_fetches(fetches)
        sparse_at = [i for i, k in enumerate(feed_list) if isinstance(k, SparseTensor)]
        if sparse_at:  # a SparseTensor key is its three tensors, fed a SparseTensorValue
            feed_list = [t for k in feed_list
                         for t in (_SparseParts(k) if isinstance(k, SparseTensor) else (k,))]
        run = self._plan_for(leaves, feed_list).run

        def call(*feed_values):
            if sparse_at:
                feed_values = _sparse_feed_values(feed_values, sparse_at)
            try:
                out = run(feed_values)
            except Exception as exc:
                self._reraise(exc)
            return out[0] if single else rebuild(out)
        return call

    def _reraise(self, exc):
        """Raise a failed run's error, or "closed" when another thread closed the session meanwhile
        (a queue wait the close woke says so already: CancelledError)."""
        if self._closed and not isinstance(exc, CancelledError):
            raise RuntimeError(_CLOSED) from exc
        raise exc

    def load_variable(self, variable, value):
        """Write `value` into `variable` in this session without running an op (`Variable.load`);
        the value must fit the variable's dtype and shape."""
        arr = np.array(value, dtype=variable.dtype.as_numpy_dtype)
        if not variable.shape.is_compatible_with(arr.shape):
            raise ValueError(f"Cannot load a value of shape {arr.shape} into variable "
                             f"{variable.name} of shape {variable.shape}")
        self._state.variables.write(variable.op.attrs["shared_name"], arr)

    def variable_values(self):
        """A consistent snapshot {shared_name: read-only array} of the variables initialized in
        this session (what `graphflow.save` and `train.Saver` write to disk): every variable as
        the same set of whole runs left it, also while other threads run."""
        if self._closed:
            raise RuntimeError(_CLOSED)
        return self._state.variables.host_values()

    def set_variable_values(self, values):
        """Store {shared_name: array} as variable values (restoring a saved model or checkpoint);
        the caller has checked dtypes and shapes against the variables. All are stored at once:
        a snapshot or run in another thread sees all of them or none."""
        if self._closed:
            raise RuntimeError(_CLOSED)
        self._state.variables.write_many(values)

    def list_devices(self):
        return placement.list_devices()




def _first(values):
    return values[0]


def _cache_key(x):
    """Plan-cache key of a fetch or feed: ids for graph objects, values for names."""
    kind = type(x)
    if kind is Tensor or kind is Operation:
        return id(x)
    if kind is str:
        return x
    element = getattr(x, "_as_graph_element", None)
    if element is not None:
        return id(element())
    return id(x)


class _SessionDefault:
    def __init__(self, session):
        self.session = session

    def __enter__(self):
        default_session.push(self.session)
        return self.session

    def __exit__(self, *exc):
        default_session.pop(self.session)


class InteractiveSession(Session):
    """A Session that installs itself as the default session when created (for notebooks)."""

    def __init__(self, target="", graph=None, config=None, **kwargs):
        super().__init__(target, graph, config, **kwargs)
        default_session.push(self)

    def close(self):
        super().close()
        default_session.remove(self)


# At most this many scalar bool feeds of one signature get plans made for their values (2^n plans).
MAX_FLAG_FEEDS = 3
# At most this many shapes of the feeds declared with unknown dimensions get plans of their own
# (a training loop's full batches and its last one, an evaluation's): then one plan for any shape.
MAX_SHAPE_PLANS = 4


def _flag_positions(feed_tensors):
    """Positions of the fed scalar bool graph inputs (`is_training` placeholders) whose values a
    plan may be made for; () when there are none or more than MAX_FLAG_FEEDS."""
    positions = tuple(i for i, t in enumerate(feed_tensors)
                      if t.dtype == dtypes.bool_ and t.shape.ndims == 0 and len(t.op.outputs) == 1
                      and registry.lookup(t.op.type).graph_input)
    return positions if len(positions) <= MAX_FLAG_FEEDS else ()


class _SpecializedPlans:
    """The plans of one (fetches, feeds) signature made for what the feeds hold, compiled on first
    use: the values of fed scalar bool flags as constants (so `tf.cond(is_training, ...)` keeps
    one branch and `tf.where(is_training, a, b)` one operand, folded and fused like the rest), and
    the full shapes of fed tensors declared with unknown dimensions (a [None, 784] placeholder
    fed 64 rows: the plan's shapes are static, so shape ops fold and broadcasts fuse; at most
    MAX_SHAPE_PLANS shapes, then one plan for any shape). Values that are not plain bools, or
    feeds that are not numpy arrays, get the plans made without them. A plan's checks of the fed
    values are the general plan's."""

    __slots__ = ("session", "elements", "feed_tensors", "flags", "shaped", "plans", "shape_keys")

    def __init__(self, session, elements, feed_tensors, flags, shaped):
        self.session = session
        self.elements = elements
        self.feed_tensors = feed_tensors
        self.flags = flags
        self.shaped = shaped
        self.plans = {}
        self.shape_keys = set()

    def run(self, feed_values):
        """Run the plan made for these feed values (a Plan's `run`)."""
        return self.pick(feed_values).run(feed_values)

    def pick(self, feed_values):
        """The Plan made for these feed values (compiled on first use)."""
        key = tuple([_plain_bool(feed_values[i]) for i in self.flags]
                    + [_shape_of(feed_values[i]) for i in self.shaped])
        plan = self.plans.get(key)
        if plan is None:
            with self.session._compile_lock:
                plan = self.plans.get(key)
                if plan is None:
                    plan = self.plans[key] = self._made_for(key)
        return plan

    def _made_for(self, key):
        flag_values, shape_values = key[:len(self.flags)], key[len(self.flags):]
        known = None if None in flag_values else {
            self.feed_tensors[i]: value for i, value in zip(self.flags, flag_values)}
        shapes = None
        fits = all(shape is not None and self.feed_tensors[i].shape.is_compatible_with(shape)
                   for i, shape in zip(self.shaped, shape_values))
        if shape_values and fits:  # (a feed of the wrong shape: the general plan reports it)
            if shape_values in self.shape_keys or len(self.shape_keys) < MAX_SHAPE_PLANS:
                self.shape_keys.add(shape_values)
                shapes = {self.feed_tensors[i]: shape for i, shape in zip(self.shaped, shape_values)}
        if shapes is None and shape_values:  # one plan for any shape (per flag values)
            general = flag_values + (None,) * len(shape_values)
            if general != key:
                plan = self.plans.get(general)
                if plan is None:
                    plan = self.plans[general] = self.session._compile(
                        self.elements, self.feed_tensors, known)
                return plan
        return self.session._compile(self.elements, self.feed_tensors, known, shapes)


def _shape_of(value):
    """A numpy array's shape, else None (lists and scalars go to the plans for any shape)."""
    return value.shape if type(value) is np.ndarray else None


def _unknown_shape_positions(feed_tensors):
    """Positions of the fed tensors (one-output ops) declared with unknown dimensions."""
    return tuple(i for i, t in enumerate(feed_tensors)
                 if not t.shape.is_fully_defined() and len(t.op.outputs) == 1)


def _plain_bool(value):
    """True/False for a Python or numpy bool (a 0-d bool array too), else None."""
    if value is True or value is False:
        return value
    if isinstance(value, (np.bool_, np.ndarray)) and value.dtype == np.bool_ and value.ndim == 0:
        return bool(value)
    return None
