"""Launch helpers shared by the launchers (plain Python: importable without PyCUDA): launch
geometry, device addresses, the one dtype map of kernel names, and the fill kernels of `array.cu`
that the runtime itself uses (`device.fill`).
"""

import numpy as np

BLOCK = 256

# numpy dtype -> the suffix of the `.cu` kernels instantiated for it (`gf_softmax_f32`); one map for
# every launcher (a kernel family exists only for the dtypes its launcher's table entry accepts)
SUFFIX = {np.dtype(np.float32): "f32", np.dtype(np.float64): "f64", np.dtype(np.int32): "i32",
          np.dtype(np.int64): "i64", np.dtype(np.uint8): "u8", np.dtype(np.bool_): "u8"}


def launch_1d(rt, fn, n, *args, block=BLOCK):
    """Launch prepared kernel `fn` with a grid-stride 1-D geometry covering `n` items."""
    fn.prepared_call(rt.grid_for(n, block), (block, 1, 1), *args)


def ptr(array, byte_offset=0):
    """The device address of `array` plus a byte offset (0 for an empty array)."""
    return (int(array.gpudata) + byte_offset) if array.size else 0


def ceil_div(a, b):
    return -(-int(a) // int(b))


def row_blocks(rt, rows):
    """Blocks for a kernel that walks `rows` with a block-stride loop: one per row, at most 32 per
    SM (and within the 65535 limit of grid y/z)."""
    return max(1, min(int(rows), 65535, rt.sm_count * 32))


def fill(rt, array, value):
    """Set every element of device `array` to the host scalar `value` (array.cu)."""
    if not array.size:
        return array
    bits = np.zeros(1, np.uint64)
    bits.view(np.uint8)[:array.dtype.itemsize] = np.asarray(value, array.dtype).reshape(1).view(np.uint8)
    size = array.dtype.itemsize
    fn = rt.kernel("array.cu", f"gf_fill_{size}", "qPQ")
    launch_1d(rt, fn, array.size, np.int64(array.size), int(array.gpudata), np.uint64(bits[0]))
    return array


def fill_from(rt, array, value_array):
    """Set every element of `array` to the single element of device array `value_array` (array.cu)."""
    if array.size:
        fn = rt.kernel("array.cu", f"gf_fill_from_{array.dtype.itemsize}", "qPP")
        launch_1d(rt, fn, array.size, np.int64(array.size), int(array.gpudata), int(value_array.gpudata))
    return array
