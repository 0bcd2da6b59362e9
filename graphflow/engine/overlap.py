"""Inter-op overlap, a stage of every plan compile (after the steps are built, before code is
emitted): which pairs of independent steps may run at the same time.

A plan runs its steps one after another, and each heavy kernel shares its own work out over the
intra-op pool (`kernels/cpu/intra_op.py`). That leaves the cores part idle wherever a kernel splits
badly on its own (a convolution's gradients cut into image blocks, skinny matrix products), while
the backward pass is full of independent heavy steps: a layer's input gradient and its filter
gradient both read only the incoming gradient and the layer's inputs. TF1 runs such ops at the same
time on its inter-op threads; graphflow runs them as *pairs*: the emitted function calls

    v7, v8 = _beside(k5, (v2, c0, v4), k6, (v3, c1, v4))

and `_beside` (`run_pair` below) runs the first kernel on the calling thread and the second on an
intra-op pool worker, which joins the first one's work once its own is done; on a busy machine, where
no worker starts in time, the calling thread runs both one after the other. Each kernel computes
exactly what it computes alone (the kernels that may overlap give the same bits on any number of
threads), so a plan's results do not depend on the pairing.

A step `i` is paired with a later step `j` (the first such one, at most `WINDOW` steps later) when:
  - both run on the CPU with no copies before them, and both kernels are flagged `overlaps` (pure,
    thread-safe, splitting their work over the pool: convolutions and their gradients, matrix
    products);
  - neither writes into an input's buffer (`out`) nor keeps its input (`adopt`);
  - `j` reads no value made by `i` or by a step between them other than a constant (moving `j` up
    to `i` keeps every value it reads), and no step between them is stateful (no variable changes
    under `j`'s reads);
  - no step is in two pairs.
The constants `j` reads that sit between the two (a gradient's Shape constant) move up before
`i`. `j`'s values then exist from `i` on; `j`'s frees stay where they were. Whether a pair really runs
side by side is decided per run (`run_pair`): only when both kernels do at least
`MIN_OVERLAP_WORK` multiply-adds (each flagged kernel says how many: `overlap_work(*args)`); below
that, waking a worker and splitting both calls costs more than it saves.

`ConfigProto(inter_op_parallelism_threads=1)` (or a session on one intra-op thread) pairs nothing.
"""

from graphflow.engine import placement
from graphflow.kernels.cpu import intra_op
from graphflow.ops import registry

# How many steps after `i` a partner is looked for: a layer's two gradients sit a few steps apart
# (the fused bias gradient and the activation's gradient come between), further apart the moved
# step's outputs would live longer for little gain.
WINDOW = 4
# Pairs of kernels doing fewer multiply-adds than this (either one) run one after the other: a
# pool worker takes ~0.1 ms to wake, and the products of the 784-512-512-10 MLP at batch 256 (6.7e7
# multiply-adds, ~0.35 ms on two threads) measured slower side by side; the CIFAR-shaped step's
# dense layer gradients (1.3e8) and convolution gradients (3e8-6e8) gain.
MIN_OVERLAP_WORK = 1 << 27


def pair_steps(steps, overlap_threads):
    """(steps, pairs): `steps` (a StepList's steps) with the constants a pair's second step reads
    moved up before the pair, and the [(i, j)] index pairs of that list that may run at the same
    time (module docstring); no pairs when `overlap_threads` < 2."""
    if overlap_threads < 2:
        return steps, []
    made = {}  # slot -> index of the step that produced it
    for index, step in enumerate(steps):
        for slot in step.outputs:
            if slot is not None:
                made[slot] = index
    order, hoisted, partner = [], set(), {}
    for i, first in enumerate(steps):
        if i in hoisted:
            continue
        found = None
        if i not in partner and _may_overlap(first):  # (a pair's second step stays where it is)
            found = _partner(steps, made, i, partner)
        if found is not None:
            j, constants = found
            order.extend(constants)
            hoisted.update(constants)
            partner[i], partner[j] = j, i
        order.append(i)
    position = {old: new for new, old in enumerate(order)}
    pairs = [(position[i], position[j]) for i, j in partner.items() if i < j]
    return [steps[i] for i in order], sorted(pairs)


def _partner(steps, made, i, partner):
    """(j, [constant steps j reads that run between i and j]) for the step that may run beside
    step i, or None."""
    for j in range(i + 1, min(len(steps), i + 1 + WINDOW)):
        second = steps[j]
        if j in partner or _stateful(second):
            return None
        if not _may_overlap(second):
            continue
        between = [made[slot] for slot in second.args if made.get(slot, -1) >= i]
        if all(i < k and _constant(steps[k]) for k in between):
            return j, sorted(set(between))
    return None


def _constant(step):
    """A step that reads nothing and only produces its value (a Const): it may run earlier."""
    return not step.args and not step.copies and registry.lookup(step.op.type).constant


def _may_overlap(step):
    return (getattr(step.kernel, "overlaps", False) and hasattr(step.kernel, "overlap_work")
            and not placement.is_gpu(step.device)
            and not step.copies and step.out is None and not step.adopt)


def _stateful(step):
    return registry.lookup(step.op.type).stateful


def _work(kernel, args):
    """The kernel's multiply-adds on these arguments (0 where it cannot tell: the shapes are
    wrong, and the kernel will say so itself)."""
    try:
        return kernel.overlap_work(*args)
    except Exception:
        return 0


def _side_by_side(first, first_work, second, second_work):
    """(first(), second()) with the larger call (by multiply-adds) on this thread; one after the
    other when either is small or this thread is itself a pool worker."""
    if min(first_work, second_work) < MIN_OVERLAP_WORK or intra_op.in_worker():
        return _one_after_other(first, second)
    if second_work > first_work:
        b, a = intra_op.POOL.run_beside(second, first, positions=(1, 0))
        return a, b
    return intra_op.POOL.run_beside(first, second)


def _one_after_other(first, second):
    try:
        a = first()
    except Exception as exc:
        intra_op.mark_pair_position(exc, 0)
        raise
    try:
        b = second()
    except Exception as exc:
        intra_op.mark_pair_position(exc, 1)
        raise
    return a, b


def run_pair(first, first_args, second, second_args):
    """(first(*first_args), second(*second_args)), side by side where it pays (`_side_by_side`).
    A failure is raised marked with which of the two failed (`intra_op.pair_position`)."""
    return _side_by_side(lambda: first(*first_args), _work(first, first_args),
                         lambda: second(*second_args), _work(second, second_args))


def run_pair_traced(records, i, first, first_args, j, second, second_args, clock):
    """`run_pair` appending each call's (step, start, end) to `records` (the traced plan)."""
    def timed(index, kernel, args):
        def call():
            start = clock()
            out = kernel(*args)
            records.append((index, start, clock()))
            return out
        return call
    return _side_by_side(timed(i, first, first_args), _work(first, first_args),
                         timed(j, second, second_args), _work(second, second_args))
