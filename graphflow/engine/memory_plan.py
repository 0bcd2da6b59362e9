"""Memory planning, a stage of every plan compile (after placement, before code is emitted): from
the schedule, which outputs can be written into the buffer of a dead input (in place), plus the
planned peak of the bytes the plan allocates. It is not an optimization pass: it runs for every
plan, `Session(optimize=False)` included, and returns its result as a `MemoryPlan`.

The plan already drops every value right after its last reader. On top of that, an op listed in
`OpDef.inplace_inputs` (or a fused op, any input) whose CPU kernel takes an `out=` buffer may write
its result over input `p` when all of this holds:
  - the op runs on the CPU and reads the input where it lives (no device-to-host copy between);
  - the input's buffer is owned by the plan: produced by an op whose OpDef declares
    `fresh_output` (elementwise ops, matmuls, fused ops), never a fed array, a constant, a
    variable value or a view of one (`may_alias_external`);
  - every value sharing that buffer (views made by `may_alias_input` ops) is dead after this op,
    none is fetched, and no reader of them `retains_inputs` (so never a buffer
    that flowed into a stateful op);
  - no other input of the op is a view of the same buffer;
  - the input has the output's dtype and, statically, its exact shape (broadcasting cannot grow
    it) -- or merely a compatible one, for kernels that check the buffer at run time and allocate
    when it does not fit (the fused kernels: `checks_out_shape`).
The plan's steps record the reused buffer and the emitted function calls `v7 = k3(v2, v5, out=v2)`.

A variable update whose CPU kernel can store its input as the variable's new value (`Assign`; the
kernel is flagged `adopts_input`) is told to keep the array itself instead of copying it
(`k4(v3, adopt=True)`) when the plan owns that array and nothing else can see it: its producer
declares `fresh_output` (a stateful producer too: the collectives return buffers of their own,
which they hand out again only once nothing refers to them), no view or in-place result shares its
buffer, it is not fetched, the update is its only reader and the last step using it, it lives on
the host and has the variable's dtype. A failed run still changes no variable: the array was the
run's own, and the variable store takes it only when the run commits.

The planned peak counts plan-owned buffers only (not feeds, constants or variables, nor a kernel's
internal temporaries), from static shapes; it is None when a shape is not fully known.
"""


from graphflow.kernels import KernelNode, SessionState, kernel_accepts_out
from graphflow.kernels import cpu as cpu_kernels
from graphflow.ops import registry


class MemoryPlan:
    """`inplace`: {op: input position whose buffer the op's output reuses}; `adopt`: the variable
    updates that store their input without copying it; peaks in bytes."""

    def __init__(self, inplace, peak_bytes, without_reuse, num_buffers, unknown, adopt=frozenset()):
        self.inplace = inplace
        self.adopt = adopt
        self.peak_bytes = peak_bytes
        self._without_reuse = without_reuse  # the number, or a function computing it on demand
        self.num_buffers = num_buffers
        self.unknown_sizes = unknown

    @property
    def peak_bytes_without_reuse(self):
        """The planned peak had no op written in place (computed when first asked for: runs
        never need it)."""
        if callable(self._without_reuse):
            self._without_reuse = self._without_reuse()
        return self._without_reuse

    def summary(self):
        if self.peak_bytes is None:
            peak = f"peak unknown ({self.unknown_sizes} values of unknown size)"
        else:
            peak = (f"planned peak {_fmt(self.peak_bytes)} "
                    f"({_fmt(self.peak_bytes_without_reuse)} without in-place reuse)")
        return f"{len(self.inplace)} in-place steps, {self.num_buffers} buffers, {peak}"

    def __repr__(self):
        return f"<MemoryPlan {self.summary()}>"


def _fmt(n):
    if n >= 2**20:
        return f"{n / 2**20:.2f} MiB"
    return f"{n / 2**10:.1f} KiB" if n >= 2**10 else f"{n} B"


def last_uses(ops):
    """{tensor: index in `ops` of its last reader} for a schedule `ops`."""
    last = {}
    for i, op in enumerate(ops):
        for t in op.inputs:
            last[t] = i
    return last


# ------------------------------------------------------------------ analysis
class _Buffer:
    """One allocation: the values sharing it (its producer's output, views, in-place results)."""

    __slots__ = ("bytes", "fresh", "end", "pinned", "start", "retained", "members")

    def __init__(self, nbytes, fresh, start):
        self.bytes = nbytes
        self.fresh = fresh        # produced by an op known to return a new array
        self.start = start        # step that allocates it
        self.end = start          # last step reading any of its values
        self.pinned = False       # holds a fetched value
        self.retained = False     # some reader may keep a reference (stateful, unknown op)
        self.members = 0          # values sharing it

    def add(self, t, last_step, preserve):
        self.members += 1
        self.end = max(self.end, last_step)
        if t in preserve:
            self.pinned = True
        if not self.retained and not all(_non_retaining(c) for c in t._consumers):
            self.retained = True


def _nbytes(t):
    n = t.shape.num_elements()
    return None if n is None else n * t.dtype.size


def may_alias_external(tensor, fed):
    """True if the value of `tensor` may be an array the user or the variable store also holds
    (a fed array, a constant, a variable value, or a view of one). Such values are never written
    over in place, and the executor copies them before they are handed out or stored."""
    while True:
        if tensor in fed:
            return True
        op_def = registry.lookup(tensor.op.type)
        if op_def.returns_state or op_def.must_feed:
            return True
        if not op_def.may_alias_input or not tensor.op.inputs:
            return False
        tensor = tensor.op.inputs[0]


def _fresh_producer(op):
    op_def = registry.lookup(op.type)
    if op_def.may_alias_input or op_def.returns_state:
        return False
    return op_def.fresh_output  # False for stateful ops unless they declare it


def _non_retaining(op):
    op_def = registry.lookup(op.type)
    if op_def.stateful:
        return False
    if op_def.may_alias_input:
        return True  # its output joins the buffer's members and is tracked
    return not op_def.retains_inputs


def _inplace_positions(op):
    op_def = registry.lookup(op.type)
    if op_def.stateful or len(op.outputs) != 1:
        return ()
    if op_def.inplace_any_input:
        return tuple(range(len(op.inputs)))
    return op_def.inplace_inputs


def _shape_kept(v, op):
    """Statically, op's output has exactly v's shape: same rank, and every dim of v is known or
    is the only contribution to that output dim (other inputs are 1 or absent there)."""
    out = op.outputs[0]
    vd, od = v.shape.dims, out.shape.dims
    if vd is None or od is None or len(vd) != len(od):
        return False
    for i, (a, b) in enumerate(zip(vd, od)):
        if a is not None:
            if a != b:
                return False
            continue
        for t in op.inputs:
            if t is v:
                continue
            td = t.shape.dims
            if td is None:
                return False
            j = i - (len(od) - len(td))
            if j >= 0 and td[j] != 1:
                return False
    return True


def _out_support(op, state, kernel_of):
    """(accepts out=, checks the buffer's shape itself) for op's CPU kernel (the plan's own kernel
    when `kernel_of` is given: ops missing there run elsewhere and never write in place)."""
    if kernel_of is not None:
        kernel = kernel_of.get(op)
        if kernel is None:
            return False, False
        return kernel_accepts_out(kernel), bool(getattr(kernel, "checks_out_shape", False))
    try:
        node = KernelNode.describing(op, state)
        kernel = cpu_kernels.choose(node).build(node)
    except Exception:
        return False, False
    return kernel_accepts_out(kernel), bool(getattr(kernel, "checks_out_shape", False))


def _shape_compatible(v, op):
    """Same rank (at least 1: ufuncs on 0-d values return numpy scalars, not buffers) and no
    conflicting known dims."""
    vd, od = v.shape.dims, op.outputs[0].shape.dims
    return bool(vd) and od is not None and len(vd) == len(od) and all(
        a is None or b is None or a == b for a, b in zip(vd, od))


def plan_memory(ops, preserve, fed=frozenset(), last=None, kernel_of=None, on_host=None):
    """The MemoryPlan of running `ops` (a schedule in topological order); `preserve` holds the
    fetched (and fed) tensors, `fed` the fed ones. A plan compile passes what its earlier stages
    computed: `last` (`last_uses(ops)`), `kernel_of` {op: its CPU kernel} for the ops placed on the
    CPU, and `on_host(tensor)` (placement: the value lives on the host). Without them every op
    is taken to run on the CPU and its kernel is built here."""
    if last is None:
        last = last_uses(ops)
    buffer_of = {}
    buffers = []
    inplace = {}
    adopt = set()
    state = SessionState()
    for i, op in enumerate(ops):
        op_def = registry.lookup(op.type)
        if not op_def.runs_kernel:
            continue
        reuse = _choose_inplace(op, i, last, buffer_of, state, kernel_of, on_host)
        if reuse is not None:
            inplace[op] = reuse
        if _adopts(op, i, buffer_of, kernel_of, on_host):
            adopt.add(op)
        for t in op.outputs:
            if may_alias_external(t, fed):
                buf = None
            elif reuse is not None:
                buf = buffer_of[op.inputs[reuse]]
            elif op_def.may_alias_input and op.inputs:
                buf = buffer_of.get(op.inputs[0])
                if buf is None:  # a view of something external
                    buffer_of[t] = None
                    continue
            else:
                buf = _Buffer(_nbytes(t), _fresh_producer(op), i)
                buffers.append(buf)
            buffer_of[t] = buf
            if buf is not None:
                buf.add(t, last.get(t, i), preserve)
    with_reuse = _peak(buffers, len(ops))
    def without():
        return _peak_without_reuse(ops, last, preserve, fed)
    unknown = sum(1 for b in buffers if b.bytes is None)
    return MemoryPlan(inplace, with_reuse, without, len(buffers), unknown, frozenset(adopt))


def _adopts(op, step, buffer_of, kernel_of, on_host):
    """Whether `op` (a variable update) may store its input 0 itself (see the module docstring)."""
    if kernel_of is None or not getattr(kernel_of.get(op), "adopts_input", False):
        return False
    v = op.inputs[0]
    buf = buffer_of.get(v)
    return (buf is not None and buf.fresh and not buf.pinned and buf.members == 1
            and buf.end == step and len(v._consumers) == 1 and v.dtype == op.outputs[0].dtype
            and (on_host is None or on_host(v)))


def _choose_inplace(op, step, last, buffer_of, state, kernel_of, on_host):
    positions = _inplace_positions(op)
    if not positions or (kernel_of is not None and op not in kernel_of):
        return None
    out = op.outputs[0]
    for p in positions:
        v = op.inputs[p]
        buf = buffer_of.get(v)
        if (buf is None or not buf.fresh or buf.pinned or buf.retained or buf.end > step
                or v.dtype != out.dtype or (on_host is not None and not on_host(v))):
            continue
        if any(t is not v and buffer_of.get(t) is buf for t in op.inputs):
            continue
        if not _shape_compatible(v, op):
            continue
        accepts, checks = _out_support(op, state, kernel_of)
        # A kernel that checks the buffer's shape itself falls back to a new array when the shapes
        # differ at run time; for the others the static shapes must prove it.
        if accepts and (checks or _shape_kept(v, op)):
            return p
    return None


def _peak(buffers, num_steps):
    """Max over steps of the bytes of buffers alive (allocated at `start`, freed after `end`)."""
    if any(b.bytes is None for b in buffers):
        return None
    delta = [0] * (num_steps + 2)
    for b in buffers:
        delta[b.start] += b.bytes
        if not b.pinned:
            delta[b.end + 1] -= b.bytes
    peak = live = 0
    for d in delta:
        live += d
        peak = max(peak, live)
    return peak


def _peak_without_reuse(ops, last, preserve, fed):
    buffers = []
    buffer_of = {}
    for i, op in enumerate(ops):
        op_def = registry.lookup(op.type)
        if not op_def.runs_kernel:
            continue
        for t in op.outputs:
            if may_alias_external(t, fed):
                continue
            if op_def.may_alias_input and op.inputs:
                buf = buffer_of.get(op.inputs[0])
                if buf is None:
                    continue
            else:
                buf = _Buffer(_nbytes(t), True, i)
                buffers.append(buf)
            buffer_of[t] = buf
            buf.add(t, last.get(t, i), preserve)
    return _peak(buffers, len(ops))
