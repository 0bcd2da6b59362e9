"""What `graphflow run` shows of a graph's outputs, and the files it writes them to.

A classifier's probabilities are shown as what they mean: for an output that is a 2-D float
matrix whose rows are probabilities (finite, non-negative, each row summing to 1 within 1e-3, as
a softmax gives), each row's 3 most probable classes, as `class: probability`, most probable
first (a probability below 0.001 as `3.2e-05`). `--top K` shows K classes per row, and does so
for any 2-D real output (logits: the K largest values); `--raw` prints every output as the array
it is. Other outputs are printed as arrays (numpy's summary of a large one), or, with `--text`,
an integer vector as the characters of its code points.

`--output FILE` writes the outputs instead of printing them: an `.npy` file holds the one output
computed (with several, `--outputs NAME` chooses one, or an `.npz` file holds them all), any
other name is written as an `.npz` archive of every output by name.
"""

import numpy as np

from graphflow.tools import cli_io
from graphflow.tools.cli_io import CommandError
from graphflow.tools.cli_text import printable, printable_lines

DEFAULT_TOP = 3          # classes shown per row of probabilities, unless --top says otherwise
PROBABILITY_TOLERANCE = 1e-3
MAX_ROWS = 100           # rows listed; the rest are counted (--output writes them all)


def check_destination(path, names):
    """Before running: an `.npy` destination can hold one output only."""
    if path is not None and path.lower().endswith(".npy") and len(names) != 1:
        raise CommandError(f"--output {path}: an .npy file holds one output and the run computes "
                           f"{len(names)} ({sorted(names)}); choose one with --outputs NAME or "
                           "write an .npz file")


def write(results, output, out):
    """Write `results` to the checked destination `output` (.npy: the one output; else .npz)."""
    arrays = {k: np.asarray(v) for k, v in results.items() if v is not None}
    if output.path.lower().endswith(".npy"):
        if len(arrays) != 1:  # an operation's "output": nothing to write
            raise CommandError(f"--output {output.path}: the output {sorted(results)} is an "
                               "operation, not a tensor; nothing to write to an .npy file")
        (name, value), = arrays.items()
        with cli_io.open_output(output) as f:
            np.save(f, value, allow_pickle=False)
        print(printable(f"wrote {name} ({value.dtype} {list(value.shape)}) to {output.path}"),
              file=out)
        return
    with cli_io.open_output(output) as f:
        np.savez(f, **arrays)
    print(printable(f"wrote {len(arrays)} output(s) to {output.path}"), file=out)


def is_probabilities(value):
    """A 2-D float matrix of at least one row and two columns whose rows are probabilities."""
    if value.ndim != 2 or value.dtype.kind != "f" or value.shape[0] < 1 or value.shape[1] < 2:
        return False
    wide = value.astype(np.float64)
    if not np.isfinite(wide).all() or wide.min() < 0:
        return False
    return bool(np.all(np.abs(wide.sum(axis=1) - 1) <= PROBABILITY_TOLERANCE))


def show(results, args, out):
    """Print each output: as top classes, characters or an array (see the module's docstring)."""
    for name, value in results.items():
        if value is None:
            print(printable(f"{name}: (operation ran)"), file=out)
            continue
        value = np.asarray(value)
        if args.text and value.ndim == 1 and value.dtype.kind in "iu":
            print(printable(f"{name}: {''.join(_char(c) for c in value)}"), file=out)
            continue
        ranked = not args.raw and value.ndim == 2 and value.shape[1] >= 1 and (
            (args.top is not None and value.dtype.kind in "iuf") or
            (args.top is None and is_probabilities(value)))
        if ranked:
            _show_top(name, value, args.top or DEFAULT_TOP, out)
            continue
        print(printable(f"{name}: {value.dtype} {list(value.shape)}"), file=out)
        print(printable_lines(np.array2string(value, threshold=200, max_line_width=100)),
              file=out)


def _show_top(name, value, k, out):
    rows, columns = value.shape
    k = min(k, columns)
    probabilities = is_probabilities(value)
    if probabilities:
        what = f"rows of probabilities: top {k} of {columns} classes per row, as class: probability"
    else:
        what = f"top {k} of {columns} values per row, as column: value"
    print(printable(f"{name}: {value.dtype} {list(value.shape)}, {what} (--raw prints the "
                    "array)"), file=out)
    index_width = len(str(columns - 1))
    row_width = len(str(rows - 1))
    for r in range(min(rows, MAX_ROWS)):
        row = value[r]
        order = np.argsort(-row.astype(np.float64), kind="stable")[:k]
        cells = "   ".join(f"{int(c):>{index_width}}: {_number(row[c], probabilities)}"
                           for c in order)
        print(printable(f"  row {r:>{row_width}}   {cells}"), file=out)
    if rows > MAX_ROWS:
        print(f"  ... {rows - MAX_ROWS} more rows (--output FILE.npy writes every row)", file=out)


def _number(x, probability):
    """A probability with 4 decimals (below 0.001: 2 significant digits, `3.2e-05`, so that a
    small one does not read as 0); another value with 4 significant digits."""
    x = float(x)
    if not probability:
        return f"{x:.4g}"
    return f"{x:.4f}" if x >= 1e-3 or x == 0 else f"{x:.1e}"


def _char(code):
    code = int(code)
    return chr(code) if 0 <= code <= 0x10FFFF else "\ufffd"


__all__ = ["DEFAULT_TOP", "check_destination", "write", "is_probabilities", "show"]
