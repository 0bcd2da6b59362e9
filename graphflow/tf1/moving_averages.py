"""`tf.train.ExponentialMovingAverage`: shadow variables that track an exponential moving average
of variables (or tensors), updated by assign ops, and the name map that restores them.

`apply` creates one non-trainable shadow variable per value, named 'var/ExponentialMovingAverage'
as in TF1 (a variable's shadow starts at the variable's initial value, a tensor's at zero), and
returns one op that updates them all: shadow -= (shadow - value) * (1 - decay).
"""

from graphflow.framework import dtypes
from graphflow.framework.graph import GraphKeys, Tensor, get_default_graph
from graphflow.ops import math_ops, shape_ops
from graphflow.ops.core_ops import convert_to_tensor, group
from graphflow.ops.state_ops import Variable, global_variables, trainable_variables

_FLOATS = (dtypes.float16, dtypes.float32, dtypes.float64)


def moving_average_variables(scope=None):
    """`tf.moving_average_variables`: the variables an `ExponentialMovingAverage` averages."""
    return get_default_graph().get_collection(GraphKeys.MOVING_AVERAGE_VARIABLES, scope)


def assign_moving_average(variable, value, decay, zero_debias=True, name=None):
    """variable -= (variable - value) * (1 - decay): the update of a moving average (TF1's
    `moving_averages.assign_moving_average`; zero debiasing is not implemented)."""
    if zero_debias:
        raise NotImplementedError("graphflow's assign_moving_average has no zero debiasing: "
                                  "pass zero_debias=False")
    graph = get_default_graph()
    with graph.name_scope(name or "AssignMovingAvg"):
        decay = convert_to_tensor(decay)
        if decay.dtype != variable.dtype:
            decay = math_ops.cast(decay, variable.dtype)
        # fresh reads: made inside the caller's control dependencies, they see its updates
        value = value.read_value() if isinstance(value, Variable) else convert_to_tensor(value)
        delta = (variable.read_value() - value) * (1 - decay)
        return variable.assign_sub(delta)


class ExponentialMovingAverage:
    """Maintains moving averages: `apply(var_list)` creates the shadow variables and returns the
    op updating them with `decay` (or min(decay, (1 + n) / (10 + n)) with `num_updates` n)."""

    def __init__(self, decay, num_updates=None, zero_debias=False,
                 name="ExponentialMovingAverage"):
        self._decay = decay
        self._num_updates = num_updates
        self._zero_debias = zero_debias
        self._name = name
        self._averages = {}

    @property
    def name(self):
        return self._name

    def apply(self, var_list=None):
        """Create shadow variables for `var_list` (default: the trainable variables) and return an
        op that updates all of them."""
        if var_list is None:
            var_list = trainable_variables()
        var_list = list(var_list)
        graph = get_default_graph()
        for var in var_list:
            if var.dtype.base_dtype not in _FLOATS:
                raise TypeError(f"The variables must be half, float, or double: {var.name}")
            if var in self._averages:
                raise ValueError(f"Moving average already computed for: {var.name}")
        for var in var_list:  # shadows start outside the caller's control dependencies (as TF1)
            with graph.name_scope(None), graph.control_dependencies(None):
                if isinstance(var, Variable):
                    initial = var.initialized_value()
                    graph.add_to_collection(GraphKeys.MOVING_AVERAGE_VARIABLES, var)
                elif isinstance(var, Tensor):
                    if self._zero_debias:
                        raise NotImplementedError("graphflow's ExponentialMovingAverage has no "
                                                  "zero debiasing of tensors")
                    initial = (shape_ops.zeros(var.shape.as_list(), dtype=var.dtype)
                               if var.shape.is_fully_defined() else shape_ops.zeros_like(var))
                else:
                    raise TypeError(f"apply takes variables or tensors, got {var!r}")
                self._averages[var] = Variable(initial, trainable=False, dtype=var.dtype,
                                               name=f"{var.op.name}/{self._name}")
        with graph.name_scope(self._name) as scope:
            decay = convert_to_tensor(self._decay, dtype=dtypes.float32, name="decay")
            if self._num_updates is not None:
                n = self._num_updates
                n = math_ops.cast(n.read_value() if isinstance(n, Variable) else convert_to_tensor(n),
                                  dtypes.float32)
                decay = math_ops.minimum(decay, (1.0 + n) / (10.0 + n))
            updates = [assign_moving_average(self._averages[var], var, decay, zero_debias=False)
                       for var in var_list]
            return group(*updates, name=scope)

    def average(self, var):
        """The shadow variable of `var`, or None if `apply` did not average it."""
        return self._averages.get(var)

    def average_name(self, var):
        """The name of `var`'s shadow variable ('w/ExponentialMovingAverage'), also before
        `apply`: the name its checkpoint entry has."""
        if var in self._averages:
            return self._averages[var].op.name
        return f"{var.op.name}/{self._name}"

    def variables_to_restore(self, moving_avg_variables=None):
        """A name -> variable map for a `Saver` that loads each average into its variable (and every
        other global variable under its own name)."""
        if moving_avg_variables is None:
            moving_avg_variables = trainable_variables() + moving_average_variables()
        averaged = list(dict.fromkeys(moving_avg_variables))
        name_map = {self.average_name(v): v for v in averaged}
        for v in global_variables():
            if v not in averaged and v.op.name not in name_map:
                name_map[v.op.name] = v
        return name_map


__all__ = ["ExponentialMovingAverage"]
