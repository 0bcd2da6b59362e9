"""graphflow as an `onnx.backend`: `prepare(model)` imports an ONNX model into a graphflow graph and
returns a rep whose `run(inputs)` executes it in a graphflow Session. ONNX's own conformance tests
(`onnx.backend.test.BackendTest`) drive graphflow through this interface (tests/interop/onnx)."""

import numpy as np
from onnx.backend.base import Backend, BackendRep, namedtupledict

from graphflow.interop.onnx.importer import import_model


class GraphflowRep(BackendRep):
    """A prepared model: its imported graph and the session that runs it."""

    def __init__(self, model, imported):
        self.imported = imported
        initializers = {init.name for init in model.graph.initializer}
        self.input_names = [vi.name for vi in model.graph.input if vi.name not in initializers]
        self.output_names = [vi.name for vi in model.graph.output]

    def run(self, inputs, **kwargs):
        if isinstance(inputs, dict):
            feeds = dict(inputs)
        else:
            if not isinstance(inputs, (list, tuple)):
                inputs = [inputs]
            feeds = dict(zip(self.input_names, inputs))
        results = self.imported.run(feeds)
        return namedtupledict("Outputs", self.output_names)(
            *[_onnx_value(results[n]) for n in self.output_names])


def _onnx_value(value):
    """graphflow's strings are bytes, ONNX's (numpy_helper) str: decode string arrays; a sequence
    output (a list of arrays) element by element."""
    if isinstance(value, list):
        return [_onnx_value(v) for v in value]
    if isinstance(value, np.ndarray) and value.dtype == object:
        out = np.empty(value.shape, dtype=object)
        out.reshape(-1)[:] = [v.decode("utf-8") if isinstance(v, bytes) else v
                              for v in value.reshape(-1)]
        return out
    return value


class GraphflowBackend(Backend):
    """ONNX backend running models on graphflow's CPU kernels."""

    @classmethod
    def prepare(cls, model, device="CPU", **kwargs):
        super().prepare(model, device, **kwargs)
        return GraphflowRep(model, import_model(model))

    @classmethod
    def supports_device(cls, device):
        return device == "CPU"


prepare = GraphflowBackend.prepare
run_model = GraphflowBackend.run_model
supports_device = GraphflowBackend.supports_device
