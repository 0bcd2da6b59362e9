"""TensorFlow 1's dataflow control flow (Switch/Merge for tf.cond, Enter/Merge/Switch/LoopCond/
NextIteration/Exit frames for tf.while_loop), as frozen TensorFlow 1 graphs hold it, raised into
functional `If`/`While` nodes over a FunctionDefLibrary, which `import_functions.py` then reads
like TensorFlow 2's own.

`lift(nodes, library, source, limits)` works in three linear passes:

1. every node gets its *context*, the path of control-flow constructs it runs in, in one pass in
   dependency order (back edges NextIteration -> Merge left out), as TensorFlow's executor finds
   frames: an Enter adds ("frame", frame_name), an Exit removes it, output p of a cond Switch adds
   ("cond", predicate, p), a cond Merge removes it, every other node runs in the deepest context of
   its inputs (the others must lie on that path: TensorFlow never reads a branch value outside it);
2. the nodes are grouped by context: a cond is the Switches and Merges sharing a predicate in one
   context with the nodes of its two branch contexts, a loop the control nodes of one frame with
   the nodes of the frame;
3. constructs are raised innermost first (`import_v1_functions.py`): each becomes one If or While
   node (plus an Identity under each Merge or Exit name, so the graph's names still read) in its
   parent context, which then is an ordinary node of the construct around it.

Whatever does not fit these patterns is one GraphFormatError naming the nodes.
"""

import collections

from graphflow.framework.errors import GraphFormatError
from graphflow.interop.tensorflow.import_core import parse_input, topological_order
from graphflow.interop.tensorflow.import_v1_functions import Lifter

_SWITCH = frozenset(("Switch", "RefSwitch"))
_MERGE = frozenset(("Merge", "RefMerge"))
_ENTER = frozenset(("Enter", "RefEnter"))
_EXIT = frozenset(("Exit", "RefExit"))
_NEXT = frozenset(("NextIteration", "RefNextIteration"))
CONTROL = _SWITCH | _MERGE | _ENTER | _EXIT | _NEXT | {"LoopCond"}


class _Analysis:
    """Contexts of the nodes and the constructs they form (see the module docstring)."""

    def __init__(self, nodes, by_name, source, limits):
        self.by_name = by_name
        self.source = source
        self.limits = limits
        self.inputs = {n.name: [parse_input(t) for t in n.input] for n in nodes}
        self.ctx = {}          # node name -> context (tuple); a cond Switch's outputs add a port
        self.loop_switch = set()
        self.pred = {}         # cond Switch name -> its predicate "name:index"
        self.roots = {}        # (name, index) of an Identity chain -> the tensor it passes on
        self.regions = collections.defaultdict(list)   # context -> ordinary nodes in it
        self.conds = collections.defaultdict(lambda: {"switches": [], "merges": []})
        self.loops = collections.defaultdict(lambda: {"enters": [], "merges": [], "switches": [],
                                                      "exits": [], "next": [], "loop_cond": []})
        back = [(n.name, src) for n in nodes if n.op in _MERGE
                for src, _, _ in self.inputs[n.name] if by_name[src].op in _NEXT]
        self.back_edges = set(back)
        for node in topological_order(nodes, by_name, source, back):
            self._visit(node)

    def error(self, names, message):
        where = f"{self.source}: " if self.source else ""
        return GraphFormatError(f"{where}TensorFlow 1 control flow the importer cannot raise into "
                                f"If/While: {message} (nodes {sorted(set(names))[:8]})")

    def out_ctx(self, src, index):
        base = self.ctx[src]
        if src in self.pred:
            if index not in (0, 1):
                raise self.error([src], f"Switch output {index} does not exist")
            return base + (("cond", self.pred[src], index),)
        return base

    def _deepest(self, node, contexts):
        deepest = max(contexts, key=len, default=())
        for c in contexts:
            if c != deepest[:len(c)]:
                raise self.error([node.name] + [s for s, _, _ in self.inputs[node.name]],
                                 f"'{node.name}' reads values of different branches or frames")
        return deepest

    def _visit(self, node):
        name, op = node.name, node.op
        ins = [(s, i, c) for s, i, c in self.inputs[name] if (name, s) not in self.back_edges]
        data = [self.out_ctx(s, i) for s, i, c in ins if not c]
        every = data + [self.ctx[s] for s, _, c in ins if c]
        if op in _ENTER:
            frame = node.attr["frame_name"].s.decode("utf-8", "replace") \
                if "frame_name" in node.attr else ""
            if not frame or not data:
                raise self.error([name], f"Enter '{name}' without a frame_name or an input")
            ctx = self._deepest(node, every) + (("frame", frame),)
            self.loops[ctx]["enters"].append(node)
        elif op in _EXIT:
            ctx = self._deepest(node, every)
            if not ctx or ctx[-1][0] != "frame" or len(data) != 1:
                raise self.error([name], f"Exit '{name}' is not fed by a loop's Switch")
            self.loops[ctx]["exits"].append(node)
            ctx = ctx[:-1]
        elif op in _MERGE and len(ins) < len(self.inputs[name]):  # a loop's Merge(Enter, Next)
            ctx = self._deepest(node, every)
            if not ctx or ctx[-1][0] != "frame":
                raise self.error([name], f"loop Merge '{name}' is not fed by an Enter")
            self.loops[ctx]["merges"].append(node)
        elif op in _MERGE:
            ctx = self._cond_merge(node, data)
        elif op in _SWITCH:
            if len(ins) < 2 or ins[1][2]:
                raise self.error([name], f"Switch '{name}' needs a value and a predicate")
            ctx = self._deepest(node, every)
            src = ins[1][0]
            if self.by_name[src].op == "LoopCond":
                if not ctx or ctx[-1][0] != "frame":
                    raise self.error([name, src], "a loop Switch outside its frame")
                self.loop_switch.add(name)
                self.loops[ctx]["switches"].append(node)
            else:
                self.pred[name] = self._predicate(src, ins[1][1])
                self.conds[ctx + (("cond", self.pred[name]),)]["switches"].append(node)
        else:
            ctx = self._deepest(node, every)
            if op in _NEXT or op == "LoopCond":
                if not ctx or ctx[-1][0] != "frame":
                    raise self.error([name], f"{op} '{name}' outside a loop frame")
                self.loops[ctx]["next" if op in _NEXT else "loop_cond"].append(node)
            else:
                self.regions[ctx].append(node)
        if len(ctx) > self.limits.max_function_depth:
            raise self.error([name], f"control flow nests deeper than "
                                     f"{self.limits.max_function_depth}")
        self.ctx[name] = ctx

    def _predicate(self, src, index):
        """A cond's key: its predicate tensor seen through Identity nodes (TensorFlow switches the
        branch pivots on the predicate, the values on an Identity of it)."""
        start = (src, index)
        if start in self.roots:
            return self.roots[start]
        chain = []
        while self.by_name[src].op == "Identity" and index == 0 and (src, index) not in self.roots:
            first = self.inputs[src][0] if self.inputs[src] else None
            if first is None or first[2]:
                break
            chain.append((src, index))
            src, index = first[0], first[1]
        root = self.roots.get((src, index), f"{src}:{index}")
        for link in chain + [start]:
            self.roots[link] = root  # each Identity is followed once: linear in the graph
        return root

    def _cond_merge(self, node, data):
        tails = [c[-1] for c in data if c and c[-1][0] == "cond"]
        if len(data) != 2 or not tails:
            raise self.error([node.name], f"Merge '{node.name}' does not join the two branches of "
                                          "a cond")
        key = tails[0][1]
        parent = next(c[:-1] for c in data if c and c[-1][0] == "cond")
        ports = []
        for c in data:
            if c[:-1] == parent and c[-1][:2] == ("cond", key):
                ports.append(c[-1][2])
            elif c == parent[:len(c)]:
                ports.append(None)  # a value from outside the cond (a constant)
            else:
                raise self.error([node.name], f"Merge '{node.name}' joins values of different "
                                              "conds")
        if ports[0] is not None and ports[0] == ports[1]:
            raise self.error([node.name], f"Merge '{node.name}' joins one branch with itself")
        if ports[0] is None and ports[1] is None:
            ports = [0, 1]
        elif ports[0] is None:
            ports[0] = 1 - ports[1]
        elif ports[1] is None:
            ports[1] = 1 - ports[0]
        self.conds[parent + (("cond", key),)]["merges"].append((node, ports))
        return parent


def lift(nodes, library, source, limits):
    """(nodes, library) with every TensorFlow 1 cond and loop raised into If/While nodes over
    new functions of the library."""
    by_name = {n.name: n for n in nodes}
    analysis = _Analysis(nodes, by_name, source, limits)
    lifter = Lifter(analysis, library, by_name)
    constructs = [(key, "cond") for key in analysis.conds] + \
                 [(key, "loop") for key in analysis.loops]
    for key, kind in sorted(constructs, key=lambda item: -len(item[0])):
        if kind == "cond":
            lifter.lift_cond(key, analysis.conds[key])
        else:
            lifter.lift_loop(key, analysis.loops[key])
    leftover = [n.name for c, ns in analysis.regions.items() if c for n in ns
                if c not in lifter.done]
    if leftover:
        raise analysis.error(leftover, "nodes outside any recognised cond or loop")
    return analysis.regions[()], lifter.library
