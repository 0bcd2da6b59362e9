"""The gradient of LRN, from ordinary ops: with N = bias + alpha * sqr_sum,
d input_j = grad_j * N_j^-beta - 2 * alpha * beta * input_j * W(grad * input * N^(-beta - 1))_j,
W being the same depth-window sum (the window is symmetric)."""

from graphflow.ops import lrn_ops, math_ops
from graphflow.ops.registry import register_gradient


@register_gradient("LRN")
def _lrn_grad(op, grad):
    x = op.inputs[0]
    a = op.attrs
    r, bias, alpha, beta = a["depth_radius"], a["bias"], a["alpha"], a["beta"]
    norm = bias + alpha * lrn_ops.windowed_sum(math_ops.square(x), r)
    scaled = math_ops.pow(norm, -beta)
    inner = lrn_ops.windowed_sum(grad * x * scaled / norm, r)
    return grad * scaled - (2.0 * alpha * beta) * x * inner
