"""ONNX interchange: `export` a graphflow graph to an ONNX file, `import_model` an ONNX file into a
graphflow graph, and `backend`, graphflow as an `onnx.backend` (used to run ONNX's conformance tests).

The `onnx` package (protobufs, checker, shape inference, test data) is an optional dependency:
`pip install "graphflow[onnx]"`. It is imported when first needed; without it these functions raise
an ImportError saying what to install.
"""

from graphflow.interop.onnx.exporter import ExportError, build_model, export
from graphflow.interop.onnx.importer import ImportedModel, OnnxImportError, import_model
from graphflow.interop.onnx.support import require_onnx

__all__ = ["ExportError", "ImportedModel", "OnnxImportError", "build_model", "export", "import_model",
           "require_onnx"]
