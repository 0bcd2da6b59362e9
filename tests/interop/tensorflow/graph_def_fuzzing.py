"""Mutations of valid GraphDef files for the hostile-input test.

`mutants(data, rng)` yields (kind, bytes): byte flips, truncations and insertions of the wire
bytes, and message-level edits: every attr of a node set to values of every wrong kind, attrs
removed, tensor content disagreeing with dtype or shape, huge or negative declared shapes, inputs
dropped, added, dangling or forming cycles, duplicate names, op types changed (TensorFlow 1's
Switch/Merge/Enter/Exit/NextIteration/LoopCond among them), loop frames renamed or made
invariant, huge repeated fields and deeply nested attr values. `outcome(data)` imports one mutant:
"loaded", "rejected" (GraphFormatError), or the unexpected exception's type, which the test counts
as a failure.
"""

import collections

import numpy as np

import graphflow as tf
from graphflow.framework.errors import GraphFormatError


def _wrong_values(pb):
    values = []
    for setter in (lambda a: setattr(a, "i", 2**62), lambda a: setattr(a, "i", -7),
                   lambda a: setattr(a, "f", float("nan")), lambda a: setattr(a, "b", True),
                   lambda a: setattr(a, "s", b"\xff\xfe"), lambda a: setattr(a, "type", 999),
                   lambda a: setattr(a, "type", 20), lambda a: a.shape.dim.add(size=-5),
                   lambda a: a.shape.dim.add(size=2**62), lambda a: a.list.i.extend([1, 2, 3]),
                   lambda a: a.list.s.extend([b"x"]), lambda a: a.list.SetInParent(),
                   lambda a: setattr(a.func, "name", "nope"),
                   lambda a: setattr(a, "placeholder", "T"),
                   lambda a: a.tensor.SetInParent()):
        av = pb.AttrValue()
        setter(av)
        values.append(av)
    return values


_OP_TYPES = ["Switch", "NoSuchOp", "Const", "If", "While", "VarHandleOp", "Merge", "Enter", "Exit",
             "NextIteration", "LoopCond", "Identity"]


def _message_edits(graph_def, rng, pb):
    nodes = graph_def.node
    wrong = _wrong_values(pb)

    def copy():
        g = pb.GraphDef()
        g.CopyFrom(graph_def)
        return g

    for i, node in enumerate(nodes):
        for key in list(node.attr):
            for av in wrong:
                g = copy()
                g.node[i].attr[key].CopyFrom(av)
                yield f"attr {node.op}.{key}", g
            g = copy()
            del g.node[i].attr[key]
            yield f"attr removed {node.op}.{key}", g
            if node.attr[key].HasField("tensor"):
                t = node.attr[key].tensor
                for edit in ("short", "long", "dtype", "shape", "huge", "negative", "vals"):
                    g = copy()
                    gt = g.node[i].attr[key].tensor
                    if edit == "short":
                        gt.tensor_content = t.tensor_content[:-3] if t.tensor_content else b"\1\2"
                    elif edit == "long":
                        gt.tensor_content = t.tensor_content + b"\0" * 5
                    elif edit == "dtype":
                        gt.dtype = int(rng.choice([1, 3, 7, 9, 10, 14, 19, 21]))
                    elif edit == "shape":
                        gt.tensor_shape.dim.add(size=3)
                    elif edit == "huge":
                        del gt.tensor_shape.dim[:]
                        gt.tensor_shape.dim.add(size=2**40)
                        gt.tensor_shape.dim.add(size=2**40)
                    elif edit == "negative":
                        gt.tensor_shape.dim.add(size=-3)
                    else:
                        gt.tensor_content = b""
                        gt.int_val.extend([2**31 - 1] * 5)
                        gt.float_val.extend([1.0] * 100)
                    yield f"tensor {edit}", g
        if node.input:
            g = copy()
            del g.node[i].input[0]
            yield "input dropped", g
            g = copy()
            g.node[i].input.append(node.input[0])
            yield "input added", g
            g = copy()
            later = nodes[int(rng.integers(i, len(nodes)))].name
            g.node[i].input[0] = later
            yield "maybe cycle", g
            g = copy()
            g.node[i].input[0] = "ghost:3"
            yield "dangling", g
            g = copy()
            g.node[i].input[0] = f"{node.input[0].split(':')[0]}:{2**40}"
            yield "huge output index", g
        g = copy()
        g.node[i].name = nodes[(i + 1) % len(nodes)].name
        yield "duplicate name", g
        g = copy()
        g.node[i].op = _OP_TYPES[i % len(_OP_TYPES)]
        yield "op type changed", g
        if "frame_name" in node.attr:  # TensorFlow 1 loop frames: Enters of other frames
            g = copy()
            g.node[i].attr["frame_name"].s = b"other_frame"
            yield "frame changed", g
            g = copy()
            g.node[i].attr["is_constant"].b = not node.attr["is_constant"].b
            yield "invariance changed", g
        g = copy()
        g.node[i].device = "/device:NOPE:99"
        yield "device", g
    g = copy()
    g.node[0].input.extend(["^" + nodes[0].name] * 20000)
    yield "huge repeated inputs", g
    g = copy()
    av = g.node[0].attr["_deep"]
    for _ in range(150):
        av = av.func.attr["x"]
    yield "deep nesting", g


def mutants(data, rng):
    from graphflow.fileformat import tf_protos as pb
    for _ in range(300):
        b = bytearray(data)
        for _ in range(int(rng.integers(1, 5))):
            b[int(rng.integers(0, len(b)))] = int(rng.integers(0, 256))
        yield "byte flip", bytes(b)
    for _ in range(150):
        yield "truncated", data[:int(rng.integers(0, len(data)))]
    for _ in range(100):
        at = int(rng.integers(0, len(data)))
        yield "inserted", data[:at] + bytes(rng.integers(0, 256, int(rng.integers(1, 9)),
                                                         dtype=np.uint8)) + data[at:]
    graph_def = pb.GraphDef.FromString(data)
    for kind, g in _message_edits(graph_def, rng, pb):
        yield kind, g.SerializeToString()


def outcome(data):
    from graphflow.interop.tensorflow.graph_io import parse_graph_def
    try:
        graph_def = parse_graph_def(data, "mutant.pb")
        with tf.Graph().as_default():
            tf.import_graph_def(graph_def)
        return "loaded"
    except GraphFormatError:
        return "rejected"
    except Exception as exc:  # noqa: BLE001 - the test counts every other exception
        return f"{type(exc).__name__}: {str(exc)[:300]}"


def fuzz(paths, per_file, seed=0, share=1.0):
    """Counts of outcomes over up to `per_file` mutants of each file (message edits first), of
    which `share` are tried (`tooling.sampled`)."""
    from tests.tooling import sampled
    rng = np.random.default_rng(seed)
    counts = collections.Counter()
    examples = []
    for path in paths:
        data = open(path, "rb").read()
        all_mutants = list(mutants(data, rng))
        edits = [m for m in all_mutants if m[0] not in ("byte flip", "truncated", "inserted")]
        wire = [m for m in all_mutants if m[0] in ("byte flip", "truncated", "inserted")]
        chosen = edits[:max(0, per_file - len(wire))] + wire
        for kind, mutant in sampled(chosen[:per_file], share):
            result = outcome(mutant)
            if result in ("loaded", "rejected"):
                counts[result] += 1
            else:
                counts["unexpected"] += 1
                if len(examples) < 10:
                    examples.append((path.name, kind, result))
            counts["total"] += 1
    out = dict(counts)
    out.setdefault("unexpected", 0)
    out["examples"] = examples
    return out
