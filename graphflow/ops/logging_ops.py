"""Printing and checking ops: `tf.Print`, `tf.print`, `tf.Assert`, `tf.check_numerics`.

They are stateful (never folded, merged or pruned away when something depends on them). Text parts
of `tf.print`/`tf.Assert` are kept in a `template` attr where each `{}` stands for the next tensor
input, so a graph holding them saves without string tensors.
"""

import sys

from graphflow.framework import dtypes
from graphflow.framework.graph import Operation, Tensor, get_default_graph
from graphflow.ops import no_onnx
from graphflow.ops.core_ops import convert_to_tensor
from graphflow.ops.registry import FLOATS, define, make_op, make_tensor, no_gradient, require_dtype


def _print_infer(inputs, attrs):
    return [(inputs[0].dtype, inputs[0].shape)]


def _no_outputs(inputs, attrs):
    return []


def _assert_infer(inputs, attrs):
    condition = inputs[0]
    require_dtype(condition, (dtypes.bool_,), "tf.Assert's condition")
    if condition.shape.dims is not None and condition.shape.num_elements() not in (None, 1):
        raise ValueError(f"the condition must be a single bool, got shape {condition.shape}")
    _check_template(attrs["template"], len(inputs) - 1)
    return []


def _check_numerics_infer(inputs, attrs):
    require_dtype(inputs[0], FLOATS, "tf.check_numerics's tensor")
    return [(inputs[0].dtype, inputs[0].shape)]


def _print_v2_infer(inputs, attrs):
    _check_template(attrs["template"], len(inputs))
    if attrs["output_stream"] not in ("stderr", "stdout") and not attrs["output_stream"].startswith(
            "file://"):
        raise ValueError(f"unknown output_stream {attrs['output_stream']!r}")
    return []


def _check_template(template, count):
    if template.count("{}") != count:
        raise ValueError(f"template {template!r} has {template.count('{}')} '{{}}' places for "
                         f"{count} tensors")


define("Print", _print_infer, stateful=True, may_alias_input=True,
       attrs="message:string first_n:int summarize:int", onnx=no_onnx.LOGGING)
def _print_v2_touches(attrs):
    """PrintV2 appends to a file for an output_stream "file://PATH"; the streams touch nothing."""
    return "files" if str(attrs.get("output_stream", "")).startswith("file://") else ""


define("PrintV2", _print_v2_infer, stateful=True, touches=_print_v2_touches,
       attrs="template:string output_stream:string summarize:int end:string", onnx=no_onnx.LOGGING)
define("Assert", _assert_infer, stateful=True, attrs="template:string summarize:int",
       onnx=no_onnx.none("a run-time assertion with a message: ONNX has no failing op"))
define("CheckNumerics", _check_numerics_infer, stateful=True, may_alias_input=True,
       attrs="message:string", onnx=no_onnx.CHECK)
no_gradient("PrintV2", "Assert")


def Print(input_, data, message=None, first_n=None, summarize=None, name=None):
    """`tf.Print`: an identity of `input_` that, when it runs, writes `message` followed by each
    tensor of `data` (its first `summarize` values, 3 by default) to stderr; only the first
    `first_n` runs print when `first_n` is positive."""
    input_ = convert_to_tensor(input_)
    data = [convert_to_tensor(d) for d in (data or [])]
    attrs = {"message": message or "", "first_n": -1 if first_n is None else int(first_n),
             "summarize": 3 if summarize is None else int(summarize)}
    return make_tensor("Print", [input_] + data, attrs, name=name or "Print")


def _template_and_tensors(items):
    """Split a mix of Python values and tensors into ('text {} more {}', [tensors]); lists, tuples
    and dicts holding tensors print in Python's form with each tensor's value in its place."""
    parts, tensors = [], []
    for item in items:
        parts.append(_template_of(item, tensors, nested=False))
    return parts, tensors


def _template_of(item, tensors, nested=True):
    if isinstance(item, (Tensor, Operation)) or hasattr(item, "_as_graph_element"):
        tensors.append(convert_to_tensor(item))
        return "{}"
    if isinstance(item, dict):
        return "{" + ", ".join(f"{key!r}: {_template_of(value, tensors)}"
                               for key, value in item.items()) + "}"
    if isinstance(item, (list, tuple)):
        inner = ", ".join(_template_of(value, tensors) for value in item)
        return f"[{inner}]" if isinstance(item, list) else f"({inner}{',' if len(item) == 1 else ''})"
    return (repr(item) if nested else str(item)).replace("{}", "{ }")


def _stream_name(output_stream):
    if output_stream is None or output_stream in (sys.stderr, sys.__stderr__, "stderr"):
        return "stderr"
    if output_stream in (sys.stdout, sys.__stdout__, "stdout"):
        return "stdout"
    if isinstance(output_stream, str) and output_stream.startswith("file://"):
        return output_stream
    raise ValueError(f"tf.print's output_stream must be sys.stderr, sys.stdout or a 'file://PATH' "
                     f"string, got {output_stream!r}")


def print_v2(*inputs, output_stream=None, summarize=3, sep=" ", end="\n", name=None):
    """`tf.print`: an op that, when run, prints `inputs` (tensors and Python values, separated by
    `sep`) to `output_stream` (sys.stderr when None, sys.stdout, or 'file://PATH'), written to
    the stream current at run time; tensors show their first and last `summarize` values per dimension
    (all of them when `summarize` is -1 or None). Use it in `tf.control_dependencies` or fetch it."""
    parts, tensors = _template_and_tensors(inputs)
    attrs = {"template": sep.join(parts), "output_stream": _stream_name(output_stream),
             "summarize": -1 if summarize is None else int(summarize), "end": end}
    graph = tensors[0].graph if tensors else get_default_graph()
    return make_op("PrintV2", tensors, attrs, name=name or "PrintV2", graph=graph)


def Assert(condition, data, summarize=None, name=None):
    """`tf.Assert`: an op that fails the run with InvalidArgumentError('assertion failed: [data]
    ...') when the bool `condition` is False. Text in `data` may be Python strings."""
    condition = convert_to_tensor(condition, dtype=dtypes.bool_)
    parts, tensors = _template_and_tensors(data)
    template = " ".join(f"[{p}]" for p in parts)
    attrs = {"template": template, "summarize": 3 if summarize is None else int(summarize)}
    return make_op("Assert", [condition] + tensors, attrs, name=name or "Assert",
                   graph=condition.graph)


def check_numerics(tensor, message, name=None):
    """`tf.check_numerics`: an identity of `tensor` that fails the run with InvalidArgumentError
    ('<message> : Tensor had NaN values', naming the op and its line) on NaN or Inf."""
    return make_tensor("CheckNumerics", (convert_to_tensor(tensor),), {"message": str(message)},
                       name=name or "CheckNumerics")


def add_check_numerics_ops():
    """`tf.add_check_numerics_ops`: a CheckNumerics op for every floating-point output of every op
    in the default graph; returns a group of them to run with the training step."""
    graph = get_default_graph()
    checks = []
    for op in graph.get_operations():
        for out in op.outputs:
            if out.dtype.is_floating and op.type != "CheckNumerics":
                message = f"{op.name}:{out.value_index}"
                with graph.control_dependencies(checks[-1:]):
                    checks.append(check_numerics(out, message, name="CheckNumerics").op)
    if not checks:
        raise ValueError("add_check_numerics_ops: the graph holds no floating-point tensors")
    from graphflow.ops.core_ops import group
    return group(*checks)


__all__ = ["Print", "print_v2", "Assert", "check_numerics", "add_check_numerics_ops"]
