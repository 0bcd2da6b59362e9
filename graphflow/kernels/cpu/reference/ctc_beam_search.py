"""numpy kernel for CTCBeamSearchDecoder (graphflow/ops/ctc_ops.py): TF's prefix beam search.

The search keeps a tree of label prefixes, each with the log probability of ending in a blank,
of ending in its last label, and their total, at the previous and the current frame. Each frame,
the prefixes in the beam (at most `beam_width`, kept by their current total) are extended, most
probable first, by every non-blank class; an extension joins the beam when it beats the beam's
least probable prefix, which then leaves it. Scores are log probabilities under each frame's
softmax, computed in the logits' precision as TF's are (float32 logits: float32 sums, so near
ties are decided as TF decides them), and `merge_repeated` merges equal neighbouring labels of a
path when it is read out, as TF's does. The search is sequential in time and over the beam (each
insertion changes the bar the next extension must beat), so it is a plain Python loop; the
scores of one prefix's extensions are computed as one numpy vector, and only those above the bar
(and existing extensions below it, which are dropped) are visited. Prefixes of exactly equal
probability may be ranked in another order than TF's heap ranks them."""

import heapq
import math

import numpy as np

from graphflow.framework.errors import CheckFailedError
from graphflow.kernels.cpu import cpu_kernel
from graphflow.kernels.cpu.reference.ctc_kernels import check_logits_and_lengths, sparse_paths

_NEG_INF = -math.inf


def _lse(a, b):
    """log(exp(a) + exp(b)) in the type of a and b (TF's LogSumExp, larger term first)."""
    if a == _NEG_INF:
        return b
    if b == _NEG_INF:
        return a
    return a + np.log1p(np.exp(b - a)) if a > b else b + np.log1p(np.exp(a - b))


class _Prefix:
    """A node of the prefix tree: its parent, last label, children by label, and the log
    probabilities (total, blank, label) at the previous (`old`) and current (`new`) frame."""
    __slots__ = ("parent", "label", "children", "old", "new")

    def __init__(self, parent, label):
        self.parent, self.label, self.children = parent, label, {}
        self.old = [_NEG_INF, _NEG_INF, _NEG_INF]
        self.new = [_NEG_INF, _NEG_INF, _NEG_INF]

    @property
    def active(self):
        return self.new[0] != _NEG_INF

    def reset(self):
        self.old = [_NEG_INF, _NEG_INF, _NEG_INF]
        self.new = [_NEG_INF, _NEG_INF, _NEG_INF]

    def labels(self, merge_repeated):
        out, previous, node = [], -1, self
        while node.parent is not None:
            if not merge_repeated or node.label != previous:
                out.append(node.label)
            previous, node = node.label, node.parent
        return out[::-1]


def _step(beam, x, width):
    """One frame: update the beam's prefixes, then grow their extensions. The beam is a min-heap
    of (total, arrival, prefix), so its least probable prefix is at hand."""
    top = x.max()
    # the log-softmax offset, summed class by class in x's precision as TF sums it
    norm = top + np.log(np.cumsum(np.exp(x - top))[-1])
    scores = x - norm
    blank = len(x) - 1
    branches = sorted(beam, key=lambda p: -p.new[0])   # most probable first
    for p in branches:
        p.old = list(p.new)
    for p in branches:
        if p.parent is not None:
            if p.parent.active:
                parent = p.parent.old
                previous = parent[1] if p.label == p.parent.label else parent[0]
                p.new[2] = _lse(p.new[2], previous)
            p.new[2] += scores[p.label]
        p.new[1] = p.old[0] + scores[blank]
        p.new[0] = _lse(p.new[1], p.new[2])
    heap = [(p.new[0], k, p) for k, p in enumerate(branches)]
    heapq.heapify(heap)
    arrivals = len(heap)
    for p in branches:
        total = p.old[0]
        if total == _NEG_INF or (len(heap) >= width and total <= heap[0][0]):
            continue
        grown = scores[:blank] + total
        if p.label >= 0:
            grown[p.label] = scores[p.label] + p.old[1]
        above = grown > (heap[0][0] if len(heap) >= width else _NEG_INF)
        # in label order: the extensions above the bar, and the inactive ones below it, which
        # are dropped (an extension evicted by an earlier label's is inactive at its turn)
        for label in sorted(set(np.flatnonzero(above).tolist()) | p.children.keys()):
            child = p.children.get(label)
            if not above[label]:
                if not child.active:
                    child.reset()
                continue
            if child is None:
                child = p.children[label] = _Prefix(p, label)
            elif child.active:
                continue
            value = grown[label]
            full = len(heap) >= width
            if value > _NEG_INF and (not full or value > heap[0][0]):
                child.new = [value, _NEG_INF, value]
                arrivals += 1
                if full:
                    _, _, bottom = heapq.heapreplace(heap, (value, arrivals, child))
                    bottom.new = [_NEG_INF, _NEG_INF, _NEG_INF]
                else:
                    heapq.heappush(heap, (value, arrivals, child))
            else:
                child.reset()
    return [p for _, _, p in heap]


def beam_search(logits, length, width, paths, merge_repeated):
    """The `paths` best label sequences of one batch entry ([time, classes] logits) and their
    log probabilities."""
    root = _Prefix(None, -1)
    zero = logits.dtype.type(0)
    root.new = [zero, zero, logits.dtype.type(_NEG_INF)]
    beam = [root]
    for t in range(length):
        beam = _step(beam, logits[t], width)
    if paths > width:
        raise CheckFailedError("requested more paths than the beam width.")
    if paths > len(beam):
        raise CheckFailedError("Less leaves in the beam search than requested.")
    best = sorted(beam, key=lambda p: -p.new[0])[:paths]
    return [p.labels(merge_repeated) for p in best], [p.new[0] for p in best]


@cpu_kernel("CTCBeamSearchDecoder")
def _ctc_beam_search_decoder(node):
    width, paths = node.attrs["beam_width"], node.attrs["top_paths"]
    merge = node.attrs.get("merge_repeated", True)

    def ctc_beam_search_decoder(inputs, seq_len):
        inputs, seq_len = np.asarray(inputs), np.asarray(seq_len)
        check_logits_and_lengths(inputs, seq_len)
        if inputs.size == 0:
            raise CheckFailedError("inputs must not be empty")
        batch = inputs.shape[1]
        found = [beam_search(inputs[:, b], int(seq_len[b]), width, paths, merge)
                 for b in range(batch)]
        log_probability = np.array([scores for _, scores in found], dtype=inputs.dtype)
        parts = [sparse_paths([found[b][0][j] for b in range(batch)], batch)
                 for j in range(paths)]
        return (*[p[0] for p in parts], *[p[1] for p in parts], *[p[2] for p in parts],
                log_probability.reshape(batch, paths))
    return ctc_beam_search_decoder
