"""TensorFlow's GraphDef, both ways: `export_graph_def(graph)` writes a graphflow graph as a
GraphDef TensorFlow imports and runs; `import_graph_def(graph_def, ...)` builds a GraphDef made by
TensorFlow (a frozen `.pb`/`.pbtxt`) into the default graphflow graph. `GraphDef` is TensorFlow's
protobuf class itself (`tf.GraphDef`). File reading and writing with limits: `graph_io.py`;
GraphDef-level `graph_util` functions: `graph_util.py`; the op table: `op_table.py`.

Loaded on first use (it imports protobuf), never by `import graphflow`.
"""

from graphflow.fileformat.tf_protos import GraphDef
from graphflow.interop.tensorflow import export_functions as _export_functions  # noqa: F401
from graphflow.interop.tensorflow import export_lowerings as _export_lowerings  # noqa: F401
from graphflow.interop.tensorflow import export_rules as _export_rules  # noqa: F401
from graphflow.interop.tensorflow import summaries as _summaries  # noqa: F401
from graphflow.interop.tensorflow.exporter import ExportError, export_graph_def
from graphflow.interop.tensorflow.importer import import_graph_def
from graphflow.interop.tensorflow.tensor_protos import DEFAULT_LIMITS, Limits

__all__ = ["GraphDef", "export_graph_def", "import_graph_def", "ExportError", "Limits",
           "DEFAULT_LIMITS"]
