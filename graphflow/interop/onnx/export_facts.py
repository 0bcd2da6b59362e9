"""The exporter's converter table, derived from the op records: how each op type is written as
ONNX is its OpDef's `onnx` fact (`registry.OpDef`), and this module is the one reader of it.

A fact is plain data, one of
    "Abs"                                           one ONNX node, inputs and outputs in order;
    {"op": "Softmax", "attrs": {"axis": "axis"}}    the same, with attrs passed on (renamed);
    {"converter": "conv", ...}                      the named converter (`export_ops.CONVERTERS`);
    {"none": "why"}                                 no ONNX form: the export error quotes why.
`converter_for(op_type)` turns a fact into the function `fn(ctx, op)` the exporter calls;
`why_not(op_type)` gives the reason an op type has none (its own, or what is wrong with its fact).
"""

import numpy as np

from graphflow.ops import registry


class FactError(ValueError):
    """An op record's `onnx` fact that the exporter cannot use (malformed, or naming a converter
    that does not exist)."""


def named_converters():
    """The named converters, once every module holding converters has registered its own."""
    from graphflow.interop.onnx import (  # noqa: PLC0415
        export_array_ops,  # noqa: F401
        export_control_flow,  # noqa: F401
        export_linalg_ops,  # noqa: F401
        export_nn_ops,  # noqa: F401
    )
    from graphflow.interop.onnx.export_ops import CONVERTERS  # noqa: PLC0415
    return CONVERTERS


_DERIVED = {}  # op type -> converter function (None: no ONNX form), per fact seen


def converter_for(op_type):
    """The function writing ops of `op_type` as ONNX nodes, or None when its record says it has
    no ONNX form. FactError when the record's fact is missing, malformed or names a converter
    that does not exist."""
    op_def = registry.lookup(op_type)
    fact = op_def.onnx
    cached = _DERIVED.get(op_type)
    if cached is not None and cached[0] is fact:
        return cached[1]
    fn = _derive(op_type, fact)
    _DERIVED[op_type] = (fact, fn)
    return fn


def why_not(op_type):
    """Why ops of `op_type` have no ONNX export (None when they have one)."""
    try:
        if converter_for(op_type) is not None:
            return None
    except FactError as exc:
        return str(exc)
    return registry.lookup(op_type).onnx["none"]


def _derive(op_type, fact):
    if fact is None:
        raise FactError(f"op type '{op_type}' declares no ONNX fact: its OpDef needs onnx= (an ONNX "
                        "op name, {'converter': name} or {'none': reason})")
    if isinstance(fact, str) and fact:
        return _one_node(fact, {})
    if isinstance(fact, dict):
        keys = set(fact)
        if keys == {"none"} and isinstance(fact["none"], str) and fact["none"]:
            return None
        if "converter" in keys:
            converters = named_converters()
            if fact["converter"] not in converters:
                raise FactError(f"op type '{op_type}': its ONNX fact names the converter "
                                f"'{fact['converter']}', which graphflow.interop.onnx does not define")
            return converters[fact["converter"]]
        if keys <= {"op", "attrs"} and isinstance(fact.get("op"), str) \
                and isinstance(fact.get("attrs", {}), dict):
            return _one_node(fact["op"], fact.get("attrs", {}))
    raise FactError(f"op type '{op_type}': malformed ONNX fact {fact!r} (an ONNX op name, "
                    "{'op': name, 'attrs': {...}}, {'converter': name} or {'none': reason})")


def _one_node(onnx_type, attr_names):
    """A converter writing the op as one `onnx_type` node; `attr_names` maps the graphflow attrs
    it passes on to their ONNX names (an attr the op does not hold, or holds as None, is left
    out: ONNX's default)."""
    def convert(ctx, op):
        attrs = {}
        for name, onnx_name in attr_names.items():
            value = op.attrs.get(name)
            if value is not None:
                attrs[onnx_name] = _plain(value)
        ctx.node(onnx_type, [ctx.name(t) for t in op.inputs], [ctx.name(t) for t in op.outputs],
                 **attrs)
    convert.__name__ = f"one_{onnx_type}_node"
    return convert


def _plain(value):
    """An attr value as the plain Python value `onnx.helper.make_attribute` takes."""
    if isinstance(value, (bool, np.bool_)):
        return int(value)
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value
