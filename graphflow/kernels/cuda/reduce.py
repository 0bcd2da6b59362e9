"""Reductions on the GPU (reduce.cu): Sum, Mean, Prod, Max, Min, All, Any over any axes, ArgMax,
ArgMin, and the reductions other ops are made of (L2Loss, BiasAddGrad, SumToShape).

`plan_reduction(shape, axes)` collapses the input into the cheapest layout (pure Python, tested
against numpy without a device):
  ("rows", rows, cols)          the reduced axes are one contiguous inner block (rows of at most
                                `SHORT_ROW` elements get a thread each, longer ones a block each)
  ("cols", outer, R, inner)     the reduced axes are one contiguous middle block
  ("general", kept dims/strides, reduced dims/strides)   anything else
  ("copy",)                     nothing to reduce (every reduced axis has size 1)
Large reductions with few outputs are split across blocks and finished by a second pass.
"""

import numpy as np

from graphflow.kernels.cuda import codegen, cuda_kernel, elementwise, runtime
from graphflow.kernels.cuda.launch import SUFFIX, ceil_div, row_blocks

# op type -> (the reduction's kind, divide by the count)
_OPS = {"Sum": ("sum", False), "Mean": ("sum", True), "Prod": ("prod", False), "Max": ("max", False),
        "Min": ("min", False), "All": ("all", False), "Any": ("any", False)}
_NUMERIC = (np.float32, np.float64, np.int32, np.int64)
_MODE_NONE, _MODE_MEAN_FLOAT, _MODE_MEAN_INT, _MODE_SCALE = 0, 1, 2, 3
_ARGS = {"rows": "PPqqqqqdq", "short_rows": "PPqqqdq", "cols": "PPqqqqqqdq",
         "general": "PPqq72s64s72s64sqdq"}
SHORT_ROW = 32  # rows up to this long get one thread each instead of a block


def normalize_axes(axis, rank):
    if axis is None:
        return tuple(range(rank))
    axes = [axis] if isinstance(axis, int) else list(axis)
    out = set()
    for a in axes:
        if not -rank <= a < max(rank, 1):
            raise ValueError(f"axis {a} is out of range for a tensor of rank {rank}")
        out.add(a % rank if rank else 0)
    return tuple(sorted(out))


def plan_reduction(shape, axes):
    """The layout of reducing a contiguous array of `shape` over `axes` (see the module doc)."""
    shape = [int(d) for d in shape]
    axes = set(axes)
    groups = []  # [reduced?, size] runs of adjacent dims of one kind, size-1 dims dropped
    for d, n in enumerate(shape):
        if n == 1:
            continue
        red = d in axes
        if groups and groups[-1][0] == red:
            groups[-1][1] *= n
        else:
            groups.append([red, n])
    kinds = [g[0] for g in groups]
    if True not in kinds:
        return ("copy",)
    if kinds == [True]:
        return ("rows", 1, groups[0][1])
    if kinds == [False, True]:
        return ("rows", groups[0][1], groups[1][1])
    if kinds == [True, False]:
        return ("cols", 1, groups[0][1], groups[1][1])
    if kinds == [False, True, False]:
        return ("cols", groups[0][1], groups[1][1], groups[2][1])
    sizes = [g[1] for g in groups]
    strides = list(np.cumprod([1] + sizes[::-1][:-1])[::-1])
    kept = [(n, s) for (red, n), s in zip(groups, strides) if not red]
    red = [(n, s) for (r, n), s in zip(groups, strides) if r]
    if len(kept) > codegen.MAX_DIMS or len(red) > codegen.MAX_DIMS:
        raise ValueError(f"a reduction pattern over {len(groups)} alternating dims exceeds the "
                         f"{codegen.MAX_DIMS} the kernels index")
    return ("general", [n for n, _ in kept], [s for _, s in kept], [n for n, _ in red],
            [s for _, s in red])


class Reducer:
    """Launches one reduction op type (`kind` in sum/prod/max/min/all/any) for one dtype."""

    def __init__(self, rt, kind, dtype, mean=False, scale=None):
        self.rt = rt
        self.kind = kind
        self.dtype = np.dtype(dtype)
        self.tname = SUFFIX[self.dtype]
        self.mean = mean
        self.scale = scale

    def _fn(self, layout):
        return self.rt.kernel("reduce.cu", f"gf_reduce_{layout}_{self.kind}_{self.tname}",
                              _ARGS[layout])

    def _finalize(self, count):
        if self.mean:
            return (_MODE_MEAN_FLOAT if self.dtype.kind == "f" else _MODE_MEAN_INT), 0.0, count
        if self.scale is not None:
            return _MODE_SCALE, float(self.scale), 0
        return _MODE_NONE, 0.0, 0

    def __call__(self, x, axes, out_shape):
        rt = self.rt
        n_out = int(np.prod(out_shape)) if len(out_shape) else 1
        if n_out == 0:
            return rt.empty(out_shape, self.dtype)
        if x.size == 0:  # an empty reduction: the op's identity
            return self._empty(rt.empty(out_shape, self.dtype))
        plan = plan_reduction(x.shape, axes)
        count = x.size // n_out
        mode, scale, cnt = self._finalize(count)
        if plan[0] == "copy":
            if mode == _MODE_NONE:
                return rt.reshape(x, out_shape)  # device arrays are immutable: a view will do
            plan = ("rows", x.size, 1)
        out = rt.empty(out_shape, self.dtype)
        if plan[0] == "rows":
            self._rows(x, out, plan[1], plan[2], mode, scale, cnt)
        elif plan[0] == "cols":
            self._cols(x, out, plan[1], plan[2], plan[3], mode, scale, cnt)
        else:
            _, kd, ks, rd, rs = plan
            fn = self._fn("general")
            fn.prepared_call((row_blocks(rt, n_out), 1, 1), (256, 1, 1), int(x.gpudata), int(out.gpudata),
                             np.int64(n_out), np.int64(count), codegen.pack_shape(kd),
                             codegen.pack_strides(ks), codegen.pack_shape(rd),
                             codegen.pack_strides(rs), np.int64(mode), np.float64(scale),
                             np.int64(cnt))
        return out

    def _empty(self, out):
        if self.kind in ("max", "min"):
            raise ValueError(f"zero-size array to reduction operation {self.kind}imum which has "
                             "no identity")
        if self.mean:
            value = np.nan if self.dtype.kind == "f" else 0
        else:
            value = {"sum": 0, "any": False, "prod": 1, "all": True}[self.kind]
        return self.rt.fill(out, value)

    def _rows(self, x, out, rows, cols, mode, scale, count):
        rt = self.rt
        if cols <= SHORT_ROW:
            fn = self._fn("short_rows")
            fn.prepared_call(rt.grid_for(rows), (256, 1, 1), int(x.gpudata), int(out.gpudata),
                             np.int64(rows), np.int64(cols), np.int64(mode), np.float64(scale),
                             np.int64(count))
            return
        fn = self._fn("rows")
        block = 256 if cols > 128 else (64 if cols > 32 else 32)
        split = 1
        if rows < 2 * rt.sm_count and cols > 16384:
            split = min(ceil_div(cols, 8192), 4 * rt.sm_count)
        chunk = ceil_div(cols, split)
        grid_y = row_blocks(rt, rows)
        if split == 1:
            fn.prepared_call((1, grid_y, 1), (block, 1, 1), int(x.gpudata), int(out.gpudata), np.int64(rows),
                             np.int64(cols), np.int64(1), np.int64(chunk), np.int64(mode),
                             np.float64(scale), np.int64(count))
            return
        partial = rt.empty((rows, split), self.dtype)
        fn.prepared_call((split, grid_y, 1), (block, 1, 1), int(x.gpudata), int(partial.gpudata),
                         np.int64(rows), np.int64(cols), np.int64(split), np.int64(chunk),
                         np.int64(_MODE_NONE), np.float64(0.0), np.int64(0))
        fn.prepared_call((1, grid_y, 1), (256, 1, 1), int(partial.gpudata), int(out.gpudata), np.int64(rows),
                         np.int64(split), np.int64(1), np.int64(split), np.int64(mode),
                         np.float64(scale), np.int64(count))

    def _cols(self, x, out, outer, R, inner, mode, scale, count):
        rt = self.rt
        fn = self._fn("cols")
        gx = ceil_div(inner, 32)
        split = 1
        if gx * outer < 2 * rt.sm_count and R > 2048:
            split = min(ceil_div(R, 1024), 4 * rt.sm_count)
        chunk = ceil_div(R, split)
        gz = row_blocks(rt, outer)
        if split == 1:
            fn.prepared_call((gx, 1, gz), (32, 8, 1), int(x.gpudata), int(out.gpudata), np.int64(outer),
                             np.int64(R), np.int64(inner), np.int64(1), np.int64(chunk),
                             np.int64(mode), np.float64(scale), np.int64(count))
            return
        partial = rt.empty((outer, split, inner), self.dtype)
        fn.prepared_call((gx, split, gz), (32, 8, 1), int(x.gpudata), int(partial.gpudata), np.int64(outer),
                         np.int64(R), np.int64(inner), np.int64(split), np.int64(chunk),
                         np.int64(_MODE_NONE), np.float64(0.0), np.int64(0))
        fn.prepared_call((gx, 1, gz), (32, 8, 1), int(partial.gpudata), int(out.gpudata), np.int64(outer),
                         np.int64(split), np.int64(inner), np.int64(1), np.int64(split),
                         np.int64(mode), np.float64(scale), np.int64(count))


def reduced_shape(shape, axes, keepdims):
    return tuple((1 if keepdims else None) if d in axes else n
                 for d, n in enumerate(shape) if keepdims or d not in axes)


@cuda_kernel("Sum", "Mean", "Prod", "Max", "Min", dtypes=_NUMERIC, host_inputs=(1,))
@cuda_kernel("All", "Any", dtypes=(np.bool_,), host_inputs=(1,))
def _reduce(node):
    """Reduction over the node's static axis, or over axes read at run time from its second
    input (a host value: TF1's reduction_indices)."""
    rt = runtime()
    kind, mean = _OPS[node.type]
    reducer = Reducer(rt, kind, node.out_dtypes[0], mean=mean)
    axis, keepdims = node.attrs["axis"], node.attrs.get("keepdims", False)

    def reduce(x, run_time_axes=None):
        chosen = axis if run_time_axes is None else np.asarray(run_time_axes).ravel().tolist()
        axes = normalize_axes(chosen, len(x.shape))
        return reducer(x, axes, reduced_shape(x.shape, axes, keepdims))
    return reduce


@cuda_kernel("L2Loss", dtypes=(np.float32, np.float64))
def _l2_loss(node):
    from graphflow.kernels.cuda.elementwise import kernel_for, single_op_program
    rt = runtime()
    dt = node.out_dtypes[0]
    square = kernel_for(single_op_program("Square", [dt], dt, {}))
    reducer = Reducer(rt, "sum", dt, scale=0.5)
    return lambda t: reducer(square(t)[0], tuple(range(len(t.shape))), ())


def _channel_axis(data_format, rank):
    return 1 if data_format in ("NCHW", "NCW", "NCDHW", "NC...") else rank - 1


@cuda_kernel("BiasAddGrad", dtypes=_NUMERIC)
def _bias_add_grad(node):
    rt = runtime()
    reducer = Reducer(rt, "sum", node.out_dtypes[0])
    data_format = node.attrs.get("data_format", "NHWC")

    def bias_add_grad(g):
        c = _channel_axis(data_format, len(g.shape))
        return reducer(g, tuple(d for d in range(len(g.shape)) if d != c), (g.shape[c],))
    return bias_add_grad


@cuda_kernel("SumToShape", dtypes=_NUMERIC, host_inputs=(1,))
def _sum_to_shape(node):
    rt = runtime()
    reducer = Reducer(rt, "sum", node.out_dtypes[0])

    def sum_to_shape(x, shape):
        target = tuple(int(d) for d in np.asarray(shape).reshape(-1))
        if x.shape == target:
            return x
        lead = len(x.shape) - len(target)
        if lead < 0:
            raise ValueError(f"cannot sum a tensor of shape {x.shape} to shape {target}")
        axes = list(range(lead))
        for i, t in enumerate(target):
            d = x.shape[lead + i]
            if d != t:
                if t != 1:
                    raise ValueError(f"cannot sum a tensor of shape {x.shape} to shape {target}")
                axes.append(lead + i)
        return reducer(x, tuple(axes), target)
    return sum_to_shape


_ARG_DIRECTIONS = {"ArgMax": "max", "ArgMin": "min"}


@cuda_kernel(*_ARG_DIRECTIONS, dtypes=_NUMERIC)
def _arg(node):
    rt = runtime()
    axis = node.attrs["axis"]
    direction = _ARG_DIRECTIONS[node.type]
    tname = SUFFIX[np.dtype(node.in_dtypes[0])]
    out_dtype = np.dtype(node.out_dtypes[0])
    iname = SUFFIX[out_dtype]

    def arg(x):
        ax = normalize_axes(axis, len(x.shape))[0]
        shape = x.shape[:ax] + x.shape[ax + 1:]
        out = rt.empty(shape, out_dtype)
        R = x.shape[ax]
        if out.size == 0:
            return out
        if R == 0:
            raise ValueError(f"attempt to get arg{direction} of an empty sequence")
        outer = int(np.prod(x.shape[:ax]))
        inner = int(np.prod(x.shape[ax + 1:]))
        if inner == 1 and R > SHORT_ROW:
            fn = rt.kernel("reduce.cu", f"gf_arg_rows_{direction}_{tname}_{iname}", "PPqq")
            block = 256 if R > 128 else 32
            fn.prepared_call((row_blocks(rt, outer), 1, 1), (block, 1, 1), int(x.gpudata),
                             int(out.gpudata), np.int64(outer), np.int64(R))
        else:
            fn = rt.kernel("reduce.cu", f"gf_arg_cols_{direction}_{tname}_{iname}", "PPqqq")
            fn.prepared_call(rt.grid_for(outer * inner), (256, 1, 1), int(x.gpudata), int(out.gpudata),
                             np.int64(outer), np.int64(R), np.int64(inner))
        return out
    return arg


@cuda_kernel("FusedElementwiseSum", supports=elementwise.fused_program_supported)
def _fused_elementwise_sum(node):
    """FusedElementwiseSum: the program's generated kernel, then the Sum (or Mean) kernel's
    reduction over the leading axes (the same two launches as the unfused ops)."""
    k = elementwise.kernel_for(node.attrs["program"])
    leading, keepdims = node.attrs["leading_axes"], node.attrs["keepdims"]
    reducer = Reducer(runtime(), "sum", node.out_dtypes[0], mean=node.attrs["mean"])

    def fused_elementwise_sum(*xs):
        value = k(*xs)[0]
        axes = list(range(leading))
        return reducer(value, axes, reduced_shape(value.shape, axes, keepdims))
    return fused_elementwise_sum
