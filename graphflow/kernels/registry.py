"""Kernel implementations of each op type on one device, and the one choice a plan makes among them.

An op may run several ways on a device: the numpy reference, compiled numba loops, oneDNN's
primitives, a blocked numpy variant, ... Each way registers as an `Implementation`:

    @cpu_kernel("Conv2D", name="onednn", preference=30, requires=("onednn",),
                applies=lambda node: node.in_dtypes[0] == np.float32 and macs(node) >= MIN_MACS)
    def conv2d_onednn(node):
        ...
        return lambda x, f: ...

- `name`: how the choice reads in the optimize report, `graphflow inspect` and traces
  ("reference" is the numpy definition every other implementation is tested against);
- `preference`: larger wins among the implementations that can run the node;
- `requires`: the optional libraries it needs (the table's `features`, e.g. "numba", "onednn"): an
  implementation whose library is missing or switched off is never a candidate;
- `applies(node) -> bool`: a predicate on what the plan knows of the op when it is built (the
  `KernelNode`: dtypes, static shapes with None for unknown dims, attrs, session threads). It must
  answer False when a fact it needs is unknown; the reference (no predicate) runs everything.

`KernelTable.choose(node)` is called once per op when the plan is built; the kernel it builds never
re-decides. Where the plan does not know the node's input shapes (a plan for any batch size) and a
preferred implementation turned the node down, the choice is `BY_SHAPE`: the same `choose`, made on
each new combination of input shapes at its first call, so a plan for unknown shapes runs what a
plan for those static shapes would. A missing op type is a `NoKernelError` naming it: there is no fallback
across op types.
"""

import contextlib
import threading

REFERENCE = "reference"
# the name of the choice made per input shapes, for a node whose shapes the plan does not know
BY_SHAPE = "by-shape"
BY_SHAPE_KEPT = 16


def static_shape(*shapes):
    """The one shape the static `shapes` (of arrays that must have the same shape) describe
    together, each dim taken from whichever knows it (a predicate's helper); None when a dim is
    unknown to all, the ranks differ, or two known dims differ (the kernel reports a mismatch)."""
    dims = None
    for shape in shapes:
        if shape is None:
            continue
        if dims is None:
            dims = list(shape)
        elif len(dims) != len(shape):
            return None
        for i, d in enumerate(shape):
            if d is not None:
                if dims[i] is not None and dims[i] != d:
                    return None
                dims[i] = d
    return None if dims is None or None in dims else tuple(dims)


def _input_shapes_known(node):
    shapes = node.in_shapes
    return shapes is not None and all(s is not None and None not in s for s in shapes)


class NoKernelError(LookupError):
    pass


class Implementation:
    """One way to run one op type on one device."""

    __slots__ = ("op_type", "name", "build", "preference", "applies", "requires")

    def __init__(self, op_type, name, build, preference, applies, requires):
        self.op_type = op_type
        self.name = name
        self.build = build            # build(KernelNode) -> kernel function of arrays
        self.preference = preference
        self.applies = applies        # applies(KernelNode) -> bool, or None: every node
        self.requires = requires      # names of the table's features

    def __repr__(self):
        return f"Implementation({self.op_type!r}, {self.name!r}, preference={self.preference})"


class KernelTable:
    """The implementations of one device, by op type. `load` (optional) imports the modules that
    fill the table; it runs on the first question asked, so importing graphflow loads no kernels.
    `features`: {name: () -> bool}, whether each optional library is installed and switched on."""

    def __init__(self, device, load=None, features=None):
        self.device = device
        self.features = dict(features or {})
        self._by_type = {}                 # op type -> [Implementation], most preferred first
        self._load = load
        self._loading = threading.Lock()
        self._loaded = load is None
        self._features = {}                # feature name -> bool, asked once per process
        self._allowed = None               # names a test restricts the choice to (None: all)

    # ---- filling ------------------------------------------------------------------------------
    def register(self, *op_types, name=REFERENCE, preference=0, applies=None, requires=()):
        """Decorator registering `build(node) -> kernel` as implementation `name` of `op_types`."""
        unknown = [f for f in requires if f not in self.features]
        if unknown:
            raise ValueError(f"unknown kernel feature(s) {unknown}; known: {sorted(self.features)}")
        if name == REFERENCE and (applies is not None or requires or preference):
            raise ValueError("the reference implementation runs every node: no predicate, "
                             "requirement or preference")

        def add(build):
            for op_type in op_types:
                impls = self._by_type.setdefault(op_type, [])
                if any(i.name == name for i in impls):
                    raise ValueError(f"{self.device} kernel '{name}' for '{op_type}' registered twice")
                impls.append(Implementation(op_type, name, build, preference, applies,
                                            tuple(requires)))
                impls.sort(key=lambda i: -i.preference)
            return build
        return add

    def _ensure_loaded(self):
        if self._loaded:
            return
        with self._loading:
            if not self._loaded:
                self._load()
                self._loaded = True

    # ---- asking -------------------------------------------------------------------------------
    def implementations(self, op_type):
        """Every registered implementation of `op_type`, most preferred first."""
        self._ensure_loaded()
        try:
            return list(self._by_type[op_type])
        except KeyError:
            raise NoKernelError(f"No {self.device} kernel is registered for op type "
                                f"'{op_type}'") from None

    def op_types(self):
        self._ensure_loaded()
        return sorted(self._by_type)

    def __contains__(self, op_type):
        self._ensure_loaded()
        return op_type in self._by_type

    def feature(self, name):
        """Whether optional library `name` is installed and switched on (asked once)."""
        found = self._features.get(name)
        if found is None:
            found = self._features[name] = bool(self.features[name]())
        return found

    def usable(self, impl):
        """Whether `impl` may be chosen at all: its libraries are present, no test excludes it."""
        if self._allowed is not None and impl.name not in self._allowed and impl.name != REFERENCE:
            return False
        return all(self.feature(f) for f in impl.requires)

    def choose(self, node):
        """The implementation that runs `node` (a KernelNode): the most preferred one whose
        libraries are present and whose predicate holds; the reference is the last candidate.
        A node whose input shapes the plan does not know gets `BY_SHAPE` (the same choice made on
        each new combination of its inputs' shapes) when a more preferred implementation than the
        one that applies turned it down: it may apply to the shapes the node is run with."""
        impls = [i for i in self.implementations(node.type) if self.usable(i)]
        shapes_known = _input_shapes_known(node)
        for rank, impl in enumerate(impls):
            if impl.applies is None or impl.applies(node):
                if rank and not shapes_known:  # a preferred one may apply to the real shapes
                    return Implementation(node.type, BY_SHAPE, self._by_shape, 0, None, ())
                return impl
        raise NoKernelError(f"No {self.device} kernel of op type '{node.type}' applies to "
                            f"'{node.name}' (implementations: {[i.name for i in impls]})")

    def _by_shape(self, node):
        """A kernel choosing, at its first call with each combination of input shapes, what the
        plan would choose for a node of those static shapes (at most `BY_SHAPE_KEPT` kept)."""
        kernels = {}
        choose = self.choose

        def by_shape(*inputs):
            key = tuple(getattr(x, "shape", None) for x in inputs)
            kernel = kernels.get(key)
            if kernel is None:
                concrete = node.with_input_shapes(
                    [None if s is None else tuple(s) for s in key])
                if len(kernels) >= BY_SHAPE_KEPT:
                    kernels.clear()
                kernel = kernels[key] = choose(concrete).build(concrete)
            return kernel(*inputs)
        return by_shape

    def reference(self, op_type):
        """The reference builder of `op_type` (constant folding and tests run the definition)."""
        for impl in self.implementations(op_type):
            if impl.name == REFERENCE:
                return impl.build
        raise NoKernelError(f"op type '{op_type}' has no {self.device} reference kernel")

    # ---- tests and benchmarks -----------------------------------------------------------------
    @contextlib.contextmanager
    def restricted_to(self, names=()):
        """Within the block, plans choose only among the reference and the implementations named
        (e.g. `restricted_to()` runs the numpy reference only; `restricted_to({"numba"})`)."""
        previous, self._allowed = self._allowed, frozenset(names)
        try:
            yield
        finally:
            self._allowed = previous

    def forget_features(self):
        """Ask again whether the optional libraries are present (after an environment change)."""
        self._features.clear()
