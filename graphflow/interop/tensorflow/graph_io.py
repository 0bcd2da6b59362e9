"""GraphDef files: `tf.train.write_graph` / `tf.io.write_graph` and the bounded reader.

`write_graph(graph_or_graph_def, logdir, name, as_text=True)` writes a graphflow Graph (as its
GraphDef) or a GraphDef, as protobuf text (`.pbtxt`) or binary, atomically (temp file, fsync,
rename). `read_graph_def(path, as_text=None, limits=DEFAULT_LIMITS)` reads one as untrusted input:
the file's size is checked before it is read, and protobuf's faults (DecodeError, text ParseError,
RecursionError from deep nesting) become a `GraphFormatError` naming the file. `load_graph_def`
reads and imports in one call.
"""

import os

from google.protobuf import message, text_format

from graphflow.fileformat import file_io
from graphflow.fileformat import tf_protos as pb
from graphflow.framework.errors import GraphFormatError
from graphflow.interop.tensorflow.importer import import_graph_def
from graphflow.interop.tensorflow.tensor_protos import DEFAULT_LIMITS

_TEXT_SUFFIXES = (".pbtxt", ".pbtext", ".txt", ".prototxt")


def _as_graph_def(graph_or_graph_def):
    if isinstance(graph_or_graph_def, pb.GraphDef):
        return graph_or_graph_def
    if hasattr(graph_or_graph_def, "as_graph_def"):
        return graph_or_graph_def.as_graph_def()
    if hasattr(graph_or_graph_def, "SerializeToString"):
        return pb.GraphDef.FromString(graph_or_graph_def.SerializeToString())
    raise TypeError(f"write_graph: expected a Graph or a GraphDef, got "
                    f"{type(graph_or_graph_def).__name__}")


def write_graph(graph_or_graph_def, logdir, name, as_text=True):
    """`tf.train.write_graph`: write the graph's GraphDef to `logdir/name`; returns the path."""
    graph_def = _as_graph_def(graph_or_graph_def)
    logdir = os.fspath(logdir)
    if logdir:
        os.makedirs(logdir, exist_ok=True)
    path = os.path.join(logdir, name)
    data = text_format.MessageToString(graph_def).encode("utf-8") if as_text \
        else graph_def.SerializeToString(deterministic=True)
    with file_io.atomic_write(path) as f:
        f.write(data)
    return path


def parse_graph_def(data, source="<bytes>", as_text=False, limits=DEFAULT_LIMITS):
    """A GraphDef from bytes, faults as GraphFormatError naming `source`."""
    if len(data) > limits.max_file_bytes:
        raise GraphFormatError(f"{source}: {len(data)} bytes exceed the limit of "
                               f"{limits.max_file_bytes}")
    graph_def = pb.GraphDef()
    try:
        if as_text:
            text_format.Parse(data.decode("utf-8"), graph_def)
        else:
            graph_def.ParseFromString(data)
    except (message.DecodeError, text_format.ParseError, UnicodeDecodeError, RecursionError,
            ValueError) as exc:
        kind = "text" if as_text else "binary"
        raise GraphFormatError(f"{source}: not a {kind} GraphDef ({type(exc).__name__}: "
                               f"{str(exc)[:200]})") from None
    return graph_def


def read_graph_def(path, as_text=None, limits=DEFAULT_LIMITS):
    """The GraphDef in file `path` (text when `as_text`, or when None and the name ends in
    .pbtxt/.pbtext/.txt/.prototxt)."""
    path = os.fspath(path)
    if as_text is None:
        as_text = path.endswith(_TEXT_SUFFIXES)
    data = file_io.read_regular_file(path, f"GraphDef file '{path}'", limits.max_file_bytes)
    return parse_graph_def(data, path, as_text, limits)


def load_graph_def(path, input_map=None, return_elements=None, name=None, as_text=None,
                   limits=DEFAULT_LIMITS, clear_devices=False, allow_io=False):
    """Read a `.pb`/`.pbtxt` file and import it into the default graph (`import_graph_def`;
    nodes reaching outside the process are refused unless `allow_io=True`)."""
    graph_def = read_graph_def(path, as_text, limits)
    return import_graph_def(graph_def, input_map=input_map, return_elements=return_elements,
                            name=name, source=os.fspath(path), limits=limits,
                            clear_devices=clear_devices, allow_io=allow_io,
                            how="load_graph_def(path, allow_io=True)")


__all__ = ["write_graph", "read_graph_def", "load_graph_def", "parse_graph_def"]
