"""Optimizers (TF1's `tf.train.*Optimizer`): `minimize` = `compute_gradients` + `apply_gradients`.

`compute_gradients` asks `graphflow.ops.gradients` for symbolic gradients of the loss; `apply_gradients`
creates the optimizer's slot variables (real, non-trainable `tf.Variable`s named like TF1's
`w/Adam`, `w/Adam_1`) and adds one fused, stateful update op per variable (`graphflow.ops.
training_ops`: ApplyGradientDescent, ApplyMomentum, ApplyAdam, ApplyRMSProp, ApplyAdagrad,
ApplyAdadelta), grouped into one
training op that runs after every update and, when `global_step` is given, increments it last.

A gradient that is an IndexedSlices (an embedding lookup's) takes TF1's sparse path:
`_apply_sparse_duplicate_indices` sums repeated indices, then `_apply_sparse` updates only those
rows (`tf1/sparse_updates.py`); an optimizer without a sparse update of its own applies the
densified gradient with `_apply_dense`.
"""

import numbers

from graphflow.framework.func_graph import outermost_graph
from graphflow.framework.graph import GraphKeys, Tensor, get_default_graph
from graphflow.ops import indexed_slices, math_ops, shape_ops, training_ops
from graphflow.ops.core_ops import convert_to_tensor, group, tuple_
from graphflow.ops.gradients import gradients
from graphflow.ops.indexed_slices import IndexedSlices
from graphflow.ops.state_ops import Variable, trainable_variables
from graphflow.tf1 import sparse_updates


class Optimizer:
    """Base class (TF1 `tf.train.Optimizer`). Subclasses define `_create_slots`, `_prepare`,
    `_apply_dense` and optionally `_finish`."""

    GATE_NONE = 0
    GATE_OP = 1
    GATE_GRAPH = 2

    def __init__(self, use_locking, name):
        if not name:
            raise ValueError("Must specify the optimizer name")
        self._use_locking = use_locking
        self._name = name
        self._slots = {}            # slot name -> {variable op: slot Variable}
        self._non_slot = {}         # (name, graph) -> Variable
        self._hyper_cache = {}      # (hyper name, dtype) -> Tensor, rebuilt by each apply
        self._apply_scope = ""

    def get_name(self):
        return self._name

    # ------------------------------------------------------------------ the public steps
    def minimize(self, loss, global_step=None, var_list=None, gate_gradients=GATE_OP,
                 aggregation_method=None, colocate_gradients_with_ops=False, name=None,
                 grad_loss=None):
        """Add ops that compute the gradients of `loss` and apply them; returns the training op."""
        grads_and_vars = self.compute_gradients(
            loss, var_list=var_list, gate_gradients=gate_gradients,
            aggregation_method=aggregation_method,
            colocate_gradients_with_ops=colocate_gradients_with_ops, grad_loss=grad_loss)
        if not any(g is not None for g, _ in grads_and_vars):
            raise ValueError(
                "No gradients provided for any variable, check your graph for ops that do not "
                f"support gradients, between variables {[v.name for _, v in grads_and_vars]} "
                f"and loss {loss}.")
        return self.apply_gradients(grads_and_vars, global_step=global_step, name=name)

    def compute_gradients(self, loss, var_list=None, gate_gradients=GATE_OP,
                          aggregation_method=None, colocate_gradients_with_ops=False,
                          grad_loss=None):
        """A list of (gradient, variable) pairs; the gradient is None where loss does not
        depend on the variable."""
        if get_default_graph().eager:
            return self._compute_gradients_eagerly(loss, var_list, grad_loss)
        if callable(loss) and not isinstance(loss, (Tensor, Variable)):
            loss = loss()
        if gate_gradients not in (Optimizer.GATE_NONE, Optimizer.GATE_OP, Optimizer.GATE_GRAPH):
            raise ValueError(f"gate_gradients must be one of: Optimizer.GATE_NONE, "
                             f"Optimizer.GATE_OP, Optimizer.GATE_GRAPH. Not {gate_gradients}")
        loss = convert_to_tensor(loss)
        _assert_float(loss, "loss")
        if var_list is None:
            with loss.graph.as_default():
                var_list = trainable_variables()
        else:
            var_list = list(var_list)
        if not var_list:
            raise ValueError("No variables to optimize.")
        for v in var_list:
            if not isinstance(v, Variable):
                raise TypeError(f"var_list must hold tf.Variable objects, got {v!r}")
            _assert_float(v, "variable")
        if grad_loss is not None:
            grad_loss = [convert_to_tensor(grad_loss, dtype=loss.dtype)]
        grads = gradients([loss], [v.value() for v in var_list], grad_ys=grad_loss)
        if gate_gradients == Optimizer.GATE_GRAPH:
            grads = _gated(grads)
        return list(zip(grads, var_list))

    def _compute_gradients_eagerly(self, loss, var_list, grad_loss):
        """Eager mode (TF1's rule: `loss` is a function of no arguments): run it under a
        GradientTape; without `var_list`, the trainable variables it read."""
        from graphflow.engine.tape import GradientTape
        if not callable(loss) or isinstance(loss, (Tensor, Variable)):
            raise RuntimeError("`loss` passed to Optimizer.compute_gradients should be a "
                               "function when eager execution is enabled.")
        with GradientTape() as tape:
            if var_list is not None:
                var_list = list(var_list)
                tape.watch(var_list)
            value = convert_to_tensor(loss())
        _assert_float(value, "loss")
        if var_list is None:
            var_list = list(tape.watched_variables())
        if not var_list:
            raise ValueError("No variables to optimize.")
        grads = tape.gradient(value, var_list, output_gradients=grad_loss)
        return list(zip(grads, var_list))

    def apply_gradients(self, grads_and_vars, global_step=None, name=None):
        """Add the update ops for `grads_and_vars`; returns one Operation that runs all of them
        (and then increments `global_step` when it is given)."""
        grads_and_vars = tuple(grads_and_vars)
        if not grads_and_vars:
            raise ValueError("No variables provided.")
        converted = []
        seen = set()
        for g, v in grads_and_vars:
            if not isinstance(v, Variable):
                raise TypeError(f"apply_gradients expects (gradient, tf.Variable) pairs, got "
                                f"{v!r} as the variable")
            if v in seen:
                raise ValueError(f"Duplicate variable {v.name} in grads_and_vars: sum its "
                                 "gradients first (tf.add_n)")
            seen.add(v)
            if isinstance(g, IndexedSlices):
                if g.dtype != v.dtype:
                    raise TypeError(f"Gradient {g.name} of dtype {g.dtype.name} does not match "
                                    f"variable {v.name} of dtype {v.dtype.name}")
            elif g is not None:
                try:
                    g = convert_to_tensor(g)
                except TypeError as exc:
                    raise TypeError(f"Gradient for {v.name} must be convertible to a Tensor: "
                                    f"{exc}") from None
                if g.dtype != v.dtype:
                    raise TypeError(f"Gradient {g.name} of dtype {g.dtype.name} does not match "
                                    f"variable {v.name} of dtype {v.dtype.name}")
            converted.append((g, v))
        var_list = [v for g, v in converted if g is not None]
        if not var_list:
            raise ValueError(f"No gradients provided for any variable: "
                             f"{[v.name for _, v in converted]}.")
        graph = var_list[0].graph
        with graph.as_default():
            with graph.control_dependencies(None), graph.name_scope(None):
                self._create_slots(var_list)
            with graph.name_scope(name or self._name) as scope:
                self._hyper_cache = {}
                self._apply_scope = scope
                self._prepare()
                update_ops = []
                for grad, var in converted:
                    if grad is None:
                        continue
                    with graph.name_scope("update_" + var.op.name):
                        if isinstance(grad, IndexedSlices):
                            update_ops.append(self._apply_sparse_duplicate_indices(grad, var))
                        else:
                            update_ops.append(self._apply_dense(grad, var))
                if global_step is None:
                    train_op = self._finish(update_ops, scope)
                else:
                    with graph.control_dependencies([self._finish(update_ops, "update")]):
                        train_op = global_step.assign_add(
                            convert_to_tensor(1, dtype=global_step.dtype), name=scope).op
            if not graph.eager:
                graph.add_to_collection(GraphKeys.TRAIN_OP, train_op)
        return train_op

    # ------------------------------------------------------------------ slots
    def get_slot(self, var, name):
        """The slot variable `name` created for `var`, or None."""
        slots = self._slots.get(name)
        if not slots:
            return None
        return slots.get(_var_key(var))

    def get_slot_names(self):
        return sorted(self._slots)

    def variables(self):
        """The optimizer's own variables (slots and accumulators) in the default graph, by name."""
        graph = get_default_graph()
        found = [v for (_, g), v in self._non_slot.items() if g is graph]
        for slots in self._slots.values():
            found.extend(v for v in slots.values() if v.graph is graph)
        return sorted(found, key=lambda v: v.name)

    def _slot_dict(self, slot_name):
        return self._slots.setdefault(slot_name, {})

    def _make_slot(self, var, initial, slot_name, op_name):
        """Create (once) the slot `slot_name` of `var`: a non-trainable Variable 'var/op_name'."""
        slots = self._slot_dict(slot_name)
        key = _var_key(var)
        if key not in slots:
            with var.graph.name_scope(None):
                slots[key] = Variable(initial, trainable=False, name=f"{var.op.name}/{op_name}",
                                      dtype=var.dtype)
        return slots[key]

    def _zeros_slot(self, var, slot_name, op_name):
        return self._make_slot(var, lambda: _filled_like(var, 0), slot_name, op_name)

    def _ones_slot(self, var, slot_name, op_name):
        return self._make_slot(var, lambda: _filled_like(var, 1), slot_name, op_name)

    def _non_slot_variable(self, initial_value, name, dtype, graph):
        key = (name, outermost_graph(graph))
        if key not in self._non_slot:
            with graph.name_scope(None):
                self._non_slot[key] = Variable(convert_to_tensor(initial_value, dtype=dtype),
                                               trainable=False, name=name)
        return self._non_slot[key]

    def _get_non_slot(self, name, graph):
        return self._non_slot[(name, outermost_graph(graph))]

    # ------------------------------------------------------------------ hyper-parameters
    def _hyper(self, name, value, dtype):
        """`value` (number, Tensor, Variable or callable) as a scalar Tensor of `dtype`.

        Numbers become constants in the variable's own dtype (no float32 rounding for float64
        models); tensors are cast when their dtype differs. Built once per apply_gradients call.
        """
        key = (name, dtype)
        cached = self._hyper_cache.get(key)
        if cached is not None:
            return cached
        if callable(value) and not isinstance(value, (Tensor, Variable)):
            value = value()
        with get_default_graph().name_scope(self._apply_scope or None):
            if isinstance(value, numbers.Number):
                t = convert_to_tensor(float(value), dtype=dtype, name=name)
            else:
                t = convert_to_tensor(value)
                if t.dtype != dtype:
                    t = math_ops.cast(t, dtype, name=f"{name}_cast")
        self._hyper_cache[key] = t
        return t

    # ------------------------------------------------------------------ subclass hooks
    def _create_slots(self, var_list):
        pass

    def _prepare(self):
        pass

    def _apply_dense(self, grad, var):
        raise NotImplementedError(f"{type(self).__name__} does not implement _apply_dense")

    def _apply_sparse_duplicate_indices(self, grad, var):
        """TF1's: the values of repeated indices summed (each row once), then `_apply_sparse`."""
        return self._apply_sparse(indexed_slices.deduplicate(grad), var)

    def _apply_sparse(self, grad, var):
        """The update for an IndexedSlices `grad` with unique indices. Optimizers without a sparse
        update of their own apply the densified gradient."""
        return self._apply_dense(indexed_slices.to_dense(grad), var)

    def _finish(self, update_ops, name_scope):
        """Group the updates. `name_scope` is the apply scope ('Adam/': the op is named exactly
        'Adam', as in TF1) or a relative name ('update')."""
        return group(*update_ops, name=name_scope)


def _gated(grads):
    """GATE_GRAPH: every gradient (IndexedSlices: its values and indices) available only once
    all of them are."""
    parts = [p for g in grads if g is not None
             for p in ((g.values, g.indices) if isinstance(g, IndexedSlices) else (g,))]
    if not parts:
        return grads
    gated = iter(tuple_(parts))
    out = []
    for g in grads:
        if isinstance(g, IndexedSlices):
            out.append(IndexedSlices(next(gated), next(gated), g.dense_shape))
        else:
            out.append(None if g is None else next(gated))
    return out


def _var_key(var):
    return var.op


def _assert_float(t, what):
    if not t.dtype.is_floating:
        raise ValueError(f"Invalid type {t.dtype.name} for {what} {t.name}, expected: "
                         "[float16, float32, float64].")


def _filled_like(var, value):
    """An initial value for a slot of `var`: a Fill op (no large constant stored in the graph)."""
    if value not in (0, 1):
        dims = (var.shape.as_list() if var.shape.is_fully_defined()
                else shape_ops.shape(var.initialized_value()))
        return shape_ops.fill(dims, convert_to_tensor(value, dtype=var.dtype))
    if var.shape.is_fully_defined():
        dims = var.shape.as_list()
        return (shape_ops.zeros if value == 0 else shape_ops.ones)(dims, dtype=var.dtype)
    initial = var.initialized_value()
    if value == 0:
        return shape_ops.zeros_like(initial)
    return shape_ops.ones_like(initial)


class GradientDescentOptimizer(Optimizer):
    """Plain SGD: var -= learning_rate * grad."""

    def __init__(self, learning_rate, use_locking=False, name="GradientDescent"):
        super().__init__(use_locking, name)
        self._learning_rate = learning_rate

    def _apply_dense(self, grad, var):
        lr = self._hyper("learning_rate", self._learning_rate, var.dtype)
        return training_ops.apply_gradient_descent(var, lr, grad, use_locking=self._use_locking)

    def _apply_sparse_duplicate_indices(self, grad, var):
        """TF1's: scatter_sub of lr * values, repeated indices adding up (no deduplication)."""
        lr = self._hyper("learning_rate", self._learning_rate, var.dtype)
        return sparse_updates.scatter_descent(var, lr, grad, use_locking=self._use_locking)


class MomentumOptimizer(Optimizer):
    """accum = momentum * accum + grad; var -= lr * accum (Nesterov: lr * (grad + momentum * accum))."""

    def __init__(self, learning_rate, momentum, use_locking=False, name="Momentum",
                 use_nesterov=False):
        super().__init__(use_locking, name)
        self._learning_rate = learning_rate
        self._momentum = momentum
        self._use_nesterov = use_nesterov

    def _create_slots(self, var_list):
        for v in var_list:
            self._zeros_slot(v, "momentum", self._name)

    def _apply_dense(self, grad, var):
        return training_ops.apply_momentum(
            var, self.get_slot(var, "momentum"),
            self._hyper("learning_rate", self._learning_rate, var.dtype), grad,
            self._hyper("momentum", self._momentum, var.dtype),
            use_locking=self._use_locking, use_nesterov=self._use_nesterov)

    def _apply_sparse(self, grad, var):
        return sparse_updates.momentum(
            var, self.get_slot(var, "momentum"),
            self._hyper("learning_rate", self._learning_rate, var.dtype), grad,
            self._hyper("momentum", self._momentum, var.dtype), self._use_nesterov)


class AdamOptimizer(Optimizer):
    """Adam (Kingma & Ba) with TF1's defaults and its bias correction through the `beta1_power`
    and `beta2_power` accumulator variables, advanced after every step's updates."""

    def __init__(self, learning_rate=0.001, beta1=0.9, beta2=0.999, epsilon=1e-8,
                 use_locking=False, name="Adam"):
        super().__init__(use_locking, name)
        self._lr = learning_rate
        self._beta1 = beta1
        self._beta2 = beta2
        self._epsilon = epsilon

    def _create_slots(self, var_list):
        first = min(var_list, key=lambda v: v.name)
        self._non_slot_variable(self._beta1, "beta1_power", first.dtype, first.graph)
        self._non_slot_variable(self._beta2, "beta2_power", first.dtype, first.graph)
        for v in var_list:
            self._zeros_slot(v, "m", self._name)
            self._zeros_slot(v, "v", self._name)

    def _get_beta_accumulators(self, graph=None):
        graph = graph or get_default_graph()
        return self._get_non_slot("beta1_power", graph), self._get_non_slot("beta2_power", graph)

    def _apply_dense(self, grad, var):
        beta1_power, beta2_power = self._get_beta_accumulators(var.graph)
        return training_ops.apply_adam(
            var, self.get_slot(var, "m"), self.get_slot(var, "v"),
            self._hyper("beta1_power", beta1_power, var.dtype),
            self._hyper("beta2_power", beta2_power, var.dtype),
            self._hyper("learning_rate", self._lr, var.dtype),
            self._hyper("beta1", self._beta1, var.dtype),
            self._hyper("beta2", self._beta2, var.dtype),
            self._hyper("epsilon", self._epsilon, var.dtype), grad,
            use_locking=self._use_locking)

    def _apply_sparse(self, grad, var):
        beta1_power, beta2_power = self._get_beta_accumulators(var.graph)
        dt = var.dtype
        return sparse_updates.adam(
            var, self.get_slot(var, "m"), self.get_slot(var, "v"),
            self._hyper("learning_rate", self._lr, dt), self._hyper("beta1", self._beta1, dt),
            self._hyper("beta2", self._beta2, dt), self._hyper("epsilon", self._epsilon, dt),
            self._hyper("beta1_power", beta1_power, dt),
            self._hyper("beta2_power", beta2_power, dt), grad, self._use_locking)

    def _finish(self, update_ops, name_scope):
        graph = get_default_graph()
        beta1_power, beta2_power = self._get_beta_accumulators(graph)
        with graph.control_dependencies(update_ops):
            update_beta1 = beta1_power.assign(
                beta1_power * self._hyper("beta1", self._beta1, beta1_power.dtype))
            update_beta2 = beta2_power.assign(
                beta2_power * self._hyper("beta2", self._beta2, beta2_power.dtype))
        return group(*update_ops, update_beta1, update_beta2, name=name_scope)


class RMSPropOptimizer(Optimizer):
    """RMSProp as TF1 runs it: the mean square starts at ones; optional momentum and centering."""

    def __init__(self, learning_rate, decay=0.9, momentum=0.0, epsilon=1e-10, use_locking=False,
                 centered=False, name="RMSProp"):
        super().__init__(use_locking, name)
        self._learning_rate = learning_rate
        self._decay = decay
        self._momentum = momentum
        self._epsilon = epsilon
        self._centered = centered

    def _create_slots(self, var_list):
        for v in var_list:
            self._ones_slot(v, "rms", self._name)
            if self._centered:
                self._zeros_slot(v, "mg", self._name)
            self._zeros_slot(v, "momentum", self._name)

    def _apply_dense(self, grad, var):
        dt = var.dtype
        args = (self._hyper("learning_rate", self._learning_rate, dt),
                self._hyper("decay", self._decay, dt), self._hyper("momentum", self._momentum, dt),
                self._hyper("epsilon", self._epsilon, dt), grad)
        rms, mom = self.get_slot(var, "rms"), self.get_slot(var, "momentum")
        if self._centered:
            return training_ops.apply_centered_rms_prop(var, self.get_slot(var, "mg"), rms, mom,
                                                        *args, use_locking=self._use_locking)
        return training_ops.apply_rms_prop(var, rms, mom, *args, use_locking=self._use_locking)

    def _apply_sparse(self, grad, var):
        dt = var.dtype
        return sparse_updates.rms_prop(
            var, self.get_slot(var, "rms"), self.get_slot(var, "momentum"),
            self._hyper("learning_rate", self._learning_rate, dt),
            self._hyper("decay", self._decay, dt), self._hyper("momentum", self._momentum, dt),
            self._hyper("epsilon", self._epsilon, dt), grad,
            mg=self.get_slot(var, "mg") if self._centered else None)


class AdagradOptimizer(Optimizer):
    """Adagrad: accum += grad^2; var -= lr * grad / sqrt(accum). The accumulator starts at
    `initial_accumulator_value` (TF1's default 0.1)."""

    def __init__(self, learning_rate, initial_accumulator_value=0.1, use_locking=False,
                 name="Adagrad"):
        if initial_accumulator_value <= 0.0:
            raise ValueError("initial_accumulator_value must be positive: "
                             f"{initial_accumulator_value}")
        super().__init__(use_locking, name)
        self._learning_rate = learning_rate
        self._initial_accumulator_value = initial_accumulator_value

    def _create_slots(self, var_list):
        for v in var_list:
            self._make_slot(v, lambda v=v: _filled_like(v, self._initial_accumulator_value),
                            "accumulator", self._name)

    def _apply_dense(self, grad, var):
        return training_ops.apply_adagrad(
            var, self.get_slot(var, "accumulator"),
            self._hyper("learning_rate", self._learning_rate, var.dtype), grad,
            use_locking=self._use_locking)

    def _apply_sparse(self, grad, var):
        return sparse_updates.adagrad(
            var, self.get_slot(var, "accumulator"),
            self._hyper("learning_rate", self._learning_rate, var.dtype), grad)


class AdadeltaOptimizer(Optimizer):
    """Adadelta (Zeiler): running averages of squared gradients (`accum`) and squared updates
    (`accum_update`), both starting at zero; var -= lr * update."""

    def __init__(self, learning_rate=0.001, rho=0.95, epsilon=1e-8, use_locking=False,
                 name="Adadelta"):
        super().__init__(use_locking, name)
        self._lr = learning_rate
        self._rho = rho
        self._epsilon = epsilon

    def _create_slots(self, var_list):
        for v in var_list:
            self._zeros_slot(v, "accum", self._name)
            self._zeros_slot(v, "accum_update", self._name)

    def _apply_dense(self, grad, var):
        dt = var.dtype
        return training_ops.apply_adadelta(
            var, self.get_slot(var, "accum"), self.get_slot(var, "accum_update"),
            self._hyper("learning_rate", self._lr, dt), self._hyper("rho", self._rho, dt),
            self._hyper("epsilon", self._epsilon, dt), grad, use_locking=self._use_locking)

    def _apply_sparse(self, grad, var):
        dt = var.dtype
        return sparse_updates.adadelta(
            var, self.get_slot(var, "accum"), self.get_slot(var, "accum_update"),
            self._hyper("learning_rate", self._lr, dt), self._hyper("rho", self._rho, dt),
            self._hyper("epsilon", self._epsilon, dt), grad)


__all__ = ["Optimizer", "GradientDescentOptimizer", "MomentumOptimizer", "AdamOptimizer",
           "RMSPropOptimizer", "AdagradOptimizer", "AdadeltaOptimizer"]
