"""Connectionist Temporal Classification (CTC), TF1's `tf.nn.ctc_loss`, `tf.nn.ctc_greedy_decoder`
and `tf.nn.ctc_beam_search_decoder`: the ops CTCLoss, CTCGreedyDecoder and CTCBeamSearchDecoder,
with TensorFlow's inputs, outputs and attrs.

The logits are time-major, [max_time, batch, num_classes], and the blank is the last class
(num_classes - 1). CTCLoss applies the softmax itself and returns, beside each sequence's negative
log probability, its gradient with respect to the logits (softmax - posterior of the class), which
its gradient rule (`ctc_grad.py`) scales by the loss's incoming gradient, as TF does. The decoders
return their paths as SparseTensors ([batch, position] indices, int64 classes)."""

from graphflow.framework import dtypes
from graphflow.framework.tensor_shape import TensorShape
from graphflow.ops import array_ops, math_ops
from graphflow.ops.core_ops import convert_to_tensor
from graphflow.ops.registry import define, make_op, require_dtype
from graphflow.ops.sparse_tensor import SparseTensor

_FLOATS = (dtypes.float32, dtypes.float64)


def _rank(t, rank, what):
    if t.shape.ndims is not None and t.shape.ndims != rank:
        raise ValueError(f"{what} must have rank {rank}, got shape {t.shape}")
    return t.shape if t.shape.ndims is not None else TensorShape([None] * rank)


def _merge(a, b, what):
    """One dimension from two that must agree (None: unknown)."""
    if a is not None and b is not None and a != b:
        raise ValueError(what.format(a, b))
    return a if a is not None else b


def _batch(logits_shape, seq_len_shape):
    """The batch size both the logits (dimension 1) and sequence_length give, merged."""
    return _merge(logits_shape.dims[1], seq_len_shape.dims[0],
                  "the logits' batch dimension ({}) and sequence_length's size ({}) differ")


def _logits_and_lengths(inputs, seq_len):
    require_dtype(inputs, _FLOATS, "inputs")
    require_dtype(seq_len, (dtypes.int32,), "sequence_length")
    shape = _rank(inputs, 3, "inputs (the logits, [max_time, batch_size, num_classes])")
    return shape, _batch(shape, _rank(seq_len, 1, "sequence_length"))


# ---------------------------------------------------------------- CTCLoss
def _ctc_loss_infer(inputs, attrs):
    logits, indices, values, seq_len = inputs
    require_dtype(indices, (dtypes.int64,), "labels_indices")
    require_dtype(values, (dtypes.int32,), "labels_values")
    shape, batch = _logits_and_lengths(logits, seq_len)
    ind = _rank(indices, 2, "labels_indices")
    val = _rank(values, 1, "labels_values")
    if ind.dims[1] is not None and ind.dims[1] != 2:
        raise ValueError(f"labels_indices must be [num_labels, 2] (batch, position), got {ind}")
    _merge(ind.dims[0], val.dims[0], "labels_indices ({} rows) and labels_values ({} values) hold "
           "different numbers of labels")
    return [(logits.dtype, TensorShape([batch])),
            (logits.dtype, TensorShape([shape.dims[0], batch, shape.dims[2]]))]


define("CTCLoss", _ctc_loss_infer, retains_inputs=False,
       attrs="preprocess_collapse_repeated:bool ctc_merge_repeated:bool "
             "ignore_longer_outputs_than_inputs:bool",
       onnx={"none": "ONNX has no CTC loss operator"})


def ctc_loss(labels, inputs=None, sequence_length=None, preprocess_collapse_repeated=False,
             ctc_merge_repeated=True, ignore_longer_outputs_than_inputs=False, time_major=True,
             logits=None):
    """`tf.nn.ctc_loss` (TF1): the negative log probability of each batch entry's label sequence
    (`labels`, an int32 SparseTensor with [batch, position] indices) under the logits `inputs`
    ([max_time, batch, num_classes], or [batch, max_time, num_classes] when `time_major` is
    False), summed over all alignments; the blank is class num_classes - 1. Returns [batch]."""
    if not isinstance(labels, SparseTensor):
        raise TypeError(f"Expected argument `labels` to be a SparseTensor. Received "
                        f"labels={labels} of type: {type(labels).__name__}")
    if inputs is not None and logits is not None:
        raise ValueError("Cannot specify both 'logits' and 'inputs'")
    inputs = convert_to_tensor(logits if inputs is None else inputs, name="logits")
    if not time_major:
        inputs = array_ops.transpose(inputs, [1, 0, 2])  # (B,T,N) => (T,B,N)
    orig_dtype = inputs.dtype
    if orig_dtype == dtypes.float16:
        inputs = math_ops.cast(inputs, dtypes.float32)
    seq_len = convert_to_tensor(sequence_length, dtype=dtypes.int32, name="sequence_length")
    op = make_op("CTCLoss", (inputs, labels.indices, labels.values, seq_len),
                 {"preprocess_collapse_repeated": bool(preprocess_collapse_repeated),
                  "ctc_merge_repeated": bool(ctc_merge_repeated),
                  "ignore_longer_outputs_than_inputs": bool(ignore_longer_outputs_than_inputs)},
                 name="CTCLoss")
    loss = op.outputs[0]
    return math_ops.cast(loss, orig_dtype) if orig_dtype == dtypes.float16 else loss


# ---------------------------------------------------------------- decoders
def _decoded_specs(paths):
    return ([(dtypes.int64, TensorShape([None, 2]))] * paths
            + [(dtypes.int64, TensorShape([None]))] * paths
            + [(dtypes.int64, TensorShape([2]))] * paths)


def _greedy_infer(inputs, attrs):
    logits, seq_len = inputs
    _, batch = _logits_and_lengths(logits, seq_len)
    return _decoded_specs(1) + [(logits.dtype, TensorShape([batch, 1]))]


def _beam_infer(inputs, attrs):
    logits, seq_len = inputs
    _, batch = _logits_and_lengths(logits, seq_len)
    width, paths = attrs["beam_width"], attrs["top_paths"]
    if width < 1 or paths < 1:
        raise ValueError(f"beam_width ({width}) and top_paths ({paths}) must be >= 1")
    if paths > width:
        raise ValueError(f"top_paths ({paths}) must be <= beam_width ({width})")
    return _decoded_specs(paths) + [(logits.dtype, TensorShape([batch, paths]))]


_NO_ONNX_DECODER = {"none": "ONNX has no CTC decoder operator (a data-dependent search whose "
                            "outputs are sparse)"}
define("CTCGreedyDecoder", _greedy_infer, attrs="merge_repeated:bool blank_index:int",
       value_dependent_shape=True, retains_inputs=False, onnx=_NO_ONNX_DECODER)
define("CTCBeamSearchDecoder", _beam_infer,
       attrs="beam_width:int top_paths:int merge_repeated:bool",
       value_dependent_shape=True, retains_inputs=False, onnx=_NO_ONNX_DECODER)


def _decoder_inputs(inputs, sequence_length):
    inputs = convert_to_tensor(inputs, name="inputs")
    return inputs, convert_to_tensor(sequence_length, dtype=dtypes.int32, name="sequence_length")


def ctc_greedy_decoder(inputs, sequence_length, merge_repeated=True, blank_index=None):
    """`tf.nn.ctc_greedy_decoder`: the most likely class of each frame, repeats merged (when
    `merge_repeated`) and blanks dropped. Returns ([decoded SparseTensor], neg_sum_logits): the
    negative sum over the frames of each frame's greatest logit, [batch, 1]."""
    inputs, seq_len = _decoder_inputs(inputs, sequence_length)
    op = make_op("CTCGreedyDecoder", (inputs, seq_len),
                 {"merge_repeated": bool(merge_repeated),
                  "blank_index": -1 if blank_index is None else int(blank_index)},
                 name="CTCGreedyDecoder")
    ix, val, shape, log_probabilities = op.outputs
    return [SparseTensor(ix, val, shape)], log_probabilities


def ctc_beam_search_decoder(inputs, sequence_length, beam_width=100, top_paths=1,
                            merge_repeated=True):
    """`tf.nn.ctc_beam_search_decoder` (TF1): the `top_paths` most likely label sequences found by
    a beam search of `beam_width` prefixes. Returns ([SparseTensor] * top_paths,
    log_probabilities [batch, top_paths]): each path's log probability under the frames'
    softmax, summed over the alignments the search kept."""
    inputs, seq_len = _decoder_inputs(inputs, sequence_length)
    paths = int(top_paths)
    op = make_op("CTCBeamSearchDecoder", (inputs, seq_len),
                 {"beam_width": int(beam_width), "top_paths": paths,
                  "merge_repeated": bool(merge_repeated)}, name="CTCBeamSearchDecoder")
    outs = op.outputs
    decoded = [SparseTensor(outs[j], outs[paths + j], outs[2 * paths + j]) for j in range(paths)]
    return decoded, outs[3 * paths]


__all__ = ["ctc_loss", "ctc_greedy_decoder", "ctc_beam_search_decoder"]
