"""`tf.contrib.rnn`'s cells beyond tf.nn.rnn_cell: `LSTMBlockCell`, `LSTMBlockFusedCell`,
`GRUBlockCell`, `GRUBlockCellV2`, `LayerNormBasicLSTMCell` and `IntersectionRNNCell`, with TF1's
arguments, defaults and variable names.

The block cells are TF1's fused kernels of the same math as `LSTMCell` / `GRUCell` (TF's
LSTMBlockCell and GRUBlockCell ops); here they are those cells' ops under the block cells' names:
LSTMBlockCell ('lstm_cell/kernel', 'bias', peepholes 'w_i_diag', 'w_f_diag', 'w_o_diag';
`cell_clip` <= 0 or None: no clipping), GRUBlockCell ('gru_cell/w_ru', 'b_ru', 'w_c', 'b_c'),
GRUBlockCellV2 (GRUCell's 'gates/...', 'candidate/...'). `LSTMBlockFusedCell` runs a whole
time-major sequence at once, `cell(inputs [time, batch, depth], initial_state, dtype,
sequence_length) -> (outputs, LSTMStateTuple)`, as one `while_loop` of LSTMBlockCell steps.

`LayerNormBasicLSTMCell` (Ba et al. 2016) normalizes each gate's pre-activation and the new
memory cell over their units ('input', 'transform', 'forget', 'output', 'state' scopes, each with
'gamma' (from `norm_gain`) and 'beta' (from `norm_shift`); epsilon 1e-12 as TF1's layer_norm), and
applies recurrent dropout to the candidate (Semeniuta et al. 2016) with `dropout_keep_prob`.
"""

from graphflow.ops import math_ops, nn_ops, shape_ops, slice_ops
from graphflow.ops.core_ops import convert_to_tensor
from graphflow.tf1.init_ops import constant_initializer, zeros_initializer
from graphflow.tf1.rnn import dynamic_rnn
from graphflow.tf1.rnn_cell import GRUCell, LSTMCell, LSTMStateTuple, RNNCell, _input_depth
from graphflow.tf1.variable_scope import get_variable_scope, variable_scope


def _clip(cell_clip):
    return cell_clip if cell_clip is not None and cell_clip > 0 else None


class LSTMBlockCell(LSTMCell):
    """TF1's LSTMBlockCell: BasicLSTMCell's math (gates i, j, f, o from one matmul of [x, h];
    `forget_bias` added to f) with optional peepholes (`use_peephole`) and `cell_clip`."""

    def __init__(self, num_units, forget_bias=1.0, cell_clip=None, use_peephole=False,
                 dtype=None, reuse=None, name="lstm_cell"):
        super().__init__(num_units, use_peepholes=use_peephole, cell_clip=_clip(cell_clip),
                         forget_bias=forget_bias, reuse=reuse, name=name, dtype=dtype)


class GRUBlockCell(GRUCell):
    """TF1's GRUBlockCell: GRUCell's math with the variables 'w_ru', 'b_ru' (initialized to 1),
    'w_c', 'b_c'. `cell_size` is the older name of `num_units`."""

    def __init__(self, num_units=None, cell_size=None, reuse=None, name="gru_cell"):
        if num_units is None:
            if cell_size is None:
                raise ValueError("num_units must not be None if cell_size is None.")
            num_units = cell_size
        super().__init__(num_units, reuse=reuse, name=name)

    def build(self, inputs_shape):
        depth = _input_depth(inputs_shape, self)
        n = self._num_units
        self._gate_kernel = self.add_variable("w_ru", [depth + n, 2 * n])
        self._gate_bias = self.add_variable("b_ru", [2 * n], initializer=constant_initializer(1.0))
        self._candidate_kernel = self.add_variable("w_c", [depth + n, n])
        self._candidate_bias = self.add_variable("b_c", [n], initializer=zeros_initializer())
        self.built = True


class GRUBlockCellV2(GRUCell):
    """TF1's GRUBlockCellV2: GRUBlockCell with GRUCell's variable names ('gates/kernel',
    'gates/bias', 'candidate/kernel', 'candidate/bias')."""

    def __init__(self, num_units=None, cell_size=None, reuse=None, name="gru_cell"):
        if num_units is None:
            if cell_size is None:
                raise ValueError("num_units must not be None if cell_size is None.")
            num_units = cell_size
        super().__init__(num_units, reuse=reuse, name=name)


class LSTMBlockFusedCell:
    """An LSTM over a whole time-major sequence (`tf.contrib.rnn.LSTMBlockFusedCell`): outputs
    [time, batch, num_units] (zero past `sequence_length`) and the final LSTMStateTuple (the
    state at each sequence's last step). Variables 'lstm_fused_cell/kernel', 'bias' (and the
    peepholes), as LSTMBlockCell's."""

    def __init__(self, num_units, forget_bias=1.0, cell_clip=None, use_peephole=False,
                 reuse=None, dtype=None, name="lstm_fused_cell"):
        self._cell = LSTMBlockCell(num_units, forget_bias=forget_bias, cell_clip=cell_clip,
                                   use_peephole=use_peephole, dtype=dtype, reuse=reuse, name=name)
        self._num_units = int(num_units)

    num_units = property(lambda self: self._num_units)
    variables = property(lambda self: self._cell.variables)
    trainable_variables = trainable_weights = weights = variables

    def __call__(self, inputs, initial_state=None, dtype=None, sequence_length=None,
                 scope=None):
        """inputs: [time, batch, depth] or a list of [batch, depth] tensors (outputs alike)."""
        is_list = isinstance(inputs, (list, tuple))
        if is_list:
            inputs = shape_ops.stack([convert_to_tensor(x) for x in inputs])
        inputs = convert_to_tensor(inputs)
        if inputs.shape.ndims is not None and inputs.shape.ndims != 3:
            raise ValueError(f"LSTMBlockFusedCell: inputs must be [time, batch, depth], got shape "
                             f"{inputs.shape}")
        if initial_state is None and dtype is None:
            dtype = inputs.dtype
        if initial_state is not None:
            initial_state = LSTMStateTuple(*initial_state)
        outer = variable_scope(scope) if scope is not None else variable_scope(
            get_variable_scope(), auxiliary_name_scope=False)
        with outer as vs:
            outputs, state = dynamic_rnn(self._cell, inputs, sequence_length=sequence_length,
                                         initial_state=initial_state, dtype=dtype,
                                         time_major=True, scope=vs)
        if is_list:
            outputs = shape_ops.unstack(outputs)
        return outputs, state


_NORM_SCOPES = ("input", "transform", "forget", "output", "state")


def _layer_norm(x, gamma, beta):
    """TF1's contrib layer_norm over the last axis (epsilon 1e-12)."""
    mean = math_ops.reduce_mean(x, axis=1, keepdims=True)
    variance = math_ops.reduce_mean(math_ops.square(x - mean), axis=1, keepdims=True)
    return (x - mean) * math_ops.rsqrt(variance + 1e-12) * gamma + beta


class LayerNormBasicLSTMCell(RNNCell):
    """BasicLSTMCell with layer normalization and recurrent dropout (see the module docstring).
    Without `layer_norm` the gates get a 'bias'; with it, the normalizations' betas."""

    def __init__(self, num_units, forget_bias=1.0, input_size=None, activation=None,
                 layer_norm=True, norm_gain=1.0, norm_shift=0.0, dropout_keep_prob=1.0,
                 dropout_prob_seed=None, reuse=None):
        super().__init__(_reuse=reuse)
        self._num_units = int(num_units)
        self._activation = activation or math_ops.tanh
        self._forget_bias = forget_bias
        self._keep_prob = dropout_keep_prob
        self._seed = dropout_prob_seed
        self._layer_norm = layer_norm
        self._norm_gain = norm_gain
        self._norm_shift = norm_shift

    @property
    def state_size(self):
        return LSTMStateTuple(self._num_units, self._num_units)

    output_size = property(lambda self: self._num_units)

    def build(self, inputs_shape):
        depth = _input_depth(inputs_shape, self)
        n = self._num_units
        self._kernel = self.add_variable("kernel", [depth + n, 4 * n])
        if not self._layer_norm:
            self._bias = self.add_variable("bias", [4 * n])
        self._norms = {}
        if self._layer_norm:
            for scope in _NORM_SCOPES:
                with variable_scope(scope):
                    self._norms[scope] = (
                        self.add_variable("gamma", [n],
                                          initializer=constant_initializer(self._norm_gain)),
                        self.add_variable("beta", [n],
                                          initializer=constant_initializer(self._norm_shift)))
        self.built = True

    def _norm(self, x, scope):
        return _layer_norm(x, *self._norms[scope])

    def call(self, inputs, state):
        c, h = state
        gates = math_ops.matmul(shape_ops.concat([inputs, h], 1), self._kernel)
        if not self._layer_norm:
            gates = nn_ops.bias_add(gates, self._bias)
        i, j, f, o = slice_ops.split(gates, 4, axis=1)
        if self._layer_norm:
            i, j = self._norm(i, "input"), self._norm(j, "transform")
            f, o = self._norm(f, "forget"), self._norm(o, "output")
        g = self._activation(j)
        if not isinstance(self._keep_prob, float) or self._keep_prob < 1:
            g = nn_ops.dropout(g, keep_prob=self._keep_prob, seed=self._seed)
        new_c = c * math_ops.sigmoid(f + self._forget_bias) + math_ops.sigmoid(i) * g
        if self._layer_norm:
            new_c = self._norm(new_c, "state")
        new_h = self._activation(new_c) * math_ops.sigmoid(o)
        return new_h, LSTMStateTuple(new_c, new_h)


class IntersectionRNNCell(RNNCell):
    """The Intersection RNN (+RNN) of Collins et al. 2017: coupled gates through time
    (`state' = gh * state + (1 - gh) * tanh(h)`) and through depth (`y = gy * x + (1 - gy) *
    y_activation(y_act)`), all four from one affine map of [x, state] ('kernel', 'bias'). The
    input size must equal `num_units`, or the input is first projected ('in_projection/...')
    when `num_in_proj` is set (the first layer of a stack)."""

    def __init__(self, num_units, num_in_proj=None, initializer=None, forget_bias=1.0,
                 y_activation=None, reuse=None):
        super().__init__(_reuse=reuse)
        self._num_units = int(num_units)
        self._initializer = initializer
        self._forget_bias = forget_bias
        self._num_input_proj = num_in_proj
        self._y_activation = y_activation or math_ops.relu

    state_size = property(lambda self: self._num_units)
    output_size = property(lambda self: self._num_units)

    def build(self, inputs_shape):
        depth = _input_depth(inputs_shape, self)
        n = self._num_units
        self._projection = None
        if depth != n:
            if not self._num_input_proj:
                raise ValueError("Must have input size == output size for Intersection RNN. To "
                                 "fix, num_in_proj should be set to num_units at cell init.")
            self._projection = (
                self.add_variable("in_projection/kernel", [depth, n],
                                  initializer=self._initializer),
                self.add_variable("in_projection/bias", [n], initializer=zeros_initializer()))
        self._kernel = self.add_variable("kernel", [2 * n, 4 * n], initializer=self._initializer)
        self._bias = self.add_variable("bias", [4 * n], initializer=zeros_initializer())
        self.built = True

    def call(self, inputs, state):
        if self._projection is not None:
            inputs = nn_ops.bias_add(math_ops.matmul(inputs, self._projection[0]),
                                     self._projection[1])
        matrix = nn_ops.bias_add(math_ops.matmul(shape_ops.concat([inputs, state], 1),
                                                 self._kernel), self._bias)
        gh_act, h_act, gy_act, y_act = slice_ops.split(matrix, 4, axis=1)
        gh = math_ops.sigmoid(gh_act + self._forget_bias)
        gy = math_ops.sigmoid(gy_act + self._forget_bias)
        new_state = gh * state + (1.0 - gh) * math_ops.tanh(h_act)
        new_y = gy * inputs + (1.0 - gy) * self._y_activation(y_act)
        return new_y, new_state


__all__ = ["IntersectionRNNCell", "LSTMBlockCell", "LSTMBlockFusedCell", "GRUBlockCell", "GRUBlockCellV2",
           "LayerNormBasicLSTMCell"]
