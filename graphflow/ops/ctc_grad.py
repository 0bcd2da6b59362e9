"""The gradient rule of CTCLoss (`ctc_ops.py`): the op's own `gradient` output, d loss / d logits,
scaled per batch entry by the loss's incoming gradient, as TF does. The gradient output has no
gradient of its own (TF stops it with PreventGradient): asking for a second derivative of the
loss raises, naming the op, rather than returning a wrong zero."""

from graphflow.ops import shape_ops
from graphflow.ops.registry import no_gradient, register_gradient


def _used(grad):
    """False for a missing gradient or the zeros the engine passes for an unused output."""
    return grad is not None and grad.op.type != "ZerosLike"


@register_gradient("CTCLoss")
def _ctc_loss_grad(op, grad_loss, grad_gradient):
    if _used(grad_gradient):
        raise LookupError(f"Gradient explicitly disabled. Reason: Currently there is no way to take "
                          f"the second derivative of ctc_loss due to the fused implementation's "
                          f"interaction with tf.gradients() (op {op.name})")
    if not _used(grad_loss):
        return None, None, None, None
    # grad_loss [batch] -> [1, batch, 1], times the op's gradient [max_time, batch, classes]
    scale = shape_ops.expand_dims(shape_ops.expand_dims(grad_loss, 0), 2)
    return scale * op.outputs[1], None, None, None


no_gradient("CTCGreedyDecoder", "CTCBeamSearchDecoder")
