"""The save/restore subgraph TensorFlow's `tf.train.Saver` adds to a graph, as NodeDefs.

A MetaGraphDef names three tensors of its graph in its `saver_def`, and TensorFlow's
`import_meta_graph` + `Saver.restore` (and the SavedModel loader) run them:

    save/filename/input   Const "model"                      (string scalar)
    save/filename         PlaceholderWithDefault(save/filename/input)
    save/Const            PlaceholderWithDefault(save/filename)     <- filename_tensor_name
    save/SaveV2           SaveV2(save/Const, tensor_names, shape_and_slices, <variables>...)
    save/control_dependency  Identity(save/Const, ^save/SaveV2)  <- save_tensor_name
    save/RestoreV2        RestoreV2(save/Const, tensor_names, shape_and_slices) {dtypes}
    save/Assign, save/Assign_1, ...  Assign(<variable>, save/RestoreV2:i)
    save/restore_all      NoOp(^save/Assign, ...)            <- restore_op_name

`saver_nodes` writes them (a V2, unsharded saver, its variables sorted by checkpoint key as
TensorFlow sorts them) for a graph graphflow exports. graphflow's own `Saver` saves and restores
in Python, so on import `split_saver_nodes` takes TensorFlow's save subgraph (sharded or not) back
out of a GraphDef and reads from it which checkpoint key restores which variable
(`restore_keys`).
"""

from graphflow.fileformat import tf_protos as pb

_DT = {"float16": "DT_HALF", "float32": "DT_FLOAT", "float64": "DT_DOUBLE", "int8": "DT_INT8",
       "int16": "DT_INT16", "int32": "DT_INT32", "int64": "DT_INT64", "uint8": "DT_UINT8",
       "uint16": "DT_UINT16", "uint32": "DT_UINT32", "uint64": "DT_UINT64",
       "complex64": "DT_COMPLEX64", "complex128": "DT_COMPLEX128", "bool": "DT_BOOL",
       "string": "DT_STRING", "bfloat16": "DT_BFLOAT16"}


def datatype(dtype_name):
    """TensorFlow's DataType number of a graphflow dtype name ('float32' -> DT_FLOAT)."""
    try:
        return pb.DataType.Value(_DT[dtype_name])
    except KeyError:
        raise ValueError(f"graphflow cannot write dtype {dtype_name!r} in a TensorFlow "
                         "checkpoint") from None


def _string_const(name, values, shape, device=""):
    node = pb.NodeDef(name=name, op="Const", device=device)
    tensor = node.attr["value"].tensor
    tensor.dtype = pb.DataType.Value("DT_STRING")
    tensor.tensor_shape.SetInParent()
    for d in shape:
        tensor.tensor_shape.dim.add(size=d)
    tensor.string_val.extend(v.encode("utf-8") if isinstance(v, str) else v for v in values)
    node.attr["dtype"].type = pb.DataType.Value("DT_STRING")
    return node


def _placeholder_with_default(name, source):
    node = pb.NodeDef(name=name, op="PlaceholderWithDefault", input=[source])
    node.attr["shape"].shape.SetInParent()
    node.attr["dtype"].type = pb.DataType.Value("DT_STRING")
    return node


def unique_scope(taken, base="save"):
    """The first of 'save', 'save_1', ... that no node name in `taken` starts with."""
    i = 0
    while True:
        scope = base if i == 0 else f"{base}_{i}"
        if scope not in taken and not any(n.startswith(scope + "/") for n in taken):
            return scope
        i += 1


def saver_nodes(variables, scope="save", max_to_keep=5, keep_checkpoint_every_n_hours=10000.0):
    """([NodeDef], SaverDef) of a V2 Saver over `variables`: [(checkpoint key, variable node
    name, graphflow dtype name, static shape or None[, shape-and-slice spec])]."""
    variables = sorted(variables, key=lambda v: v[0])
    keys = [v[0] for v in variables]
    specs = [v[4] if len(v) > 4 else "" for v in variables]
    types = [datatype(v[2]) for v in variables]
    n = len(variables)
    nodes = [_string_const(f"{scope}/filename/input", ["model"], []),
             _placeholder_with_default(f"{scope}/filename", f"{scope}/filename/input"),
             _placeholder_with_default(f"{scope}/Const", f"{scope}/filename")]
    nodes.append(_string_const(f"{scope}/SaveV2/tensor_names", keys, [n]))
    nodes.append(_string_const(f"{scope}/SaveV2/shape_and_slices", specs, [n]))
    save = pb.NodeDef(name=f"{scope}/SaveV2", op="SaveV2",
                      input=[f"{scope}/Const", f"{scope}/SaveV2/tensor_names",
                             f"{scope}/SaveV2/shape_and_slices"] + [v[1] for v in variables])
    save.attr["dtypes"].list.type.extend(types)
    nodes.append(save)
    dep = pb.NodeDef(name=f"{scope}/control_dependency", op="Identity",
                     input=[f"{scope}/Const", f"^{scope}/SaveV2"])
    dep.attr["T"].type = pb.DataType.Value("DT_STRING")
    dep.attr["_class"].list.s.append(f"loc:@{scope}/Const".encode())
    nodes.append(dep)
    cpu = "/device:CPU:0"
    nodes.append(_string_const(f"{scope}/RestoreV2/tensor_names", keys, [n], cpu))
    nodes.append(_string_const(f"{scope}/RestoreV2/shape_and_slices", specs, [n], cpu))
    restore = pb.NodeDef(name=f"{scope}/RestoreV2", op="RestoreV2", device=cpu,
                         input=[f"{scope}/Const", f"{scope}/RestoreV2/tensor_names",
                                f"{scope}/RestoreV2/shape_and_slices"])
    restore.attr["dtypes"].list.type.extend(types)
    nodes.append(restore)
    assigns = []
    for i, (_, node_name, _, shape, *_) in enumerate(variables):
        name = f"{scope}/Assign" + (f"_{i}" if i else "")
        source = f"{scope}/RestoreV2" + (f":{i}" if i else "")
        assign = pb.NodeDef(name=name, op="Assign", input=[node_name, source])
        assign.attr["T"].type = types[i]
        assign.attr["validate_shape"].b = shape is not None and None not in shape
        assign.attr["use_locking"].b = True
        assign.attr["_class"].list.s.append(f"loc:@{node_name}".encode())
        nodes.append(assign)
        assigns.append(name)
    nodes.append(pb.NodeDef(name=f"{scope}/restore_all", op="NoOp",
                            input=[f"^{a}" for a in sorted(assigns)]))  # sorted, as TF
    saver_def = pb.SaverDef(filename_tensor_name=f"{scope}/Const:0",
                            save_tensor_name=f"{scope}/control_dependency:0",
                            restore_op_name=f"{scope}/restore_all",
                            max_to_keep=int(max_to_keep or 0),
                            keep_checkpoint_every_n_hours=float(keep_checkpoint_every_n_hours),
                            version=pb.SaverDef.V2)
    return nodes, saver_def


def _scope_of(saver_def):
    """The name scope of a SaverDef's nodes ('save' for 'save/restore_all'), or None."""
    for name in (saver_def.restore_op_name, saver_def.filename_tensor_name,
                 saver_def.save_tensor_name):
        head, sep, _ = name.partition("/")
        if sep and head:
            return head
    return None


def _source(name):
    """'a/b' of an input 'a/b:1', '^a/b' or 'a/b'."""
    return name.lstrip("^").partition(":")[0]


def split_saver_nodes(nodes, saver_def=None):
    """(kept NodeDefs, the save subgraphs' NodeDefs): the nodes under the scope of `saver_def`'s
    names and of every scope holding a `SaveV2`/`RestoreV2`/... node (each Saver of a graph adds
    one), and any node that consumes one of them (nothing of the model does in a graph TensorFlow
    wrote)."""
    scopes = set()
    if saver_def is not None and _scope_of(saver_def):
        scopes.add(_scope_of(saver_def))
    for node in nodes:
        if node.op in ("SaveV2", "RestoreV2", "MergeV2Checkpoints", "SaveSlices",
                       "RestoreSlice", "Save", "Restore"):
            head, sep, _ = node.name.partition("/")
            if sep:  # every saver's subgraph (a graph saved twice has 'save' and 'save_1')
                scopes.add(head)
    removed = {n.name for n in nodes if n.name.partition("/")[0] in scopes}
    changed = True
    while changed:  # anything downstream of the removed nodes goes too
        changed = False
        for node in nodes:
            if node.name not in removed and any(_source(i) in removed for i in node.input):
                removed.add(node.name)
                changed = True
    kept = [n for n in nodes if n.name not in removed]
    return kept, [n for n in nodes if n.name in removed]


def _strings(node):
    if node is None or node.op != "Const":
        return None
    tensor = node.attr["value"].tensor
    return [s.decode("utf-8", "replace") for s in tensor.string_val]


def restore_keys(save_nodes):
    """{variable node name: checkpoint key} read from a save subgraph's RestoreV2 and Assign
    nodes (what TensorFlow's `Saver.restore` would assign from which key)."""
    by_name = {n.name: n for n in save_nodes}
    keys = {}
    for node in save_nodes:
        if node.op != "Assign" or len(node.input) < 2:
            continue
        source, _, index = node.input[1].partition(":")
        restore = by_name.get(source)
        if restore is None or restore.op != "RestoreV2" or len(restore.input) < 2:
            continue
        names = _strings(by_name.get(_source(restore.input[1])))
        try:
            i = int(index) if index else 0
        except ValueError:
            continue
        if names is not None and 0 <= i < len(names):
            keys[_source(node.input[0])] = names[i]
    return keys
