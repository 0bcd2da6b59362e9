"""Elementwise ops on the GPU: every op of `codegen.SUPPORTED_OPS` (the elementwise table's rows with
a C expression) runs as a one-instruction expression program through the code generator (numpy
broadcasting, strided indexing, any rank up to 8), and `FusedElementwise` ops of the fusion pass
run the same way: their whole program is one kernel.

`ElementwiseKernel` is shared by all plans using the same program; it keeps one launch closure per
tuple of input shapes (layout, collapsed strides, grid and compiled function decided once).

A program with integer division (`codegen.checked_instructions`) gets a zeroed int flag per launch
and reads it back after the kernel: a zero divisor raises CheckFailedError("Integer division by
zero"), which the session reports as TF's InvalidArgumentError naming the op (for a fused program,
the user's op the instruction replaced, `provenance`). Float programs launch without one.
"""

import threading

import numpy as np

from graphflow.framework.errors import CheckFailedError
from graphflow.kernels.cuda import codegen, cuda_kernel, runtime
from graphflow.ops import elementwise_program, elementwise_spec

_BLOCK = 256
_kernels = {}
_kernels_lock = threading.Lock()


class ElementwiseKernel:
    """A compiled-on-demand kernel for one (normalized) expression program."""

    def __init__(self, program, rt):
        self.rt = rt
        self.program = codegen.normalize(program)
        self.out_dtypes = codegen.output_dtypes(self.program)
        self.num_inputs = len(self.program["inputs"])
        self.checked = codegen.checked_instructions(self.program)
        self._launches = {}

    def __call__(self, *arrays, provenance=None):
        key = tuple(a.shape for a in arrays)
        launch = self._launches.get(key)
        if launch is None:
            launch = self._plan(key)
            self._launches[key] = launch
        if not self.checked:
            return launch(arrays)
        flag = self.rt.to_device(np.zeros(1, np.int32))
        outs = launch(arrays, flag)
        code = int(self.rt.to_host(flag)[0])
        if code:
            raise _division_error(self.program, code - 1, provenance)
        return outs

    def _plan(self, shapes):
        rt = self.rt
        try:
            out_shape = tuple(np.broadcast_shapes(*shapes)) if shapes else ()
        except ValueError:
            raise ValueError(f"shapes {', '.join(str(s) for s in shapes)} cannot be broadcast "
                             "together") from None
        n = int(np.prod(out_shape)) if out_shape else 1
        out_dtypes = self.out_dtypes
        empty = rt.empty
        if n == 0:
            return lambda arrays: [empty(out_shape, dt) for dt in out_dtypes]
        layouts, cshape, strides = codegen.plan_layout(shapes, out_shape)
        source, name, fmt = codegen.generate(self.program, layouts, len(cshape), n < 2**31)
        fn = rt.function(source, name, fmt)
        grid = rt.grid_for(n, _BLOCK)
        block = (_BLOCK, 1, 1)
        head = (np.int64(n), codegen.pack_shape(cshape))
        stride_bytes = iter([codegen.pack_strides(s) for s in strides])
        extra = [next(stride_bytes) if lay == "b" else None for lay in layouts]
        call = fn.prepared_call

        def launch(arrays, flag=None):
            outs = [empty(out_shape, dt) for dt in out_dtypes]
            args = list(head)
            for a, st in zip(arrays, extra):
                args.append(int(a.gpudata))
                if st is not None:
                    args.append(st)
            for o in outs:
                args.append(int(o.gpudata))
            if flag is not None:
                args.append(int(flag.gpudata))
            call(grid, block, *args)
            return outs
        return launch


def _division_error(program, index, provenance):
    """CheckFailedError("Integer division by zero") of instruction `index`; in a fused program it
    names the user's op the instruction replaced (`provenance`: the op's members attrs, numbered
    over the program's non-constant instructions, as the CPU program numbers them)."""
    message = elementwise_spec.INTEGER_DIVISION_BY_ZERO
    names = (provenance or {}).get("members") or []
    member = sum(ins[0] != codegen.CONST for ins in program["instructions"][:index])
    if member < len(names):
        kind = ((provenance.get("member_types") or []) + ["?"] * len(names))[member]
        source = ((provenance.get("member_sources") or []) + [""] * len(names))[member]
        where = f" created at {source}" if source else ""
        message = f"in '{names[member]}' ({kind}){where}: {message}"
    return CheckFailedError(message)


def kernel_for(program):
    """The shared ElementwiseKernel of `program` on the current runtime (one per distinct
    canonical program; its launch closures are bound to that runtime's device)."""
    rt = runtime()
    norm = codegen.normalize(program)
    key = (id(rt), codegen.program_key(norm))
    k = _kernels.get(key)
    if k is None:
        with _kernels_lock:
            k = _kernels.get(key)
            if k is None:
                k = ElementwiseKernel(norm, rt)
                _kernels[key] = k
    return k


def single_op_program(op_type, in_dtypes, out_dtype, attrs):
    """The one-instruction program of an elementwise op (its declared attrs only; a Cast's DstT is
    its output dtype)."""
    row = elementwise_spec.ROW.get(op_type)
    if row is None:
        raise codegen.ProgramError(f"op type '{op_type}' has no elementwise CUDA expression")
    kept = row.attr_values(attrs)
    if row.result == "cast":
        kept["DstT"] = np.dtype(out_dtype).name
    program = elementwise_program.single_op(op_type, in_dtypes, kept)
    program["instructions"][0][3] = np.dtype(out_dtype).name
    return program


def _supports(op_type):
    def check(in_dtypes, out_dtypes, attrs):
        try:
            codegen.normalize(single_op_program(op_type, in_dtypes, out_dtypes[0], attrs))
        except codegen.ProgramError as exc:
            return str(exc)
        return None
    return check


def _build_single(node):
    k = kernel_for(single_op_program(node.type, node.in_dtypes, node.out_dtypes[0], node.attrs))
    if node.attrs.get("data_format", "NHWC") in ("NCHW", "NCW", "NCDHW"):  # BiasAdd, channels first
        rt = runtime()

        def bias_add_nchw(x, bias):
            return k(x, rt.reshape(bias, bias.shape + (1,) * (len(x.shape) - 2)))[0]
        return bias_add_nchw
    if k.num_inputs == 1:
        return lambda x: k(x)[0]
    if k.num_inputs == 2:
        return lambda x, y: k(x, y)[0]
    return lambda *xs: k(*xs)[0]


_ELEMENTWISE = sorted((codegen.SUPPORTED_OPS - {"Identity", "StopGradient"}))
for _op in _ELEMENTWISE:
    cuda_kernel(_op, supports=_supports(_op))(_build_single)


def fused_program_supported(in_dtypes, out_dtypes, attrs):
    try:
        codegen.normalize(attrs["program"])
    except (codegen.ProgramError, KeyError, TypeError, ValueError) as exc:
        return f"the fused program has no CUDA form: {exc}"
    return None


@cuda_kernel("FusedElementwise", supports=fused_program_supported)
def _fused_elementwise(node):
    """A FusedElementwise op of the fusion pass: its whole program is one generated kernel."""
    k = kernel_for(node.attrs["program"])
    provenance = node.attrs
    return lambda *xs: k(*xs, provenance=provenance)[0]

