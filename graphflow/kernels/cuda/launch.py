"""Launch helpers shared by the launchers (plain Python: importable without PyCUDA)."""

BLOCK = 256


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
