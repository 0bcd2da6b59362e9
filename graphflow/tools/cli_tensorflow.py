"""TensorFlow's files for the `graphflow` command: a SavedModel directory or a GraphDef (`.pb`,
`.pbtxt`) opened as a model with named inputs and outputs, like a `.gfz` file.

    graphflow inspect export_dir                      (tag set 'serve', signature 'serving_default')
    graphflow run export_dir --signature classify --input inputs=batch.npy
    graphflow run frozen.pb --input x=batch.npy [--outputs probs]

A SavedModel's inputs and outputs are those of the chosen signature (`--tag-set a,b`,
`--signature KEY`). A GraphDef has no signature: its inputs are its placeholders (by op name) and
its outputs the ops given with `--outputs` (op or tensor names), else the ops no other op uses
(constants, placeholders and no-ops aside); the command says which it chose. Ops that reach
outside the process are refused unless `allow_io` (`graphflow run --allow-io`); `graphflow
inspect` imports them and runs nothing, a SavedModel's init op included (`initialize=False`).
"""

import os

from graphflow.engine.session import Session
from graphflow.fileformat import tf_saved_model as files
from graphflow.framework.errors import GraphFormatError
from graphflow.framework.graph import Graph, Operation
from graphflow.interop.tensorflow import saved_model as sm
from graphflow.interop.tensorflow.graph_io import read_graph_def
from graphflow.interop.tensorflow.importer import import_graph_def
from graphflow.tools.cli_io import CommandError
from graphflow.tools.cli_text import printable

GRAPH_DEF_SUFFIXES = (".pb", ".pbtxt")


def _may_be_output(op):
    """A guessed output computes something: not a graph input, variable, constant (an op of no
    inputs) or state change (an assignment, a no-op group)."""
    facts = op.op_def
    return bool(op.inputs) and op.outputs and not (facts.graph_input or facts.variable
                                                   or facts.stateful)


def is_tensorflow_path(path):
    return (os.path.isdir(path) and files.is_saved_model_dir(path)) or \
        path.lower().endswith(GRAPH_DEF_SUFFIXES)


class GraphDefModel:
    """A GraphDef file in a new graph and session, with LoadedGraph's interface."""

    def __init__(self, path, outputs=None, allow_io=False):
        self.path = path
        what = f"GraphDef file '{path}'"
        graph_def = read_graph_def(path)
        self.graph = Graph()
        with self.graph.as_default():
            import_graph_def(graph_def, name="", source=what, allow_io=allow_io)
        ops = self.graph.get_operations()
        self.inputs = {op.name: op.outputs[0] for op in ops if op.op_def.graph_input}
        if outputs:
            self.outputs = {name: self._element(name, what) for name in outputs}
            self.chosen = None
        else:
            used = set()
            for op in ops:
                used.update(t.op for t in op.inputs)
                used.update(op.control_inputs)
            self.outputs = {op.name: op.outputs[0] if op.outputs else op for op in ops
                            if op not in used and _may_be_output(op)}
            self.chosen = sorted(self.outputs)
        self.session = Session(graph=self.graph)
        self.variables = []
        self.format_version = "TensorFlow GraphDef"
        self.producer = f"GraphDef producer {graph_def.versions.producer}"

    def _element(self, name, what):
        try:
            element = self.graph.as_graph_element(name)
        except (KeyError, ValueError, TypeError):
            raise CommandError(f"--outputs: {what} has no op or tensor '{name}'") from None
        if isinstance(element, Operation) and element.outputs:
            return element.outputs[0]
        return element

    def run(self, feeds=None, outputs=None):
        names = list(self.outputs) if outputs is None else list(outputs)
        return self.session.run({k: self.outputs[k] for k in names},
                                {self.inputs[k]: v for k, v in (feeds or {}).items()})

    def close(self):
        self.session.close()


def open_model(path, tag_set="serve", signature="serving_default", outputs=None, out=None,
               allow_io=False, initialize=True):
    """A SavedModel directory or GraphDef file as a model; says on `out` what it chose."""
    if os.path.isdir(path):
        tags = [t.strip() for t in (tag_set or "").split(",") if t.strip()]
        saved = files.read_saved_model(path)
        meta_tags = [sorted(m.meta_info_def.tags) for m in saved.meta_graphs]
        if sorted(tags) not in meta_tags:
            raise GraphFormatError(f"{path}: no meta graph with tag set {','.join(tags)!r}; its "
                                   f"tag sets are {[','.join(t) for t in meta_tags]} (--tag-set)")
        try:
            model = sm.LoadedSavedModel(path, tags, signature, allow_io=allow_io,
                                        initialize=initialize)
        except KeyError as exc:
            raise GraphFormatError(f"{exc.args[0]} (--signature)") from None
        if out is not None:
            others = sorted(k for k in model.meta_graph_def.signature_def
                            if k != signature and not k.startswith("__"))
            print(printable(f"{path}: TensorFlow SavedModel, tag set {','.join(sorted(tags))}, "
                            f"signature '{signature}' ({model.method_name or 'no method name'})"
                            + (f"; other signatures: {', '.join(others)}" if others else "")),
                  file=out)
        return model
    model = GraphDefModel(path, outputs, allow_io)
    if out is not None and model.chosen is not None:
        print(printable(f"{path}: outputs chosen as the ops no other op uses: "
                        f"{', '.join(model.chosen) or '(none)'} (choose with --outputs)"),
              file=out)
    return model
