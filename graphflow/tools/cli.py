"""The `graphflow` command: look at, run and optimize saved graph files without any model code.

    graphflow inspect model.gfz [--dot graph.dot] [--svg graph.svg] [--brief]
    graphflow run model.gfz --input x=batch.npy [--input y='[1, 2]'] [--output out.npz] [--text]
    graphflow optimize model.gfz -o fast.gfz [--report] [--passes constant_folding,cse]

Errors about files or inputs are reported in one line on stderr with exit status 1; usage errors
exit with status 2.
"""

import argparse
import json
import os
import sys

import numpy as np

import graphflow
from graphflow.fileformat import file_io
from graphflow.fileformat.serialization import load, save
from graphflow.framework.errors import GraphFormatError, OpError
from graphflow.framework.graph import Tensor
from graphflow.tools import viz


class CommandError(Exception):
    """A problem with the command's input: reported without a traceback."""


def _shape_text(shape):
    if shape is None:
        return ""
    if shape.dims is None:
        return "<unknown rank>"
    return "[" + ", ".join("?" if d is None else str(d) for d in shape.dims) + "]"


def _load(path):
    if not os.path.exists(path):
        raise CommandError(f"{path}: no such file")
    if os.path.isdir(path):
        raise CommandError(f"{path}: is a directory, not a graph file")
    return load(path)


# ------------------------------------------------------------------------------------ inspect
def cmd_inspect(args, out):
    model = _load(args.model)
    graph = model.graph
    values = model.session.variable_values()
    params = sum(v.shape.num_elements() or 0 for v in model.variables)
    restored = sum(1 for v in model.variables if v.op.attrs["shared_name"] in values)
    print(f"{args.model}: graphflow graph format {model.format_version} "
          f"({model.producer or 'unknown producer'}), {graph.num_ops()} ops", file=out)
    for side, entries in (("inputs", model.inputs), ("outputs", model.outputs)):
        print(f"{side}:", file=out)
        if not entries:
            print("  (none)", file=out)
        for name, element in entries.items():
            if isinstance(element, Tensor):
                print(f"  {name}: {element.dtype.name} {_shape_text(element.shape)}  "
                      f"({element.name})", file=out)
            else:
                print(f"  {name}: operation {element.name}", file=out)
    print(f"variables: {len(model.variables)} ({params} parameters, {restored} with saved "
          "values)", file=out)
    if not args.brief:
        print(file=out)
        print(viz.summary(graph, max_ops=args.max_ops), file=out)
    if args.dot:
        with file_io.atomic_write(args.dot) as f:
            f.write(viz.to_dot(graph).encode("utf-8"))
        print(f"wrote {args.dot}", file=out)
    if args.svg:
        try:
            svg = viz.render_svg(graph)
        except (ImportError, RuntimeError) as exc:
            raise CommandError(str(exc)) from None
        with file_io.atomic_write(args.svg) as f:
            f.write(svg.encode("utf-8"))
        print(f"wrote {args.svg}", file=out)


# ------------------------------------------------------------------------------------ run
def _parse_input(spec, model, text=False):
    name, sep, source = spec.partition("=")
    if not sep or not name:
        raise CommandError(f"--input {spec!r}: expected NAME=FILE.npy (or NAME=FILE.npz, or "
                           "NAME=<JSON value>)")
    if name not in model.inputs:
        raise CommandError(f"--input {name}: the graph has no input '{name}'; its inputs are "
                           f"{sorted(model.inputs) or 'none'}")
    if os.path.isfile(source):
        try:
            loaded = np.load(source, allow_pickle=False)
        except (ValueError, OSError) as exc:
            raise CommandError(f"--input {name}: cannot read {source}: {exc}") from None
        if isinstance(loaded, np.lib.npyio.NpzFile):
            with loaded:
                keys = loaded.files
                key = name if name in keys else (keys[0] if len(keys) == 1 else None)
                if key is None:
                    raise CommandError(f"--input {name}: {source} holds {keys}; none is named "
                                       f"'{name}'")
                return name, loaded[key]
        return name, loaded
    try:
        value = json.loads(source)
    except ValueError:
        raise CommandError(f"--input {name}: {source!r} is neither a file nor a JSON value") \
            from None
    if text and isinstance(value, str):  # a string is fed as its Unicode code points
        return name, np.array([ord(c) for c in value], dtype=np.int32)
    try:
        return name, np.asarray(value)
    except ValueError as exc:
        raise CommandError(f"--input {name}: {exc}") from None


def cmd_run(args, out):
    model = _load(args.model)
    feeds = dict(_parse_input(spec, model, args.text) for spec in args.input)
    names = None
    if args.outputs:
        names = [n.strip() for n in args.outputs.split(",") if n.strip()]
        unknown = [n for n in names if n not in model.outputs]
        if unknown:
            raise CommandError(f"--outputs: unknown output(s) {unknown}; the graph's outputs are "
                               f"{sorted(model.outputs)}")
    missing = [n for n in model.inputs if n not in feeds]
    if missing:
        raise CommandError(f"missing --input for {missing}; the graph's inputs are "
                           f"{sorted(model.inputs)}")
    results = model.run(feeds, outputs=names)
    if args.output:
        arrays = {k: np.asarray(v) for k, v in results.items() if v is not None}
        with file_io.atomic_write(args.output) as f:
            np.savez(f, **arrays)
        print(f"wrote {len(arrays)} output(s) to {args.output}", file=out)
        return
    for name, value in results.items():
        if value is None:
            print(f"{name}: (operation ran)", file=out)
            continue
        value = np.asarray(value)
        if args.text and value.ndim == 1 and value.dtype.kind in "iu":
            print(f"{name}: {''.join(chr(int(c)) for c in value)}", file=out)
            continue
        print(f"{name}: {value.dtype} {list(value.shape)}", file=out)
        print(np.array2string(value, threshold=200, max_line_width=100), file=out)


# ------------------------------------------------------------------------------------ optimize
def _optimizer():
    fn = getattr(graphflow, "optimize", None)
    if fn is None:
        try:
            from graphflow.optimizer_passes import optimize as fn
        except ImportError:
            fn = None
    if fn is None:
        raise CommandError("graph optimization is not available in this graphflow build "
                           "(graphflow.optimize is missing)")
    return fn


def cmd_optimize(args, out):
    optimize = _optimizer()
    model = _load(args.model)
    if not model.outputs:
        raise CommandError(f"{args.model} has no outputs in its signature: nothing to optimize for")
    input_names, output_names = list(model.inputs), list(model.outputs)
    passes = [p.strip() for p in args.passes.split(",") if p.strip()] if args.passes else None
    try:
        graph, report = optimize([model.outputs[n] for n in output_names],
                                 feeds=[model.inputs[n] for n in input_names], passes=passes)
    except ValueError as exc:
        raise CommandError(str(exc)) from None
    fetches = list(getattr(report, "fetches", None) or [])
    feeds = list(getattr(report, "feeds", None) or [])
    if len(fetches) != len(output_names) or len(feeds) != len(input_names):
        fetches = [graph.as_graph_element(model.outputs[n].name) for n in output_names]
        feeds = [graph.get_tensor_by_name(model.inputs[n].name) for n in input_names]
    values = model.session.variable_values()
    kept = {op.attrs["shared_name"] for op in graph.get_operations() if op.type == "VariableV2"}
    save(args.o, inputs=dict(zip(input_names, feeds)), outputs=dict(zip(output_names, fetches)),
         graph=graph, variable_values={k: v for k, v in values.items() if k in kept})
    print(f"{args.model}: {model.graph.num_ops()} ops -> {args.o}: {graph.num_ops()} ops",
          file=out)
    if args.report:
        print(report, file=out)


# ------------------------------------------------------------------------------------ main
def _parser():
    parser = argparse.ArgumentParser(prog="graphflow", description="Inspect, run and optimize "
                                     "saved graphflow graphs (.gfz files).")
    parser.add_argument("--version", action="version", version=f"graphflow {graphflow.__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    p = sub.add_parser("inspect", help="print a graph file's signatures, variables and ops")
    p.add_argument("model", help="a .gfz file written by graphflow.save")
    p.add_argument("--dot", metavar="PATH", help="also write the graph as Graphviz DOT source")
    p.add_argument("--svg", metavar="PATH", help="also draw the graph as SVG (needs Graphviz)")
    p.add_argument("--brief", action="store_true", help="leave out the table of ops")
    p.add_argument("--max-ops", type=int, default=None, metavar="N",
                   help="list at most N ops in the table")
    p.set_defaults(run=cmd_inspect)

    p = sub.add_parser("run", help="run a graph file on inputs and print or save its outputs")
    p.add_argument("model", help="a .gfz file written by graphflow.save")
    p.add_argument("--input", action="append", default=[], metavar="NAME=VALUE",
                   help="an input: NAME=file.npy, NAME=file.npz or NAME=<JSON>; repeatable")
    p.add_argument("--outputs", metavar="A,B", help="only compute these outputs")
    p.add_argument("--output", metavar="PATH", help="write the outputs to this .npz file "
                   "instead of printing them")
    p.add_argument("--text", action="store_true", help="text in and out: an input given as a "
                   "JSON string is fed as its Unicode code points (int32), and integer vector "
                   "outputs are printed as the characters of those code points")
    p.set_defaults(run=cmd_run)

    p = sub.add_parser("optimize", help="optimize a graph file for its signature and save it")
    p.add_argument("model", help="a .gfz file written by graphflow.save")
    p.add_argument("-o", required=True, metavar="PATH", help="where to write the optimized graph")
    p.add_argument("--report", action="store_true", help="print what each pass did")
    p.add_argument("--passes", metavar="A,B", help="run only these passes (default: all)")
    p.set_defaults(run=cmd_optimize)
    return parser


def main(argv=None, out=None):
    """Entry point of the `graphflow` console script; returns the exit status."""
    args = _parser().parse_args(argv)
    out = out or sys.stdout
    try:
        args.run(args, out)
    except (CommandError, GraphFormatError, OpError, OSError, KeyError, ValueError,
            TypeError) as exc:
        message = exc.args[0] if isinstance(exc, KeyError) and exc.args else exc
        print(f"graphflow {args.command}: error: {message}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
