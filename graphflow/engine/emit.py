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

A pair of steps that may run at the same time (`engine/overlap.py`) is one call at the first
step's place, `(v7), (v8, v9,) = _beside(k5, (v2, v4), k6, (v3, v4))`; the second step's line keeps
only its `del`. `Generated.pair_at` maps such a line to both step indexes.
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

    __slots__ = ("fn", "source", "filename", "step_at", "pair_at")

    def __init__(self, fn, source, filename, step_at, pair_at=None):
        self.fn, self.source, self.filename, self.step_at = fn, source, filename, step_at
        self.pair_at = pair_at or {}  # {line of a pair's call: (first step, second step)}


def _targets(outs):
    """The assignment target of a kernel call's outputs (`v3`, `v3, _,`), or None for none."""
    if not outs:
        return None
    names = ", ".join("_" if s is None else slot_name(s) for s in outs)
    return names + ("," if len(outs) > 1 else "")


def _pair_call(steps, i, j, traced):
    """The line running steps i and j side by side (`overlap.run_pair`)."""
    def packed(step):
        args = [slot_name(s) for s in step.args]
        return f"({', '.join(args)}{',' if len(args) == 1 else ''})"
    first, second = steps[i], steps[j]
    if traced:
        call = (f"_beside_traced(_records, {i}, k{i}, {packed(first)}, {j}, k{j}, "
                f"{packed(second)}, _clock)")
    else:
        call = f"_beside(k{i}, {packed(first)}, k{j}, {packed(second)})"
    targets = [_targets(first.outputs) or "_", _targets(second.outputs) or "_"]
    return f"    ({targets[0]}), ({targets[1]}) = {call}"


def emit(step_list, name, to_device=None, to_host=None, traced=False, clock=None, pairs=()):
    """Generate, compile and return the Generated function of `step_list` called `name`
    (`fn(feeds)`, or `fn(feeds, records)` appending (step, start, end) when traced); `pairs`:
    (i, j) step pairs that run side by side (`engine/overlap.py`)."""
    from graphflow.engine.overlap import run_pair, run_pair_traced
    lines = [f"def {name}(feeds{', _records' if traced else ''}):"]
    if step_list.num_feeds:
        lines.append("    " + ", ".join(f"f{i}" for i in range(step_list.num_feeds)) + ", = feeds")
    namespace = {"_to_device": to_device, "_to_host": to_host, "_clock": clock,
                 "_string_scalar": _string_scalar, "_beside": run_pair,
                 "_beside_traced": run_pair_traced}
    for slot, value in step_list.constants.items():
        namespace[slot_name(slot)] = value
    partner = {i: j for i, j in pairs}
    moved = set(partner.values())
    step_at, pair_at = {}, {}
    for i, step in enumerate(step_list.steps):
        if i in moved:  # ran at its partner's line
            namespace[f"k{i}"] = step.kernel
            if step.frees:
                lines.append(f"    del {', '.join(slot_name(s) for s in step.frees)}")
            continue
        if i in partner:
            namespace[f"k{i}"] = step.kernel
            lines.append(_pair_call(step_list.steps, i, partner[i], traced))
            step_at[len(lines)] = i
            pair_at[len(lines)] = (i, partner[i])
            if step.frees:
                lines.append(f"    del {', '.join(slot_name(s) for s in step.frees)}")
            continue
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
    return Generated(namespace[name], source, code.co_filename, step_at, pair_at)


def _string_scalar(value):
    """A fetched tf.string value as TF1 returns it: `bytes` for a scalar, else the object array."""
    return value[()] if isinstance(value, np.ndarray) and value.ndim == 0 else value
