"""What the `graphflow` command reads and writes, and the errors it reports in one line.

Reading: a model or an `--input` file must be a regular file (a FIFO, device or socket is
refused at once, never read) no larger than its limit, checked on a descriptor opened without
blocking before anything is read (`file_io.read_regular_file`, `check_regular_file`). An `.npy`
or `.npz` input is parsed by graphflow's own checked reader (header before allocation, no pickle),
a JSON input has its nesting bounded before it is parsed.

Writing (`--output`, `-o`, `--dot`, `--svg`, `--trace`, export-onnx's file): every destination is
checked before the command reads or computes anything. It may be a new name or a regular file,
written through a temp file renamed over it (`file_io.atomic_write`); a symbolic link is followed
to its target, which obeys the same rules. It may not be any file the command reads (the same
file by device and inode, so also through links, hard ones included; nor anything inside an
input directory), nor another destination of the same command, nor a device, FIFO or socket,
with one exception: the null device (`/dev/null`, or a link to it), which keeps what it is: what
would go there is written to a temporary file and discarded.

`CommandError` is a problem with the command's input; `ERRORS` are the classes the command
reports as `graphflow <cmd>: error: <one line>` with exit status 2 (any other exception is a bug
in graphflow and keeps its traceback).
"""

import contextlib
import dataclasses
import json
import os
import stat
import tempfile

import numpy as np

from graphflow.engine.executor import FeedSpec
from graphflow.fileformat import file_io
from graphflow.framework.errors import GraphFormatError, OpError
from graphflow.framework.graph import Tensor

# an --input file is at most as large as the tensor data a graph file may hold
MAX_INPUT_BYTES = file_io.DEFAULT_LIMITS.max_tensor_bytes
# an ONNX model is one protobuf message: protobuf's own limit
MAX_ONNX_BYTES = 2 << 30
MAX_JSON_NESTING = file_io.DEFAULT_LIMITS.max_nesting


class CommandError(Exception):
    """A problem with the command's input: reported without a traceback."""


# exceptions that report a file, an input or an option the user gave (OSError: a missing or
# unreadable file; ValueError: GraphFormatError and bad values; OpError: the graph refused a fed
# value while running; ImportError: an optional package such as onnx is not installed)
ERRORS = (CommandError, GraphFormatError, OpError, OSError, ValueError, ImportError)


# ------------------------------------------------------------------------------------ reading
def check_model_file(path):
    """A model path that is not a directory must be a regular file (checked without blocking)."""
    file_io.check_regular_file(path, f"'{path}'", MAX_ONNX_BYTES
                               if path.lower().endswith(".onnx") else 1 << 62)


def load_onnx(path, allow_io=False):
    """An ONNX model file as a model: a regular file of at most 2 GiB; a file protobuf cannot
    parse is a CommandError."""
    from google.protobuf.message import DecodeError  # noqa: PLC0415

    from graphflow.interop import onnx as gf_onnx  # noqa: PLC0415 (onnx is optional)
    check_model_file(path)
    try:
        return gf_onnx.import_model(path, allow_io=allow_io)
    except DecodeError as exc:
        raise CommandError(f"{path}: not a valid ONNX model (truncated or corrupted: {exc})") \
            from None
    except RecursionError:
        raise CommandError(f"{path}: not a valid ONNX model (nested too deeply)") from None


def _json_nesting(text):
    """The deepest nesting of [ and { in JSON text, outside its strings."""
    depth = deepest = 0
    in_string = escaped = False
    for c in text:
        if in_string:
            if escaped:
                escaped = False
            elif c == "\\":
                escaped = True
            elif c == '"':
                in_string = False
        elif c == '"':
            in_string = True
        elif c in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif c in "]}":
            depth -= 1
    return deepest


def _read_array_file(name, source):
    what = f"--input {name}: {source}"
    data = file_io.read_regular_file(source, what, MAX_INPUT_BYTES)
    limits = file_io.DEFAULT_LIMITS
    if data[:4] == b"PK\x03\x04" or data[:4] == b"PK\x05\x06":
        arrays = file_io.read_npz(data, what, limits)
        keys = sorted(arrays)
        key = name if name in arrays else (keys[0] if len(keys) == 1 else None)
        if key is None:
            raise CommandError(f"--input {name}: {source} holds {keys}; none is named '{name}'")
        return arrays[key]
    if data[:6] != b"\x93NUMPY":
        raise CommandError(f"--input {name}: {source} is not a .npy or .npz file")
    return file_io.parse_npy(data, what, limits)


def parse_input(spec, inputs, text=False):
    """(name, array) of one `--input NAME=VALUE`: VALUE is an .npy or .npz file, else JSON."""
    name, sep, source = spec.partition("=")
    if not sep or not name:
        raise CommandError(f"--input {spec!r}: expected NAME=FILE.npy (or NAME=FILE.npz, or "
                           "NAME=<JSON value>)")
    if name not in inputs:
        raise CommandError(f"--input {name}: the graph has no input '{name}'; its inputs are "
                           f"{sorted(inputs) or 'none'}")
    if os.path.exists(source):
        return name, _read_array_file(name, source)
    if _json_nesting(source) > MAX_JSON_NESTING:
        raise CommandError(f"--input {name}: the JSON value is nested more than "
                           f"{MAX_JSON_NESTING} deep")
    try:
        value = json.loads(source)
    except ValueError:
        raise CommandError(f"--input {name}: {source!r} is neither a file nor a JSON value") \
            from None
    if text and isinstance(value, str):  # a string is fed as its Unicode code points
        return name, np.array([ord(c) for c in value], dtype=np.int32)
    try:
        array = np.asarray(value)
    except ValueError as exc:
        raise CommandError(f"--input {name}: {exc}") from None
    if array.dtype.hasobject:
        raise CommandError(f"--input {name}: the JSON value is not an array of numbers, booleans "
                           "or strings of one shape (or a number is too large)")
    return name, array


def check_feeds(feeds, inputs):
    """{name: array} of parsed `--input`s, converted as a run converts them (executor.FeedSpec):
    a value the graph's input cannot take (a string for a float, a wrong shape) is a
    CommandError before the run, so that no exception of the run itself is taken for the
    user's."""
    checked = {}
    for name, value in feeds.items():
        tensor = inputs[name]
        if not isinstance(tensor, Tensor):
            checked[name] = value
            continue
        try:
            checked[name] = FeedSpec(tensor).convert(value)
        except (TypeError, ValueError) as exc:
            raise CommandError(f"--input {name}: {exc}") from None
    return checked


# ------------------------------------------------------------------------------------ writing
@dataclasses.dataclass(frozen=True)
class Output:
    """A checked destination: `path` as given, `target` the regular file (or new name) to write,
    None for the null device."""

    option: str
    path: str
    target: str | None


def _kind(mode):
    for test, kind in ((stat.S_ISDIR, "a directory"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device"), (stat.S_ISFIFO, "a FIFO (named pipe)"),
                       (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return kind
    return "not a regular file"


def _is_null_device(info):
    try:
        null = os.stat(os.devnull)
    except OSError:
        return False
    return stat.S_ISCHR(info.st_mode) and stat.S_ISCHR(null.st_mode) \
        and info.st_rdev == null.st_rdev


def _same(a, b):
    return (a.st_dev, a.st_ino) == (b.st_dev, b.st_ino)


def check_outputs(outputs, inputs):
    """{option: Output} for [(option, path or None)], refusing a destination that is a file the
    command reads (`inputs`: paths of files or directories), another destination, or a special
    file other than the null device. Raises CommandError."""
    read = []
    for path in inputs:
        with contextlib.suppress(OSError, ValueError):
            read.append((path, os.stat(path)))
    checked, seen = {}, []
    for option, path in outputs:
        if path is None:
            continue
        if not path:
            raise CommandError(f"{option}: an empty path")
        where = f"{option} {path}"
        target = os.path.realpath(path)  # through symbolic links, to what would be replaced
        try:
            info = os.stat(path)  # what the path leads to (also through /proc/self/fd links)
        except FileNotFoundError:
            info = None  # a new file
        except OSError as exc:
            raise CommandError(f"{where}: {exc.strerror or exc}") from None
        if info is not None and not stat.S_ISREG(info.st_mode):
            if _is_null_device(info):
                checked[option] = Output(option, path, None)
                continue
            raise CommandError(f"{where}: is {_kind(info.st_mode)}, not a regular file; refusing "
                               "to replace it (only new paths, regular files and /dev/null are "
                               "written)")
        for source, source_info in read:
            if stat.S_ISDIR(source_info.st_mode):
                inside = os.path.realpath(source)
                if os.path.commonpath([inside, target]) == inside:
                    raise CommandError(f"{where}: is inside the input directory {source}; "
                                       "refusing to write into it")
            elif info is not None and _same(info, source_info):
                raise CommandError(f"{where}: is the input file {source} (the same file); "
                                   "refusing to overwrite it")
        for other in seen:
            if other.target == target:
                raise CommandError(f"{where}: is also the destination of {other.option}")
        checked[option] = Output(option, path, target)
        seen.append(checked[option])
    return checked


@contextlib.contextmanager
def open_output(output):
    """A binary file object for a checked destination: atomic (temp + rename), or for the null
    device an anonymous temporary file, discarded (writers such as zipfile need one they can
    seek in, which the null device is not)."""
    if output.target is None:
        with tempfile.TemporaryFile(prefix="graphflow-") as f:
            yield f
        return
    with file_io.atomic_write(output.target) as f:
        yield f


@contextlib.contextmanager
def output_path(output):
    """A path for a writer that takes one (and writes atomically itself): the checked target, or
    for the null device a temporary file removed afterwards."""
    if output.target is not None:
        yield output.target
        return
    with tempfile.TemporaryDirectory(prefix="graphflow-") as tmp:
        yield os.path.join(tmp, os.path.basename(output.path) or "out")


__all__ = ["CommandError", "ERRORS", "Output", "check_feeds", "check_model_file", "check_outputs",
           "load_onnx", "open_output", "output_path", "parse_input"]
