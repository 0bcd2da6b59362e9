"""Training ops: fused, stateful per-variable updates (TF1's ApplyGradientDescent, ApplyMomentum,
ApplyAdam, ApplyRMSProp, ApplyCenteredRMSProp, ApplyAdagrad, ApplyAdadelta).

One op updates a variable *and* all of its optimizer slots in a single step, so an optimizer step
costs one kernel call per variable. Like `Assign`, the ops name the variable (and each slot
variable) by `shared_name`-style attrs instead of taking the old values as data inputs; the kernel
reads and writes them through the session's variable store, so a failed run changes nothing.
Inputs are the gradient and the (scalar) hyper-parameters, all of the variable's dtype. The output
is the updated variable value.
"""

from graphflow.framework import dtypes
from graphflow.framework.tensor_shape import TensorShape, as_shape
from graphflow.ops import no_onnx
from graphflow.ops.core_ops import consumer_scope, convert_to_tensor
from graphflow.ops.registry import FLOATS, define, make_op, require_dtype

# op type -> (input names in order, slot attr names in order)
TRAINING_OPS = {
    "ApplyGradientDescent": (("alpha", "delta"), ()),
    "ApplyMomentum": (("lr", "grad", "momentum"), ("accum_name",)),
    "ApplyAdam": (("beta1_power", "beta2_power", "lr", "beta1", "beta2", "epsilon", "grad"),
                  ("m_name", "v_name")),
    "ApplyRMSProp": (("lr", "rho", "momentum", "epsilon", "grad"), ("ms_name", "mom_name")),
    "ApplyCenteredRMSProp": (("lr", "rho", "momentum", "epsilon", "grad"),
                             ("mg_name", "ms_name", "mom_name")),
    "ApplyAdagrad": (("lr", "grad"), ("accum_name",)),
    "ApplyAdadelta": (("lr", "rho", "epsilon", "grad"), ("accum_name", "accum_update_name")),
}
_GRAD_INPUT = {"delta", "grad"}
_FLAGS = {"ApplyMomentum": ("use_nesterov",), "ApplyAdam": ("use_nesterov",)}
# updates whose CPU kernels can write in place as a run's last op (`kernels/cpu/numba/jit_updates.py`)
_IN_PLACE = set(TRAINING_OPS)


def _training_infer(op_type):
    input_names, slot_attrs = TRAINING_OPS[op_type]

    def infer(inputs, attrs):
        if len(inputs) != len(input_names):
            raise ValueError(f"expected {len(input_names)} inputs ({', '.join(input_names)}), "
                             f"got {len(inputs)}")
        var_dtype = dtypes.as_dtype(attrs["dtype"])
        var_shape = as_shape(attrs["shape"])
        if var_dtype not in FLOATS:
            raise TypeError(f"variable '{attrs['shared_name']}' has dtype {var_dtype.name}; "
                            "optimizers update floating-point variables only")
        for slot in slot_attrs:
            if not isinstance(attrs.get(slot), str) or not attrs[slot]:
                raise ValueError(f"attr '{slot}' must name the slot variable")
        for name, t in zip(input_names, inputs):
            require_dtype(t, (var_dtype,), f"input '{name}' (dtype of variable "
                                           f"'{attrs['shared_name']}')")
            if name in _GRAD_INPUT:
                if not var_shape.is_compatible_with(t.shape):
                    raise ValueError(f"gradient '{t.name}' of shape {t.shape} does not match "
                                     f"variable '{attrs['shared_name']}' of shape {var_shape}")
            elif t.shape.ndims not in (None, 0):
                raise ValueError(f"input '{name}' must be a scalar, got {t.name} of shape "
                                 f"{t.shape}")
        return [(var_dtype, var_shape)]
    return infer


for _type, (_inputs, _slots) in TRAINING_OPS.items():
    define(_type, _training_infer(_type), stateful=True, returns_state=True,
           updates_in_place=_type in _IN_PLACE,
           attrs="shared_name:string dtype:dtype shape:none|shape use_locking:bool"
           + "".join(f" {slot}:string" for slot in _slots)
           + "".join(f" {flag}:bool" for flag in _FLAGS.get(_type, ())), onnx=no_onnx.STATE)


def _variable_name(var):
    return var.op.attrs["shared_name"]


def _apply(op_type, var, inputs, slots=None, flags=None, use_locking=False, name=None):
    input_names, slot_attrs = TRAINING_OPS[op_type]
    slots = slots or {}
    if set(slots) != set(slot_attrs):
        raise ValueError(f"{op_type} needs slot variables {list(slot_attrs)}, got {sorted(slots)}")
    attrs = {"shared_name": _variable_name(var), "dtype": var.dtype.name,
             "shape": TensorShape(var.op.attrs["shape"]).dims, "use_locking": bool(use_locking)}
    for attr, slot_var in slots.items():
        if slot_var.dtype != var.dtype:
            raise TypeError(f"slot variable {slot_var.name} has dtype {slot_var.dtype.name}, "
                            f"variable {var.name} has {var.dtype.name}")
        attrs[attr] = _variable_name(slot_var)
    attrs.update(flags or {})
    with var.graph.as_default(), consumer_scope(name, op_type, inputs) as op_name:
        tensors = [convert_to_tensor(x, dtype=var.dtype, name=n)
                   for x, n in zip(inputs, input_names)]
        return make_op(op_type, tensors, attrs, name=op_name, graph=var.graph)


def apply_gradient_descent(var, alpha, delta, use_locking=False, name=None):
    """var -= alpha * delta. Returns the Operation (its output is the updated value)."""
    return _apply("ApplyGradientDescent", var, (alpha, delta), use_locking=use_locking, name=name)


def apply_momentum(var, accum, lr, grad, momentum, use_locking=False, use_nesterov=False, name=None):
    """accum = accum * momentum + grad; var -= lr * accum (Nesterov: lr * (grad + momentum * accum))."""
    return _apply("ApplyMomentum", var, (lr, grad, momentum), {"accum_name": accum},
                  {"use_nesterov": bool(use_nesterov)}, use_locking, name)


def apply_adam(var, m, v, beta1_power, beta2_power, lr, beta1, beta2, epsilon, grad,
               use_locking=False, use_nesterov=False, name=None):
    """TF1 Adam: lr_t = lr * sqrt(1 - beta2^t) / (1 - beta1^t); m += (g - m)(1 - beta1);
    v += (g^2 - v)(1 - beta2); var -= lr_t * m / (sqrt(v) + epsilon)."""
    return _apply("ApplyAdam", var, (beta1_power, beta2_power, lr, beta1, beta2, epsilon, grad),
                  {"m_name": m, "v_name": v}, {"use_nesterov": bool(use_nesterov)},
                  use_locking, name)


def apply_rms_prop(var, ms, mom, lr, rho, momentum, epsilon, grad, use_locking=False, name=None):
    """ms += (g^2 - ms)(1 - rho); mom = momentum * mom + lr * g / sqrt(ms + epsilon); var -= mom."""
    return _apply("ApplyRMSProp", var, (lr, rho, momentum, epsilon, grad),
                  {"ms_name": ms, "mom_name": mom}, use_locking=use_locking, name=name)


def apply_centered_rms_prop(var, mg, ms, mom, lr, rho, momentum, epsilon, grad, use_locking=False,
                            name=None):
    """Centered RMSProp: also tracks mg (mean gradient); the denominator is ms - mg^2 + epsilon."""
    return _apply("ApplyCenteredRMSProp", var, (lr, rho, momentum, epsilon, grad),
                  {"mg_name": mg, "ms_name": ms, "mom_name": mom}, use_locking=use_locking,
                  name=name)


def apply_adagrad(var, accum, lr, grad, use_locking=False, name=None):
    """accum += grad^2; var -= lr * grad / sqrt(accum)."""
    return _apply("ApplyAdagrad", var, (lr, grad), {"accum_name": accum},
                  use_locking=use_locking, name=name)


def apply_adadelta(var, accum, accum_update, lr, rho, epsilon, grad, use_locking=False, name=None):
    """accum = rho * accum + (1 - rho) * grad^2;
    update = sqrt(accum_update + epsilon) / sqrt(accum + epsilon) * grad; var -= lr * update;
    accum_update = rho * accum_update + (1 - rho) * update^2."""
    return _apply("ApplyAdadelta", var, (lr, rho, epsilon, grad),
                  {"accum_name": accum, "accum_update_name": accum_update},
                  use_locking=use_locking, name=name)


__all__ = []  # constructors are used through graphflow.tf1.train; nothing is exported at top level
