"""numpy kernels for CTCLoss and CTCGreedyDecoder (graphflow/ops/ctc_ops.py); the beam search is
`ctc_beam_search.py`.

CTCLoss runs Graves' forward-backward recursion in log space over the extended label sequences
l' (a blank before each label and one at the end), vectorised over the batch and the states of
l'; only the loop over time is sequential. Sequences of different lengths and label sequences of
different lengths share the arrays: states past an entry's l' have log probability -inf, and its
backward variables start at its own last frame. The softmax is taken in the logits' dtype and its
logarithm in float64, as TF takes log(softmax) of a softmax in the logits' precision; the
recursions run in float64. TF's rules are kept: a label >= num_classes - 1 ends the sequence (a
real label after it is an error), empty label sequences are errors, a label sequence longer than
its input is an error unless `ignore_longer_outputs_than_inputs` (then its loss and gradient are
zero, as for a zero-length input), and an entry with no valid path has loss inf and the softmax
as its gradient."""

import numpy as np

from graphflow.framework.errors import CheckFailedError
from graphflow.kernels.cpu import cpu_kernel


def _error(message):
    return CheckFailedError(message)


def check_logits_and_lengths(inputs, seq_len):
    """TF's checks of a CTC op's logits [max_time, batch, classes] and sequence lengths."""
    if inputs.ndim != 3:
        raise _error("inputs is not a 3-Tensor")
    if seq_len.ndim != 1:
        raise _error("sequence_length is not a vector")
    max_time, batch = inputs.shape[:2]
    if seq_len.shape[0] != batch:
        raise _error(f"len(sequence_length) != batch_size.  len(sequence_length):  "
                     f"{seq_len.shape[0]} batch_size: {batch}")
    if (seq_len < 0).any():
        raise _error(f"seq_len({int(np.argmax(seq_len < 0))}) < 0")
    if (seq_len > max_time).any():
        raise _error(f"sequence_length({int(np.argmax(seq_len > max_time))}) <= {max_time}")


def _label_sequences(indices, values, batch):
    """The raw label sequence of each batch entry from the SparseTensor's [batch, position]
    indices (in row-major order, as TF requires) and values."""
    if indices.ndim != 2 or indices.shape[1] != 2:
        raise _error(f"labels_indices must be a matrix of [batch, position] rows, got shape "
                     f"{list(indices.shape)}")
    if values.ndim != 1:
        raise _error("labels_values is not a vector")
    if indices.shape[0] != values.shape[0]:
        raise _error(f"labels_indices and labels_values must contain the same number of rows, "
                     f"but saw shapes: {list(indices.shape)} vs. {list(values.shape)}")
    if (indices < 0).any():
        bad = int(np.argmax((indices < 0).any(axis=1)))
        raise _error(f"label SparseTensor is not valid: indices[{bad}] = "
                     f"{indices[bad].tolist()} is out of bounds")
    if len(indices) > 1:
        b, p = indices[:, 0], indices[:, 1]
        steps = (b[1:] > b[:-1]) | ((b[1:] == b[:-1]) & (p[1:] > p[:-1]))
        if not steps.all():
            bad = int(np.argmax(~steps)) + 1
            what = "repeated" if (indices[bad] == indices[bad - 1]).all() else "out of order"
            raise _error(f"label SparseTensor is not valid: indices[{bad}] = "
                         f"{indices[bad].tolist()} is {what}")
    if len(indices) and indices[:, 0].max() >= batch:
        raise _error(f"labels batch index must be between 0 and {batch} but saw: "
                     f"{int(indices[:, 0].max())}")
    bounds = np.searchsorted(indices[:, 0], np.arange(batch + 1))
    return [values[bounds[b]:bounds[b + 1]].astype(np.int64) for b in range(batch)]


def _target(label, b, num_classes, collapse):
    """TF's label preprocessing: optional collapse of repeats; the sequence ends at the first
    null label (>= num_classes - 1)."""
    if collapse and len(label) > 1:
        label = label[np.concatenate([[True], label[1:] != label[:-1]])]
    null = label >= num_classes - 1
    if null.any():
        end = int(np.argmax(null))
        if not null[end:].all():
            raise _error(f"Saw a non-null label (index >= num_classes - 1) following a null "
                         f"label, batch: {b} num_classes: {num_classes} labels: "
                         f"{','.join(map(str, label))} labels seen so far: "
                         f"{','.join(map(str, label[:end]))}")
        label = label[:end]
    if (label < 0).any():
        raise _error(f"All labels must be nonnegative integers, batch: {b} labels: "
                     f"{','.join(map(str, label))}")
    return label


def _lse3(a, b, c):
    return np.logaddexp(np.logaddexp(a, b), c)


def _shift(x, k, fill):
    """x moved k states to the right (k > 0) or left (k < 0) along the last axis."""
    out = np.full_like(x, fill)
    if k > 0:
        out[..., k:] = x[..., :-k]
    else:
        out[..., :k] = x[..., -k:]
    return out


def ctc_loss(inputs, indices, values, seq_len, collapse, merge, ignore_longer):
    """(loss [batch], gradient [max_time, batch, classes]) in the dtype of `inputs`."""
    check_logits_and_lengths(inputs, seq_len)
    max_time, batch, classes = inputs.shape
    if batch == 0:
        raise _error("batch_size must not be 0")
    blank = classes - 1
    raw = _label_sequences(np.asarray(indices), np.asarray(values), batch)
    targets = []
    for b, label in enumerate(raw):
        if len(label) == 0:
            raise _error(f"Labels length is zero in batch {b}")
        target = _target(label, b, classes, collapse)
        if not ignore_longer and len(label) > seq_len[b]:
            raise _error(f"Not enough time for target transition sequence (required: {len(label)},"
                         f" available: {int(seq_len[b])}){b}You can turn this error into a warning "
                         f"by using the flag ignore_longer_outputs_than_inputs")
        targets.append(target)
    skipped = np.array([seq_len[b] == 0 or (ignore_longer and len(raw[b]) > seq_len[b])
                        for b in range(batch)])

    # softmax in the logits' dtype, its logarithm in float64 (log 0 = -inf where it underflowed)
    shifted = inputs - inputs.max(axis=2, keepdims=True)
    y = np.exp(shifted)
    y /= y.sum(axis=2, keepdims=True)
    with np.errstate(divide="ignore"):
        log_y = np.log(y.astype(np.float64))

    # extended label sequences l' [batch, states], padded with blanks whose emission is -inf
    sizes = np.array([2 * len(t) + 1 for t in targets])
    states = int(sizes.max())
    lprime = np.full((batch, states), blank, dtype=np.int64)
    for b, t in enumerate(targets):
        lprime[b, 1:2 * len(t):2] = t
    live = np.arange(states)[None, :] < sizes[:, None]
    emit = log_y[:, np.arange(batch)[:, None], lprime]          # [time, batch, states]
    emit = np.where(live[None], emit, -np.inf)
    is_blank = lprime == blank
    stay = np.ones_like(is_blank) if merge else is_blank    # u -> u allowed
    same_as_two_back = np.zeros_like(is_blank)
    same_as_two_back[:, 2:] = lprime[:, 2:] == lprime[:, :-2]
    skip = ~is_blank & (np.arange(states) >= 2)[None, :]
    if merge:
        skip &= ~same_as_two_back
    neg_inf = -np.inf

    # forward variables, all kept for the gradient: alpha[t, b, u]
    alpha = np.full((max_time, batch, states), neg_inf)
    if max_time:
        alpha[0, :, :2] = emit[0, :, :2]
    with np.errstate(invalid="ignore"):
        for t in range(1, max_time):
            prev = alpha[t - 1]
            alpha[t] = emit[t] + _lse3(np.where(stay, prev, neg_inf), _shift(prev, 1, neg_inf),
                                       np.where(skip, _shift(prev, 2, neg_inf), neg_inf))
        # backward variables, from each entry's last frame, and the state posteriors
        gamma = np.zeros((max_time, batch, states))
        last = seq_len.astype(np.int64) - 1
        beta_start = np.where((np.arange(states)[None, :] >= sizes[:, None] - 2) & live, 0.0,
                              neg_inf)
        skip_from = _shift(skip, -2, False)          # u -> u + 2 allowed
        beta = np.full((batch, states), neg_inf)
        log_p = np.full(batch, neg_inf)
        for t in range(max_time - 1, -1, -1):
            if t + 1 < max_time:
                nxt = beta + emit[t + 1]
                rec = _lse3(np.where(stay, nxt, neg_inf), _shift(nxt, -1, neg_inf),
                            np.where(skip_from, _shift(nxt, -2, neg_inf), neg_inf))
            else:
                rec = np.full((batch, states), neg_inf)
            beta = np.where((t == last)[:, None], beta_start,
                            np.where((t < last)[:, None], rec, neg_inf))
            both = alpha[t] + beta
            if t == 0:
                log_p = np.logaddexp.reduce(both, axis=1)
            gamma[t] = both
    found = np.isfinite(log_p)
    gamma = np.exp(gamma - np.where(found, log_p, 0.0)[None, :, None])
    # posterior of each class: the sum over the states of l' that emit it
    onehot = np.zeros((batch, states, classes))
    np.put_along_axis(onehot, lprime[:, :, None], 1.0, axis=2)
    onehot *= live[:, :, None]
    posterior = np.einsum("tbu,buc->tbc", gamma, onehot)
    grad = y.astype(np.float64) - np.where(found[None, :, None], posterior, 0.0)
    frames = np.arange(max_time)[:, None] < seq_len[None, :]
    grad = np.where(frames[:, :, None] & ~skipped[None, :, None], grad, 0.0)
    loss = np.where(skipped, 0.0, -log_p)
    return loss.astype(inputs.dtype), grad.astype(inputs.dtype)


@cpu_kernel("CTCLoss")
def _ctc_loss(node):
    collapse = node.attrs.get("preprocess_collapse_repeated", False)
    merge = node.attrs.get("ctc_merge_repeated", True)
    ignore = node.attrs.get("ignore_longer_outputs_than_inputs", False)

    def ctc_loss_kernel(inputs, indices, values, seq_len):
        return ctc_loss(np.asarray(inputs), indices, values, np.asarray(seq_len), collapse,
                        merge, ignore)
    return ctc_loss_kernel


def sparse_paths(paths, batch):
    """(indices [n, 2], values [n], dense_shape [2]) int64 arrays of one decoded path per
    batch entry (`paths`, lists of classes)."""
    lengths = np.array([len(p) for p in paths], dtype=np.int64)
    total = int(lengths.sum())
    rows = np.repeat(np.arange(batch, dtype=np.int64), lengths)
    starts = np.repeat(np.cumsum(lengths) - lengths, lengths)
    cols = np.arange(total, dtype=np.int64) - starts
    values = np.array([c for p in paths for c in p], dtype=np.int64)
    shape = np.array([batch, lengths.max() if batch else 0], dtype=np.int64)
    return np.stack([rows, cols], axis=1).reshape(total, 2), values, shape


@cpu_kernel("CTCGreedyDecoder")
def _ctc_greedy_decoder(node):
    merge = node.attrs.get("merge_repeated", True)
    blank_attr = node.attrs.get("blank_index", -1)

    def ctc_greedy_decoder(inputs, seq_len):
        inputs, seq_len = np.asarray(inputs), np.asarray(seq_len)
        check_logits_and_lengths(inputs, seq_len)
        max_time, batch, classes = inputs.shape
        if inputs.size == 0:
            raise _error("inputs must not be empty")
        blank = classes + blank_attr if blank_attr < 0 else blank_attr
        if not 0 <= blank < classes:
            raise _error(f"blank_index expected to be between {-classes} and {classes - 1} but "
                         f"was {blank_attr}")
        best = inputs.argmax(axis=2)                              # [time, batch], first maximum
        top = np.take_along_axis(inputs, best[:, :, None], axis=2)[:, :, 0]
        frames = np.arange(max_time)[:, None] < seq_len[None, :]
        # TF adds -max frame by frame, in the logits' dtype
        neg_sum = np.zeros(batch, dtype=inputs.dtype)
        for t in range(max_time):
            neg_sum = np.where(frames[t], neg_sum - top[t], neg_sum)
        previous = np.vstack([np.full((1, batch), -1), best[:-1]])
        keep = frames & (best != blank)
        if merge:
            keep &= best != previous
        paths = [best[keep[:, b], b].tolist() for b in range(batch)]
        ix, values, shape = sparse_paths(paths, batch)
        return ix, values, shape, neg_sum.reshape(batch, 1)
    return ctc_greedy_decoder
