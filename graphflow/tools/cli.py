"""The `graphflow` command: look at, run and optimize saved graph files without any model code.

    graphflow inspect model.gfz [--dot graph.dot] [--svg graph.svg] [--all | --outputs A,B]
                                [--brief]
    graphflow run model.gfz --input x=batch.npy [--input y='[1, 2]'] [--output out.npz|out.npy]
                                  [--top K | --raw] [--text]
                                  [--allow-io]  (run ops that read or write files, talk to
                                  other processes or call Python: docs/security.md)
    graphflow optimize model.gfz -o fast.gfz [--report] [--passes constant_folding,cse]
    graphflow export-onnx model.gfz model.onnx [--opset 17]
    graphflow run model.onnx --input x=batch.npy      (ONNX files run like graph files)
    graphflow profile model.gfz --input x=batch.npy [--runs 10] [--top 20] [--trace trace.json]
    graphflow run export_dir --input x=batch.npy [--tag-set serve] [--signature serving_default]
    graphflow run frozen.pb --input x=batch.npy [--outputs probs]
                                  (TensorFlow's SavedModel directories and GraphDef files: see
                                   graphflow/tools/cli_tensorflow.py)

Errors about files, inputs or options are reported in one line on stderr (`graphflow <cmd>: error:
...`) with exit status 2, as usage errors are; text that came from a file is printed with its
control characters escaped (`cli_text.printable`); the files the command reads and writes obey the
rules of `cli_io` (regular files only, never overwriting an input). When its standard output is
closed early (`graphflow inspect m.gfz | head`), the command stops quietly with status 141, as a
program killed by SIGPIPE reports in a shell.
"""

import argparse
import contextlib
import os
import sys

import graphflow
from graphflow.engine import tracing
from graphflow.fileformat import io_policy
from graphflow.fileformat.serialization import load, save
from graphflow.fileformat.timeline import Timeline
from graphflow.framework.graph import Tensor
from graphflow.ops import registry
from graphflow.tools import cli_io, cli_picture, cli_profile, cli_run_output, viz
from graphflow.tools.cli_io import CommandError
from graphflow.tools.cli_text import printable, printable_lines

BROKEN_PIPE_STATUS = 128 + 13  # what a shell reports for a program killed by SIGPIPE


def _shape_text(shape):
    if shape is None:
        return ""
    if shape.dims is None:
        return "<unknown rank>"
    return "[" + ", ".join("?" if d is None else str(d) for d in shape.dims) + "]"


def _load(path, args=None, out=None):
    try:
        return _open_model(path, args, out, getattr(args, "allow_io", False))
    except io_policy.IOPolicyError as exc:
        raise CommandError(exc.explain(io_policy.HOW_CLI)) from None


def _open_model(path, args, out, allow_io):
    if not os.path.lexists(path):
        raise CommandError(f"{path}: no such file")
    if os.path.isdir(path) or path.lower().endswith((".pb", ".pbtxt")):
        from graphflow.tools import cli_tensorflow  # noqa: PLC0415 (TensorFlow's files only)
        if os.path.isdir(path) and not cli_tensorflow.is_tensorflow_path(path):
            raise CommandError(f"{path}: is a directory, not a graph file or a TensorFlow "
                               "SavedModel directory (saved_model.pb)")
        outputs = None
        if path.lower().endswith((".pb", ".pbtxt")) and getattr(args, "outputs", None):
            outputs = [n.strip() for n in args.outputs.split(",") if n.strip()]
        return cli_tensorflow.open_model(path, getattr(args, "tag_set", "serve"),
                                         getattr(args, "signature", "serving_default"),
                                         outputs, out, allow_io,
                                         getattr(args, "initialize", True))
    if path.lower().endswith(".onnx"):
        return cli_io.load_onnx(path, allow_io=allow_io)
    cli_io.check_model_file(path)
    return load(path, allow_io=allow_io)


# ------------------------------------------------------------------------------------ inspect
def cmd_inspect(args, out):
    files = cli_io.check_outputs([("--dot", args.dot), ("--svg", args.svg)], [args.model])
    model = _load(args.model, args, out)
    graph = model.graph
    values = model.session.variable_values()
    params = sum(v.shape.num_elements() or 0 for v in model.variables)
    restored = sum(1 for v in model.variables if v.op.attrs["shared_name"] in values)
    kind = model.format_version if isinstance(model.format_version, str) else \
        f"graphflow graph format {model.format_version}"
    print(printable(f"{args.model}: {kind} ({model.producer or 'unknown producer'}), "
                    f"{graph.num_ops()} ops"), file=out)
    for side, entries in (("inputs", model.inputs), ("outputs", model.outputs)):
        print(f"{side}:", file=out)
        if not entries:
            print("  (none)", file=out)
        for name, element in entries.items():
            if isinstance(element, Tensor):
                print("  " + printable(f"{name}: {element.dtype.name} "
                                       f"{_shape_text(element.shape)}  ({element.name})"), file=out)
            else:
                print("  " + printable(f"{name}: operation {element.name}"), file=out)
    print(f"variables: {len(model.variables)} ({params} parameters, {restored} with saved "
          "values)", file=out)
    reaching = io_policy.reaching_ops(graph.get_operations())
    if reaching:
        print(f"ops reaching outside the process ({len(reaching)}; running them needs "
              "--allow-io):", file=out)
        for op_type, name, kind in reaching:
            print("  " + printable(f"{op_type} '{name}' ({kind})"), file=out)
    if not args.brief:
        _print_kernel_choices(model, args.batch, out)
        print(file=out)
        print(viz.summary(graph, max_ops=args.max_ops), file=out)
    label = os.path.basename(os.path.normpath(args.model))
    if args.dot:
        source, caption = cli_picture.dot_source(model, args, label)
        with cli_io.open_output(files["--dot"]) as f:
            f.write(source.encode("utf-8"))
        print(printable(f"wrote {args.dot}: {caption}"), file=out)
    if args.svg:
        picture, caption = cli_picture.svg(model, args, label)
        with cli_io.open_output(files["--svg"]) as f:
            f.write(picture.encode("utf-8"))
        print(printable(f"wrote {args.svg}: {caption}"), file=out)


def _print_kernel_choices(model, batch, out):
    """The CPU implementation a plan of the saved outputs chooses for each op type, after the
    optimization passes, for inputs whose unknown dimensions are `batch` (a session makes its
    plans for the fed shapes, so its choices are made on static shapes too)."""
    from graphflow.optimizer_passes import kernel_choices, optimize_for_plan, resolve_passes
    from graphflow.optimizer_passes.stats import count_kernel_choices
    outputs = [t for t in model.outputs.values() if isinstance(t, Tensor)]
    if not outputs:
        return
    inputs = [t for t in model.inputs.values() if isinstance(t, Tensor)]
    shapes = {t: tuple(batch if d is None else d for d in t.shape.dims)
              for t in inputs if t.shape.dims is not None}
    plan_graph = optimize_for_plan(outputs, inputs, resolve_passes(None), shapes=shapes)
    counts = count_kernel_choices(kernel_choices(plan_graph.graph))
    print(file=out)
    print(f"CPU kernels a run of the outputs chooses, inputs' unknown dimensions = {batch} "
          "(op type: implementation x ops):", file=out)
    for (op_type, impl), count in counts.items():
        print("  " + printable(f"{op_type}: {impl} x{count}"), file=out)


# ------------------------------------------------------------------------------------ run
def _input_files(specs):
    """The paths among `--input NAME=VALUE` values (the files the command reads)."""
    return [v for v in (spec.partition("=")[2] for spec in specs) if v and os.path.lexists(v)]


def cmd_run(args, out):
    files = cli_io.check_outputs([("--output", args.output)],
                                 [args.model, *_input_files(args.input)])
    model = _load(args.model, args, out)
    feeds = dict(cli_io.parse_input(spec, model.inputs, args.text) for spec in args.input)
    feeds = cli_io.check_feeds(feeds, model.inputs)
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
    cli_run_output.check_destination(args.output, names or list(model.outputs))
    results = model.run(feeds, outputs=names)
    if args.output:
        cli_run_output.write(results, files["--output"], out)
    else:
        cli_run_output.show(results, args, out)


# ------------------------------------------------------------------------------------ profile
def cmd_profile(args, out):
    files = cli_io.check_outputs([("--trace", args.trace)],
                                 [args.model, *_input_files(args.input)])
    model = _load(args.model, args, out)
    feeds = cli_io.check_feeds(dict(cli_io.parse_input(spec, model.inputs)
                                    for spec in args.input), model.inputs)
    missing = [n for n in model.inputs if n not in feeds]
    if missing:
        raise CommandError(f"missing --input for {missing}; the graph's inputs are "
                           f"{sorted(model.inputs)}")
    if args.runs < 1:
        raise CommandError(f"--runs must be at least 1, got {args.runs}")
    fetches = dict(model.outputs)
    feed_dict = {model.inputs[k]: v for k, v in feeds.items()}
    options = tracing.RunOptions(trace_level=tracing.RunOptions.FULL_TRACE)
    model.session.run(fetches, feed_dict, options=options, run_metadata=tracing.RunMetadata())
    runs = []
    for _ in range(args.runs):
        meta = tracing.RunMetadata()
        model.session.run(fetches, feed_dict, options=options, run_metadata=meta)
        runs.append(meta.step_stats)
    cli_profile.report(args.model, runs, args.top, out)
    if args.trace:
        with cli_io.open_output(files["--trace"]) as f:
            f.write(Timeline(runs[-1]).generate_chrome_trace_format().encode("utf-8"))
        print(printable(f"wrote the last run's Chrome trace to {args.trace} (open it in "
                        "ui.perfetto.dev or chrome://tracing)"), file=out)


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
    files = cli_io.check_outputs([("-o", args.o)], [args.model])
    optimize = _optimizer()
    model = _load(args.model, args)
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
    kept = {op.attrs["shared_name"] for op in graph.get_operations()
            if registry.lookup(op.type).variable}
    with cli_io.output_path(files["-o"]) as path:
        save(path, inputs=dict(zip(input_names, feeds)), outputs=dict(zip(output_names, fetches)),
             graph=graph, variable_values={k: v for k, v in values.items() if k in kept})
    print(printable(f"{args.model}: {model.graph.num_ops()} ops -> {args.o}: {graph.num_ops()} "
                    "ops"), file=out)
    if args.report:
        print(printable_lines(report), file=out)


# ------------------------------------------------------------------------------------ export-onnx
def cmd_export_onnx(args, out):
    files = cli_io.check_outputs([("export-onnx's output", args.out)], [args.model])
    from graphflow.interop import onnx as gf_onnx  # noqa: PLC0415 (onnx is optional)
    model = _load(args.model, args)
    tensors = {k: v for k, v in model.outputs.items() if isinstance(v, Tensor)}
    if not tensors:
        raise CommandError(f"{args.model} has no tensor outputs in its signature: nothing to export")
    with cli_io.output_path(files["export-onnx's output"]) as path:
        gf_onnx.export(tensors, path, inputs=model.inputs, session=model.session,
                       opset=args.opset)
    print(printable(f"{args.model} -> {args.out} (ONNX opset {args.opset}; inputs "
                    f"{sorted(model.inputs)}, outputs {sorted(tensors)})"), file=out)


# ------------------------------------------------------------------------------------ main
def _count(minimum):
    """An argparse type: an int >= minimum; anything else is a usage error (exit status 2)."""
    def parse(text):
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"must be at least {minimum}, got {value}")
        return value
    parse.__name__ = f"int>={minimum}"
    return parse


def _tensorflow_options(p):
    p.add_argument("--tag-set", default="serve", metavar="A,B",
                   help="a TensorFlow SavedModel directory: the tags of the meta graph to use "
                        "(default: serve)")
    p.add_argument("--signature", default="serving_default", metavar="KEY",
                   help="a TensorFlow SavedModel directory: the signature whose inputs and "
                        "outputs to use (default: serving_default)")


def _allow_io_option(p):
    p.add_argument("--allow-io", action="store_true",
                   help="run the graph's ops that read or write files, talk to other processes "
                        "or call Python (ReadFile, WriteFile, readers, PyFunc, collectives); "
                        "refused by default: only for a file you trust (docs/security.md)")


def _parser():
    parser = argparse.ArgumentParser(prog="graphflow", description="Inspect, run and optimize "
                                     "saved graphflow graphs (.gfz files).")
    parser.add_argument("--version", action="version", version=f"graphflow {graphflow.__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    p = sub.add_parser("inspect", help="print a graph file's signatures, variables and ops")
    p.add_argument("model", help="a .gfz file written by graphflow.save, a TensorFlow SavedModel "
                   "directory or a GraphDef (.pb, .pbtxt)")
    p.add_argument("--dot", metavar="PATH", help="also write the picture as Graphviz DOT source")
    p.add_argument("--svg", metavar="PATH", help="also draw the graph as SVG (needs Graphviz): "
                   "what the saved outputs need from the saved inputs at inference (no "
                   "initializers, no input pipeline), loops drawn with their bodies")
    p.add_argument("--all", action="store_true", help="draw every op of the file")
    p.add_argument("--outputs", metavar="A,B", help="draw what these outputs need (of a "
                   "GraphDef: the op or tensor names to take as outputs)")
    p.add_argument("--brief", action="store_true", help="leave out the table of ops")
    p.add_argument("--max-ops", type=_count(0), default=None, metavar="N",
                   help="list at most N ops in the table")
    _tensorflow_options(p)
    p.add_argument("--batch", type=_count(1), default=1, metavar="N",
                   help="the size taken for inputs' unknown dimensions when listing the kernels a "
                        "run chooses (default 1)")
    # inspect, optimize and export-onnx run none of the graph's ops, a SavedModel's init op
    # included: they import every op, and inspect lists those reaching outside the process
    p.set_defaults(run=cmd_inspect, allow_io=True, initialize=False)

    p = sub.add_parser("run", help="run a graph file on inputs and print or save its outputs")
    p.add_argument("model", help="a .gfz file written by graphflow.save, an .onnx file, a "
                   "TensorFlow SavedModel directory or a GraphDef (.pb, .pbtxt)")
    p.add_argument("--input", action="append", default=[], metavar="NAME=VALUE",
                   help="an input: NAME=file.npy, NAME=file.npz or NAME=<JSON>; repeatable")
    p.add_argument("--outputs", metavar="A,B", help="only compute these outputs (of a GraphDef: "
                   "the op or tensor names to fetch; default: the ops no other op uses)")
    p.add_argument("--output", metavar="PATH", help="write the outputs instead of printing "
                   "them: PATH.npy holds the one output computed, any other PATH is an .npz "
                   "archive of every output by name")
    shown = p.add_mutually_exclusive_group()
    shown.add_argument("--top", type=_count(1), default=None, metavar="K",
                       help="print the K largest values of each row of 2-D outputs, as "
                            "'class: value' (default: the top 3 classes of an output whose rows "
                            "are probabilities, summing to 1)")
    shown.add_argument("--raw", action="store_true", help="print every output as its array")
    p.add_argument("--text", action="store_true", help="text in and out: an input given as a "
                   "JSON string is fed as its Unicode code points (int32), and integer vector "
                   "outputs are printed as the characters of those code points")
    p.add_argument("--jit", action="store_true",
                   help="use the compiled (numba) loops too: a process that runs a graph once "
                        "spends longer loading numba (~0.5 s) than a small model's run, so the "
                        "command leaves them out unless asked")
    _tensorflow_options(p)
    _allow_io_option(p)
    p.set_defaults(run=cmd_run)

    p = sub.add_parser("optimize", help="optimize a graph file for its signature and save it")
    p.add_argument("model", help="a .gfz file written by graphflow.save")
    p.add_argument("-o", required=True, metavar="PATH", help="where to write the optimized graph")
    p.add_argument("--report", action="store_true", help="print what each pass did")
    p.add_argument("--passes", metavar="A,B", help="run only these passes (default: all)")
    p.set_defaults(run=cmd_optimize, allow_io=True, initialize=False)

    p = sub.add_parser("export-onnx", help="write a graph file's inference graph as an ONNX model")
    p.add_argument("model", help="a .gfz file written by graphflow.save")
    p.add_argument("out", help="the .onnx file to write")
    p.add_argument("--opset", type=_count(1), default=17, help="ONNX opset version (default 17)")
    p.set_defaults(run=cmd_export_onnx, allow_io=True, initialize=False)

    p = sub.add_parser("profile", help="run a graph file with tracing and print the top ops by "
                       "time (median, mean and total per op; the median time of a run)")
    p.add_argument("model", help="a .gfz file written by graphflow.save")
    p.add_argument("--input", action="append", default=[], metavar="NAME=VALUE",
                   help="an input: NAME=file.npy, NAME=file.npz or NAME=<JSON>; repeatable")
    p.add_argument("--runs", type=_count(1), default=10, metavar="N",
                   help="traced runs to aggregate after one warm-up run (default 10)")
    p.add_argument("--top", type=_count(1), default=20, metavar="K", help="ops to list (default 20)")
    p.add_argument("--trace", metavar="PATH", help="also write the last run as a Chrome trace")
    _tensorflow_options(p)
    _allow_io_option(p)
    p.set_defaults(run=cmd_profile)
    return parser


def main(argv=None, out=None):
    """Entry point of the `graphflow` console script; returns the exit status."""
    args = _parser().parse_args(argv)
    if out is None:
        out = sys.stdout
        with contextlib.suppress(AttributeError, ValueError):  # never an encoding error
            out.reconfigure(errors="backslashreplace")
    if argv is None and args.command == "run" and not args.jit:
        # the command's own process runs the graph once: numba's start would not pay for itself
        # (GRAPHFLOW_NO_JIT set by the user wins; set only for the `graphflow run` program)
        os.environ.setdefault("GRAPHFLOW_NO_JIT", "1")
    try:
        args.run(args, out)
        out.flush()
    except BrokenPipeError:
        _quiet_stdout(out)
        return BROKEN_PIPE_STATUS
    except cli_io.ERRORS as exc:
        print(f"graphflow {args.command}: error: {printable(exc)}", file=sys.stderr)
        return 2
    return 0


def _quiet_stdout(out):
    """The reader of our output has gone: what is still buffered goes nowhere, silently (also
    when the interpreter flushes standard output at exit)."""
    if out is sys.stdout:
        with contextlib.suppress(OSError, ValueError):
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
            os.close(devnull)


if __name__ == "__main__":
    sys.exit(main())
