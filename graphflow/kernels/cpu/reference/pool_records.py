"""Which MaxPool outputs carry recorded argmaxes (`jit_pool.py`): a training step's MaxPool and
MaxPoolGrad run on the same arrays, and once a gradient kernel has been handed a MaxPool output
(`recall`), that MaxPool records, per output element, where the gradient goes, in the same pass as
the maximum; the gradient then scatters through those positions instead of searching every window.
An output's entry leaves with the output (a weak reference). Until a kernel that recalls
(MaxPoolGrad, FusedMaxPoolGradReluMask) has been built in the process (`recalling`), MaxPool keeps
no entries: inference asks for none, and an entry costs a weak reference per call.
"""

import weakref


class Recorder:
    """One MaxPool node's link to the gradients of its outputs: whether to record argmaxes."""

    __slots__ = ("wanted",)

    def __init__(self):
        self.wanted = False


# id(output) -> (weak reference to the output, its input's shape, its argmax array or None,
# the Recorder of the node that produced it); an entry leaves when its output is freed
_outputs = {}


def _forget(key):
    return lambda _ref: _outputs.pop(key, None)


def remember(out, x_shape, arg, recorder):
    key = id(out)
    _outputs[key] = (weakref.ref(out, _forget(key)), x_shape, arg, recorder)


# Whether a kernel that recalls argmaxes (MaxPoolGrad, FusedMaxPoolGradReluMask) has been built in
# this process: until one is, MaxPool keeps no record of its outputs (inference: none would ask).
recalling = False


def recalling_kernel_built():
    global recalling
    recalling = True


def recall(y, x_shape):
    """The argmax recorded with MaxPool output `y` (for an input of `x_shape`), else None; asks
    that MaxPool to record them from its next run on."""
    entry = _outputs.get(id(y))
    if entry is None or entry[0]() is not y or entry[1] != x_shape:
        return None
    entry[3].wanted = True
    return entry[2]
