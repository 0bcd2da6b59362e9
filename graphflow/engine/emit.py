"""The last stage of a plan compile, the only one that writes code: a `StepList` (engine/steps.py)
becomes one straight-line Python function

    def plan_7(feeds):
        f0, f1, = feeds
        v0 = k0(f0, f1)          # k<i>: the kernel of step i
        c0 = _to_device(v0)      # a copy before the step that reads it
        v1 = k1(c0, out=...)     # out=: the buffer the memory plan lets it write into
        _ = k2(v1, adopt=True)   # a variable update keeping v1 itself (the plan's own array)
        del v0, c0               # dropped right after the last reader
        return (v1,)

so a run does no graph work, no dict lookups and no per-step bookkeeping. The traced variant
(`traced=True`) also reads a clock around every kernel call. `Generated.step_at` maps a line of
the function back to its step index, from which errors name the op.
"""

import numpy as np

_PREFIX = {"f": "f", "v": "v", "c": "c", "u": "_const"}


def slot_name(slot):
    """The local name of a slot in the emitted function (feeds are also read from `feeds`)."""
    kind, n = slot
    return f"{_PREFIX[kind]}{n}"


class Generated:
    """An emitted plan function: `fn`, its `source`, its code's file name, and `step_at`
    {line number: step index} of every kernel call and copy."""

    __slots__ = ("fn", "source", "filename", "step_at")

    def __init__(self, fn, source, filename, step_at):
        self.fn, self.source, self.filename, self.step_at = fn, source, filename, step_at


def emit(step_list, name, to_device=None, to_host=None, traced=False, clock=None):
    """Generate, compile and return the Generated function of `step_list` called `name`
    (`fn(feeds)`, or `fn(feeds, records)` appending (step, start, end) when traced)."""
    lines = [f"def {name}(feeds{', _records' if traced else ''}):"]
    if step_list.num_feeds:
        lines.append("    " + ", ".join(f"f{i}" for i in range(step_list.num_feeds)) + ", = feeds")
    namespace = {"_to_device": to_device, "_to_host": to_host, "_clock": clock,
                 "_string_scalar": _string_scalar}
    for slot, value in step_list.constants.items():
        namespace[slot_name(slot)] = value
    step_at = {}
    for i, step in enumerate(step_list.steps):
        for copy in step.copies:
            fn = "_to_device" if copy.to_device else "_to_host"
            lines.append(f"    {slot_name(copy.target)} = {fn}({slot_name(copy.source)})")
            step_at[len(lines)] = i
        kname = f"k{i}"
        namespace[kname] = step.kernel
        args = [slot_name(s) for s in step.args]
        if step.out is not None:
            args.append(f"out={slot_name(step.out)}")
        if step.adopt:
            args.append("adopt=True")
        call = f"{kname}({', '.join(args)})"
        outs = step.outputs
        if traced:
            lines.append("    _t = _clock()")
        if not outs:
            lines.append(f"    {call}")
        else:
            names = ", ".join("_" if s is None else slot_name(s) for s in outs)
            lines.append(f"    {names}{',' if len(outs) > 1 else ''} = {call}")
        step_at[len(lines)] = i
        if traced:
            lines.append(f"    _records.append(({i}, _t, _clock()))")
        if step.frees:
            lines.append(f"    del {', '.join(slot_name(s) for s in step.frees)}")
    returns = []
    for fetch in step_list.fetches:
        if fetch.slot is None:
            returns.append("None")
            continue
        expr = slot_name(fetch.slot)
        if fetch.to_host:
            expr = f"_to_host({expr})"
        if fetch.string_scalar:
            expr = f"_string_scalar({expr})"
        returns.append(expr)
    lines.append(f"    return ({', '.join(returns)}{',' if len(returns) == 1 else ''})")
    source = "\n".join(lines) + "\n"
    code = compile(source, f"<graphflow {name}>", "exec")
    exec(code, namespace)  # our own generated code, never data from a file
    return Generated(namespace[name], source, code.co_filename, step_at)


def _string_scalar(value):
    """A fetched tf.string value as TF1 returns it: `bytes` for a scalar, else the object array."""
    return value[()] if isinstance(value, np.ndarray) and value.ndim == 0 else value
