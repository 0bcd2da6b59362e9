"""graphflow as an `onnx.backend`: `prepare(model)` imports an ONNX model into a graphflow graph and
returns a rep whose `run(inputs)` executes it in a graphflow Session. ONNX's own conformance tests
(`onnx.backend.test.BackendTest`) drive graphflow through this interface (tests/interop/onnx)."""

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
        return namedtupledict("Outputs", self.output_names)(*[results[n] for n in self.output_names])


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
