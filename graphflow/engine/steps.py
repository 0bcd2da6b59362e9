"""The plan's step list: the schedule, placed and memory-planned, as plain data (no code).

A compiled plan is a list of `Step` records, one per op that runs a kernel, in schedule order. Each
names where its values live as *slots*, `(kind, n)` pairs:
  - `("f", n)`: the n-th fed value;     - `("v", n)`: a value a step produced;
  - `("c", n)`: a copy of a value made on another device (host <-> GPU) before a step reads it;
  - `("u", n)`: a constant uploaded to the device once, when the plan is built (`Plan.constants`).
A step records its op (and the user's op it stands for), device, kernel, the slots of its
arguments and outputs (None: an output nobody reads), the copies to make before it, the slots to
drop after it (values at their last use, with their copies) and the slot its kernel writes into
(`out`, from the memory plan), and whether it may keep its input as a variable's value (`adopt`,
from the memory plan). The emitter (`engine/emit.py`) turns this into a function; errors
map back to ops through these records.
"""

from graphflow.engine import memory_plan as memory_planning
from graphflow.framework import dtypes


class Schedule:
    """The step order and what follows from it: `ops` (topological), each tensor's last reader
    (`last_use`: index in `ops`), and the fed and fetched tensors."""

    __slots__ = ("ops", "fed", "fetched", "last_use")

    def __init__(self, ops, feed_tensors, fetch_elements):
        self.ops = ops
        self.fed = set(feed_tensors)
        self.fetched = {e for e in fetch_elements if hasattr(e, "value_index")}
        self.last_use = memory_planning.last_uses(ops)

    def used(self, t):
        """Whether a run needs tensor `t` (it is read or fetched, and not fed)."""
        return t not in self.fed and (t in self.last_use or t in self.fetched)

    def dies_at(self, t, index):
        """Whether the plan drops `t` right after step `index` (its last reader)."""
        return self.last_use.get(t) == index and t not in self.fetched and t not in self.fed


class CopyStep:
    """Make `target` (a copy slot) from `source`: to the device (`to_device`) or to the host."""

    __slots__ = ("source", "target", "to_device")

    def __init__(self, source, target, to_device):
        self.source, self.target, self.to_device = source, target, to_device


class Step:
    """One kernel call of a plan (see the module docstring)."""

    __slots__ = ("op", "origin", "device", "kernel", "args", "outputs", "copies", "frees", "out",
                 "adopt")

    def __init__(self, op, origin, device, kernel, args, outputs, copies, frees, out, adopt=False):
        self.op, self.origin, self.device, self.kernel = op, origin, device, kernel
        self.args, self.outputs, self.copies = args, outputs, copies
        self.frees, self.out, self.adopt = frees, out, adopt


class Fetch:
    """A fetch: the slot of its value (None: a fetched op), whether it comes back from the device
    at the return (`to_host`), and whether it is a tf.string scalar returned as bytes."""

    __slots__ = ("slot", "to_host", "string_scalar")

    def __init__(self, slot, to_host=False, string_scalar=False):
        self.slot, self.to_host, self.string_scalar = slot, to_host, string_scalar


class StepList:
    """The whole compiled plan as data: `steps`, `num_feeds`, `fetches` ([Fetch]) and `constants`
    {("u", n) slot: device value}."""

    __slots__ = ("steps", "num_feeds", "fetches", "constants")

    def __init__(self, steps, num_feeds, fetches, constants):
        self.steps, self.num_feeds = steps, num_feeds
        self.fetches, self.constants = fetches, constants


def build_steps(schedule, kernel_of, placement, inplace, feed_tensors, fetch_elements, origin,
                adopt=frozenset()):
    """The StepList of `schedule`: `kernel_of` {op: kernel} holds every op that runs a kernel,
    `placement` the devices and copies, `inplace` {op: input position} the memory plan's reuse,
    `origin` maps plan ops to the user's ops, `adopt` the updates that keep their input."""
    slot_of = {t: ("f", i) for i, t in enumerate(feed_tensors)}
    copy_slot = {}     # Copy -> its slot
    copies_of = {}     # value slot -> the slots of its copies (dropped with it)
    constants = {}
    steps = []
    values = 0
    used, last_use = schedule.used, schedule.last_use
    fed, fetched = schedule.fed, schedule.fetched
    input_copies, uploads, device_of = placement.input_copies, placement.uploads, placement.device_of
    for index, op in enumerate(schedule.ops):
        kernel = kernel_of.get(op)
        if kernel is None:
            continue
        outputs = []
        for t in op.outputs:
            if used(t):
                slot = slot_of[t] = ("v", values)
                values += 1
                outputs.append(slot)
            else:
                outputs.append(None)
        args, copies = [], []
        for t, copy in zip(op.inputs, input_copies(op)):
            if copy is None:
                args.append(slot_of[t])
                continue
            slot = copy_slot.get(copy)
            if slot is None:
                upload = uploads.get(copy)
                if upload is not None:
                    slot = ("u", len(constants))
                    constants[slot] = upload
                else:
                    slot = ("c", len(copy_slot) - len(constants))
                    copies.append(CopyStep(slot_of[t], slot, copy.target != "host"))
                    copies_of.setdefault(slot_of[t], []).append(slot)
                copy_slot[copy] = slot
            args.append(slot)
        pos = inplace.get(op)
        out = None if pos is None else args[pos]
        # the inputs read for the last time here (each once), with their copies
        frees = []
        for t in op.inputs:
            if last_use[t] == index and t not in fetched and t not in fed:
                slot = slot_of[t]
                if slot not in frees:
                    frees.append(slot)
        if copies_of:
            frees += [c for v in frees for c in copies_of.get(v, ())]
        steps.append(Step(op, origin.get(op, op), device_of[op], kernel, tuple(args),
                          tuple(outputs), copies, frees, out, op in adopt))
    fetches = []
    for e in fetch_elements:
        if not hasattr(e, "value_index"):
            fetches.append(Fetch(None))
            continue
        scalar = e.dtype == dtypes.string and e.shape.ndims in (0, None)  # TF1: bytes
        copy = placement.fetch_copy(e)
        if copy is None:
            fetches.append(Fetch(slot_of[e], False, scalar))
        elif copy in copy_slot:
            fetches.append(Fetch(copy_slot[copy], False, scalar))
        else:
            fetches.append(Fetch(slot_of[e], True, scalar))
    return StepList(steps, len(feed_tensors), fetches, constants)
