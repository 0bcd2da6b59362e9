"""`graphflow inspect --dot/--svg`: which ops a picture of a saved model shows, and its caption.

By default the picture is what the saved outputs need at inference, cut at the saved inputs
(`viz_select.select_ops`): the model's own ops, the variables and constants they read, and the
inputs, without the variables' initializers, an input pipeline behind a fed
`placeholder_with_default`, or anything else the file holds that no output needs from its inputs.
`--outputs A,B` draws what those outputs need; `--all` draws every op. Loops and conditionals are
drawn with their functions inside them, and the layout is the dense one made for screens
(`compact_layout`), so a small CNN's picture is one readable column.
"""

from graphflow.framework.graph import Tensor
from graphflow.tools import viz
from graphflow.tools.cli_io import CommandError


def output_names(text, outputs):
    """The names of an `--outputs A,B` option, each a signature output of the model."""
    names = [n.strip() for n in text.split(",") if n.strip()]
    unknown = [n for n in names if n not in outputs]
    if unknown or not names:
        raise CommandError(f"--outputs: unknown output(s) {unknown}; the graph's outputs are "
                           f"{sorted(outputs)}")
    return names


def view(model, args, label):
    """(fetches, inputs, caption, note) of the picture the options ask for (fetches and inputs
    None: every op of the graph); the caption goes under the picture, the note to the terminal."""
    total = model.graph.num_ops()
    chosen = model.outputs
    if getattr(args, "outputs", None) and not _outputs_chose_the_graph(args):
        chosen = {n: model.outputs[n] for n in output_names(args.outputs, model.outputs)}
    if args.all or not chosen:
        why = "" if args.all else " (the file names no outputs)"
        caption = f"{label}: all {total} ops"
        return None, None, caption, caption + why
    fetches = list(chosen.values())
    inputs = [t for t in model.inputs.values() if isinstance(t, Tensor)]
    shown = len(viz.select_ops(model.graph, fetches, inputs))
    what = ", ".join(chosen)
    source = f" from {', '.join(model.inputs)}" if model.inputs else ""
    caption = f"{label}: {what}{source} at inference, {shown} of {total} ops"
    return fetches, inputs, caption, (f"{caption} (initializers and ops no output needs left "
                                      "out; --all draws every op)")


def _outputs_chose_the_graph(args):
    """A GraphDef file has no signature: its `--outputs` named what to load as outputs."""
    return args.model.lower().endswith((".pb", ".pbtxt"))


def dot_source(model, args, label):
    """(DOT source of the picture, what it shows in a line)."""
    fetches, inputs, caption, note = view(model, args, label)
    return viz.to_dot(model.graph, fetches=fetches, inputs=inputs, caption=caption,
                      compact=True), note


def svg(model, args, label):
    """(SVG text of the picture, what it shows in a line); a missing Graphviz is a
    CommandError."""
    fetches, inputs, caption, note = view(model, args, label)
    try:
        return viz.render_svg(model.graph, fetches=fetches, inputs=inputs, caption=caption,
                              compact=True), note
    except (ImportError, RuntimeError) as exc:
        raise CommandError(str(exc)) from None


__all__ = ["output_names", "view", "dot_source", "svg"]
