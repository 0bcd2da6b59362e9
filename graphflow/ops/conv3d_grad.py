"""Gradient rules for the 3-D convolution and pooling ops (`conv3d_ops.py`): the rules of their
2-D counterparts (`nn_grad.register_convolution_gradients`, `register_pooling_gradients`) with the
3-D ops in their places.
"""

from graphflow.ops import conv3d_ops
from graphflow.ops.nn_grad import register_convolution_gradients, register_pooling_gradients

register_convolution_gradients(("Conv3D", "Conv3DBackpropInputV2", "Conv3DBackpropFilterV2"),
                               conv3d_ops.conv3d, conv3d_ops.conv3d_backprop_input_v2,
                               conv3d_ops.conv3d_backprop_filter_v2)

register_pooling_gradients(
    {"MaxPool": "MaxPool3D", "MaxPoolGrad": "MaxPool3DGrad", "MaxPoolGradGrad": "MaxPool3DGradGrad",
     "AvgPool": "AvgPool3D", "AvgPoolGrad": "AvgPool3DGrad"},
    {"MaxPoolGrad": conv3d_ops.max_pool3d_grad,
     "MaxPoolGradGrad": conv3d_ops.max_pool3d_grad_grad, "AvgPool": conv3d_ops.avg_pool3d,
     "AvgPoolGrad": conv3d_ops.avg_pool3d_grad})
