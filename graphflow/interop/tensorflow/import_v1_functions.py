"""Raising one TensorFlow 1 cond or loop (found by `import_v1_control_flow.py`) into an If or
While node over new FunctionDefs, the form `import_functions.py` reads.

A function body is the nodes of one context (a branch, or a loop frame) that its returns need,
found by one walk back from them: a read of the construct's own control nodes becomes an argument
(a cond's Switch output p in branch p; a loop's Merge or Switch:1 -> its loop variable, an
invariant Enter -> its pass-through variable), a read of a node of an enclosing context becomes a
captured argument (a Const is copied into the body instead), and anything else is an error.
Control inputs from outside the body are dropped (TensorFlow 1 adds them only to pin constants to
the pivot of their branch or frame). The node standing for the construct keeps the names the graph
reads: an Identity named as each Merge (cond) or Exit (loop) reads its output.
"""

from graphflow.fileformat import tf_protos as pb
from graphflow.interop.tensorflow.import_core import parse_input
from graphflow.interop.tensorflow.signatures import signature

_ENTER = frozenset(("Enter", "RefEnter"))
_NEXT = frozenset(("NextIteration", "RefNextIteration"))
_FLOAT = 1  # DataType DT_FLOAT: Tin entries of captures whose type no attr names (the If and While
#             readers count a function's arguments, they do not read Tin)
_RESOURCE, _VARIANT = 20, 21  # a TensorArray handle is graphflow's variant array value


def _type_of(node):
    for key in ("T", "dtype"):
        if key in node.attr and node.attr[key].WhichOneof("value") == "type":
            kind = node.attr[key].type
            return _VARIANT if kind == _RESOURCE else kind  # TensorArray handles
    return _FLOAT


def _data_inputs(node):
    return [t for t in node.input if not t.startswith("^")]


def _type_list(types):
    av = pb.AttrValue()
    av.list.SetInParent()
    av.list.type.extend(types)
    return av


class _Args:
    """A construct's argument list: the texts of the tensors it reads, with their types."""

    def __init__(self):
        self.texts, self.types, self.index = [], [], {}

    def add(self, text, dtype):
        """The index of the argument reading `text` (one argument per tensor)."""
        if text not in self.index:
            self.index[text] = self.append(text, dtype)
        return self.index[text]

    def append(self, text, dtype):
        """A new argument (loop variables are one each, even when they start from one tensor)."""
        self.texts.append(text)
        self.types.append(dtype)
        return len(self.texts) - 1


class Lifter:
    def __init__(self, analysis, library, by_name):
        self.a = analysis
        self.library = dict(library)
        self.by_name = by_name
        self.done = set()
        self.names = set(by_name) | set(library)
        self.read = {(s, i) for ins in analysis.inputs.values() for s, i, c in ins if not c}

    def _unique(self, base):
        name, k = base, 1
        while name in self.names:
            name, k = f"{base}_{k}", k + 1
        self.names.add(name)
        return name

    def _output_ref(self, node, index, reader):
        """`node:out_arg:k` of output `index` of `node` inside a function body."""
        sig = signature(node.op)
        if sig is None:
            raise self.a.error([node.name, reader], f"'{node.name}' ({node.op}) has no known "
                                                    "outputs")
        pos = 0
        for arg in sig.outputs:
            if arg.number_attr:
                count = node.attr[arg.number_attr].i if arg.number_attr in node.attr else 0
            elif arg.type_list_attr:
                count = len(node.attr[arg.type_list_attr].list.type) \
                    if arg.type_list_attr in node.attr else 0
            else:
                count = 1
            if index < pos + count:
                return f"{node.name}:{arg.name}:{index - pos}"
            pos += count
        raise self.a.error([node.name, reader], f"'{reader}' reads output {index} of "
                                                f"'{node.name}', which has {pos}")

    def _function(self, name, region_ctx, boundary, returns, args, what):
        """A FunctionDef (signature inputs filled in later by `_finish`) of the nodes of context
        `region_ctx` that `returns` (GraphDef input texts) need."""
        region = {n.name: n for n in self.a.regions.get(region_ctx, [])}
        body, stack = {}, []

        def ref(text, reader):
            src, index, control = parse_input(text)
            if control:
                if src in region:
                    stack.append(src)
                    return text
                return None
            if (src, index) in boundary:
                return f"_arg{boundary[(src, index)]}"
            if src in region:
                stack.append(src)
                return self._output_ref(region[src], index, reader)
            node = self.by_name.get(src)
            outer = self.a.out_ctx(src, index) if src in self.a.ctx else None
            if node is None or outer is None or len(outer) >= len(region_ctx) or \
                    region_ctx[:len(outer)] != outer:
                raise self.a.error([reader, src], f"{what}: '{reader}' reads '{text}', which is "
                                                  "neither in its branch or frame nor outside it")
            if node.op == "Const" and not node.input:
                body.setdefault(src, node)
                return f"{src}:output:0"
            return f"_arg{args.add(f'{src}:{index}', _type_of(node))}"

        fdef = pb.FunctionDef()
        fdef.signature.name = name
        for k, text in enumerate(returns):
            fdef.ret[f"out{k}"] = ref(text, parse_input(text)[0])
        new_nodes = {}
        while stack:
            src = stack.pop()
            if src in new_nodes:
                continue
            node = region[src]
            copy = pb.NodeDef()
            copy.CopyFrom(node)
            del copy.input[:]
            new_nodes[src] = copy
            copy.input.extend(r for r in (ref(t, src) for t in node.input) if r is not None)
        for src, node in body.items():
            if src not in new_nodes:
                copy = pb.NodeDef()
                copy.CopyFrom(node)
                new_nodes[src] = copy
        fdef.node_def.extend(new_nodes.values())
        return fdef

    def _finish(self, fdef, args, out_types):
        for k, dtype in enumerate(args.types):
            arg = fdef.signature.input_arg.add(name=f"_arg{k}")
            arg.type = dtype
        for k, dtype in enumerate(out_types):
            arg = fdef.signature.output_arg.add(name=f"out{k}")
            arg.type = dtype
        self.library[fdef.signature.name] = fdef

    def _place(self, node, parent):
        """Add a new node to context `parent` (replacing a node of the same name)."""
        self.by_name[node.name] = node
        self.a.ctx[node.name] = parent
        self.a.pred.pop(node.name, None)
        self.a.regions[parent].append(node)

    def _outputs(self, owner, parent, originals):
        """An Identity named as each original Merge/Exit, reading output k of `owner` (None:
        an output no Exit reads)."""
        for k, original in enumerate(originals):
            if original is None:
                continue
            ident = pb.NodeDef(name=original.name, op="Identity", input=[f"{owner}:{k}"])
            ident.attr["T"].type = _type_of(original)
            if original.device:
                ident.device = original.device
            self._place(ident, parent)

    def lift_cond(self, key, group):
        parent, pred = key[:-1], key[-1][1]
        branches = {p: parent + (("cond", pred, p),) for p in (0, 1)}
        self.done.update(branches.values())
        merges = group["merges"]
        if not merges:
            return  # a cond whose value nothing joins: dead in TensorFlow too
        for merge, _ in merges:
            if (merge.name, 1) in self.read:
                raise self.a.error([merge.name], f"the branch index output of Merge "
                                                 f"'{merge.name}' is read")
        args = _Args()
        for switch in group["switches"]:
            args.add(_data_inputs(switch)[0], _type_of(switch))
        name = self._unique(f"{merges[0][0].name}_if")
        fdefs = {}
        for port in (1, 0):
            boundary = {(s.name, port): args.index[_data_inputs(s)[0]] for s in group["switches"]}
            returns = [_data_inputs(m)[ports.index(port)] for m, ports in merges]
            fdefs[port] = self._function(self._unique(f"{name}_{'then' if port else 'else'}"),
                                         branches[port], boundary, returns, args,
                                         f"cond '{name}'")
        out_types = [_type_of(m) for m, _ in merges]
        for fdef in fdefs.values():
            self._finish(fdef, args, out_types)
        node = pb.NodeDef(name=name, op="If", input=[pred] + args.texts)
        node.attr["Tcond"].type = 10  # DT_BOOL
        node.attr["Tin"].CopyFrom(_type_list(args.types))
        node.attr["Tout"].CopyFrom(_type_list(out_types))
        node.attr["then_branch"].func.name = fdefs[1].signature.name
        node.attr["else_branch"].func.name = fdefs[0].signature.name
        self._place(node, parent)
        self._outputs(name, parent, [m for m, _ in merges])

    def lift_loop(self, frame, group):
        parent = frame[:-1]
        self.done.add(frame)
        names = [n.name for kind in group.values() for n in kind]
        if len(group["loop_cond"]) != 1:
            raise self.a.error(names, f"frame '{frame[-1][1]}' has "
                                      f"{len(group['loop_cond'])} LoopCond nodes, not one")
        loop_cond = group["loop_cond"][0]
        args, boundary, variables = _Args(), {}, []
        for merge in group["merges"]:
            srcs = [parse_input(t)[0] for t in _data_inputs(merge)]
            enters = [s for s in srcs if self.by_name[s].op in _ENTER]
            nexts = [s for s in srcs if self.by_name[s].op in _NEXT]
            if len(srcs) != 2 or len(enters) != 1 or len(nexts) != 1:
                raise self.a.error([merge.name] + srcs, f"loop Merge '{merge.name}' does not join "
                                                        "one Enter and one NextIteration")
            k = args.append(_data_inputs(self.by_name[enters[0]])[0], _type_of(merge))
            boundary[(merge.name, 0)] = k
            variables.append((merge, enters[0], self.by_name[nexts[0]]))
        variable_enters = {e for _, e, _ in variables}
        for enter in group["enters"]:
            if enter.name not in variable_enters:
                boundary[(enter.name, 0)] = args.append(_data_inputs(enter)[0], _type_of(enter))
        index_of = {m.name: k for k, (m, _, _) in enumerate(variables)}
        exits = {}
        for switch in group["switches"]:
            src = parse_input(_data_inputs(switch)[0])[0]
            if src not in index_of:
                raise self.a.error([switch.name], f"loop Switch '{switch.name}' does not read a "
                                                  "loop Merge")
            boundary[(switch.name, 1)] = index_of[src]
            exits[switch.name] = index_of[src]
        outputs = [None] * len(variables)
        for exit_node in group["exits"]:
            src = parse_input(_data_inputs(exit_node)[0])
            if src[0] not in exits or src[1] != 0:
                raise self.a.error([exit_node.name], f"Exit '{exit_node.name}' does not read a "
                                                     "loop Switch's output 0")
            outputs[exits[src[0]]] = exit_node
        name = self._unique(f"{frame[-1][1].rsplit('/', 1)[0]}/lifted_while")
        what = f"loop '{frame[-1][1]}'"
        cond = self._function(self._unique(f"{name}_cond"), frame, boundary,
                              [_data_inputs(loop_cond)[0]], args, what)
        body = self._function(self._unique(f"{name}_body"), frame, boundary,
                              [_data_inputs(n)[0] for _, _, n in variables], args, what)
        for k in range(len(variables), len(args.texts)):
            body.ret[f"out{k}"] = f"_arg{k}"  # invariants and captures pass through
        self._finish(cond, args, [10])
        self._finish(body, args, args.types)
        node = pb.NodeDef(name=name, op="While", input=list(args.texts))
        node.attr["T"].CopyFrom(_type_list(args.types))
        node.attr["cond"].func.name = cond.signature.name
        node.attr["body"].func.name = body.signature.name
        self._place(node, parent)
        self._outputs(name, parent, outputs)
