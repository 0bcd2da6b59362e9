"""What a graph read from a file may run: no op that reaches outside the process unless allowed.

Loading a file executes no code from it, but running the graph it holds runs a program: a file can
hold `ReadFile` of any path (its bytes come back as an output), `WriteFile`, readers, a `PyFunc`
naming a function of the process, MPI collectives. Every loader of a graph that came from outside
the program (`graphflow.load`, `graphflow.import_graph`, `tf.import_graph_def`,
`tf.train.import_meta_graph`, `tf.saved_model.loader.load`, the GraphDef reader, the ONNX importer,
`graphflow run`) passes the ops it is about to add through `check` before the graph can run: each
op whose OpDef fact `touches` (`ops/registry.py`) says it reaches files, the network or the
process's Python code is refused, all of them listed in one `IOPolicyError`, unless the caller
passed `allow_io=True`. A graph the program builds with graphflow's ops is not checked.

    found = reaching_ops(graph.get_operations())      # [(op type, name, "files"), ...]
    check(found, allow_io, "graph file 'm.gfz'", "graphflow.load(path, allow_io=True)")
"""

import collections

from graphflow.framework.graph import Graph
from graphflow.ops import registry

HOW_CLI = "pass --allow-io to the graphflow command"


class IOPolicyError(PermissionError):
    """A graph from a file holds ops that reach outside the process, and the caller did not allow
    them. `source` names the file, `ops` lists (op type, op name, what it reaches)."""

    def __init__(self, source, ops, how):
        self.source, self.ops = source, list(ops)
        super().__init__(self.explain(how))

    def explain(self, how):
        """The message, saying `how` the caller allows the ops."""
        lines = "\n".join(f"  {t} '{name}' ({kind})" for t, name, kind in self.ops)
        kinds = ", ".join(sorted({kind for _, _, kind in self.ops}))
        return (f"{self.source} holds {len(self.ops)} op(s) that reach outside the process when "
                f"they run ({kinds}); graphflow does not run them from a file unless allowed:\n"
                f"{lines}\nIf you trust the file, allow them: {how} (docs/security.md, "
                "\"Ops that reach outside the process\")")


def kind_of(op_type, attrs):
    """What an op of type `op_type` with `attrs` reaches ("" for nothing, or an unknown type)."""
    op_def = registry.find(op_type)
    return op_def.touches_of(attrs) if op_def is not None else ""


def reaching_ops(ops):
    """[(op type, name, kind)] of the ops among `ops`, and of the functions they hold (If and While
    branches and bodies, at any depth), that reach outside the process. A function's ops are named
    after the op holding it: 'cond/then_branch/ReadFile'."""
    found, seen = [], set()
    pending = collections.deque(("", op) for op in ops)
    while pending:
        prefix, op = pending.popleft()
        kind = kind_of(op.type, op.attrs)
        if kind:
            found.append((op.type, prefix + op.name, kind))
        for attr, value in op.attrs.items():
            for function in value if isinstance(value, (list, tuple)) else (value,):
                if isinstance(function, Graph) and id(function) not in seen:
                    seen.add(id(function))
                    inner = f"{prefix}{op.name}/{attr}/"
                    pending.extend((inner, o) for o in function.get_operations())
    return found


def check(found, allow_io, source, how):
    """Raise `IOPolicyError` listing `found` ((op type, name, kind) triples) unless `allow_io`."""
    if found and not allow_io:
        raise IOPolicyError(source, found, how)


def check_ops(ops, allow_io, source, how):
    """`check` the ops of a graph read from `source` (and the functions they hold)."""
    if not allow_io:
        check(reaching_ops(ops), allow_io, source, how)


__all__ = ["IOPolicyError", "check", "check_ops", "reaching_ops", "kind_of", "HOW_CLI"]
