"""Kernels: HOW each op runs on a device. One kernel table per device (`kernels.cpu`, `kernels.cuda`).

A kernel *builder* is registered under an op type. The session calls it once per plan step with a
`KernelNode` (attrs, dtypes, per-session state) and gets back a plain function of arrays:

    @cpu_kernel("Transpose")
    def transpose(node):
        perm = node.attrs["perm"]
        return lambda x: np.transpose(x, perm)

so the executor's hot loop only calls prebuilt closures. Kernels never see Graph objects.
"""

import threading

import numpy as np

from graphflow.kernels.variable_store import VariableStore


class KernelNode:
    """What a kernel builder may know about the op it runs: a read-only description, no graph."""

    __slots__ = ("name", "type", "attrs", "in_dtypes", "out_dtypes", "out_shapes", "state",
                 "compile_function", "outputs_used", "runs_last", "in_shapes")

    def __init__(self, name, op_type, attrs, in_dtypes, out_dtypes, out_shapes, state,
                 compile_function=None, outputs_used=None, runs_last=False, in_shapes=None):
        self.name = name
        self.type = op_type
        self.attrs = attrs
        self.in_dtypes = in_dtypes      # numpy dtypes
        self.out_dtypes = out_dtypes    # numpy dtypes
        self.out_shapes = out_shapes    # tuples with None for unknown dims, or None
        self.state = state              # SessionState
        # compile_function(func_graph, extra_fetches=()) -> run(input_values) -> output values:
        # how control-flow kernels (If, While) run the sub-graphs they hold (given by the engine)
        self.compile_function = compile_function
        # which outputs the plan reads (None: all may be); a kernel may skip computing the others
        self.outputs_used = outputs_used
        # the op is the last of a run's plan: nothing after it can fail, so an optimizer update
        # may write its variables in place (`engine/scheduling.py` sink_last_update)
        self.runs_last = runs_last
        # static input shapes (tuples with None for unknown dims, or None for an unknown rank):
        # what an implementation's predicate may look at when the plan chooses one
        self.in_shapes = in_shapes

    def with_input_shapes(self, in_shapes):
        """This node with the static input shapes `in_shapes` (for a choice made per shapes)."""
        return KernelNode(self.name, self.type, self.attrs, self.in_dtypes, self.out_dtypes,
                          self.out_shapes, self.state, self.compile_function, self.outputs_used,
                          self.runs_last, tuple(in_shapes))

    @classmethod
    def describing(cls, op, state, compile_function=None, outputs_used=None, runs_last=False):
        """The node describing graph op `op` (its name, type, attrs, dtypes and static shapes)."""
        return cls(op.name, op.type, op.attrs, tuple(t.dtype.as_numpy_dtype for t in op.inputs),
                   tuple(t.dtype.as_numpy_dtype for t in op.outputs),
                   tuple(t.shape.dims for t in op.outputs), state, compile_function, outputs_used,
                   runs_last, tuple(t.shape.dims for t in op.inputs))


def check_update_shapes(node, var, grad, slots=()):
    """An optimizer update's gradient and slots must have the variable's shape (every device)."""
    if grad.shape != var.shape:
        raise ValueError(f"gradient of shape {grad.shape} does not match variable "
                         f"'{node.attrs['shared_name']}' of shape {var.shape}")
    for slot in slots:
        if slot.shape != var.shape:
            raise ValueError(f"slot of shape {slot.shape} does not match variable "
                             f"'{node.attrs['shared_name']}' of shape {var.shape}")


def kernel_accepts_out(kernel):
    """True when a built kernel can be called as `kernel(*inputs, out=buffer)` (a one-output
    ufunc, or a function flagged `accepts_out`): the memory plan and the executor then let it
    write into a dead input's buffer."""
    if isinstance(kernel, np.ufunc):
        return kernel.nout == 1
    return bool(getattr(kernel, "accepts_out", False))


class SessionState:
    """Everything a session's kernels share across runs: variables, random generators and
    resources (objects such as input-pipeline iterators, closed with the session)."""

    def __init__(self):
        self.variables = VariableStore()
        self._rngs = {}
        self._rng_lock = threading.Lock()
        self.resources = {}
        self.resource_lock = threading.Lock()
        self.intra_op_threads = None  # threads one kernel call may use (None: the process default)
        self.counters = {}  # per-op run counts kept across plans (tf.Print's first_n)
        self.allow_soft_placement = False  # ConfigProto: an unavailable GPU falls back to the CPU
        # whether this session holds numpy's BLAS to one thread (from its first run to `clear`)
        self.holds_blas = False

    def hold_blas(self):
        """Hold numpy's BLAS to one thread for this session's runs (`threads/blas.py`)."""
        from graphflow.kernels.cpu.threads import blas
        with self.resource_lock:
            if not self.holds_blas:
                blas.hold()
                self.holds_blas = True

    def rng(self, key, seed):
        """A numpy Generator for one random op, created once per session from its seed."""
        with self._rng_lock:
            gen = self._rngs.get(key)
            if gen is None:
                gen = np.random.default_rng(seed)
                self._rngs[key] = gen
            return gen

    def resource(self, key, create):
        """The session's resource under `key`, made by `create()` on first use."""
        with self.resource_lock:
            found = self.resources.get(key)
            if found is None:
                found = self.resources[key] = create()
            return found

    def clear(self):
        self.variables = VariableStore()
        self._rngs.clear()
        with self.resource_lock:
            resources, self.resources = list(self.resources.values()), {}
        for resource in resources:
            close = getattr(resource, "close", None)
            if close is not None:
                close()
        self.counters.clear()
        if self.holds_blas:
            from graphflow.kernels.cpu.threads import blas
            self.holds_blas = False
            blas.release()
