"""`tf.contrib.framework.arg_scope` / `add_arg_scope`: default keyword arguments for a set of layer
functions inside a `with` block (TF-Slim's idiom).

    with arg_scope([contrib.layers.conv2d, contrib.layers.fully_connected],
                   activation_fn=tf.nn.relu, weights_regularizer=l2_regularizer(1e-4)):
        net = contrib.layers.conv2d(images, 32, [3, 3])   # gets those defaults

Only functions decorated with `add_arg_scope` take part; arguments given at the call win over the
scope's; nested scopes add to and override the outer ones.
"""

import contextlib
import functools
import threading

_state = threading.local()


def _stack():
    if not hasattr(_state, "stack"):
        _state.stack = [{}]
    return _state.stack


def _key(func):
    return getattr(func, "_arg_scope_key", None)


def add_arg_scope(func):
    """Decorate `func` so that enclosing `arg_scope`s supply default keyword arguments to it."""
    key = f"{func.__module__}.{func.__qualname__}"

    @functools.wraps(func)
    def with_scope_defaults(*args, **kwargs):
        defaults = _stack()[-1].get(key)
        if defaults:
            kwargs = {**defaults, **kwargs}
        return func(*args, **kwargs)

    with_scope_defaults._arg_scope_key = key
    return with_scope_defaults


@contextlib.contextmanager
def arg_scope(list_ops_or_scope, **kwargs):
    """Within the block, calls of the listed (add_arg_scope-decorated) functions get `kwargs` as
    defaults. Passing a scope yielded by an earlier `arg_scope` re-enters that scope."""
    stack = _stack()
    if isinstance(list_ops_or_scope, dict):
        if kwargs:
            raise ValueError("arg_scope: when re-entering a scope, pass no keyword arguments")
        scope = list_ops_or_scope
    else:
        if not isinstance(list_ops_or_scope, (list, tuple)):
            raise TypeError("arg_scope expects a list or tuple of functions (or a saved scope)")
        scope = {k: dict(v) for k, v in stack[-1].items()}
        for op in list_ops_or_scope:
            key = _key(op)
            if key is None:
                raise ValueError(f"{getattr(op, '__name__', op)} is not decorated with "
                                 "@add_arg_scope")
            scope[key] = {**scope.get(key, {}), **kwargs}
    stack.append(scope)
    try:
        yield scope
    finally:
        stack.pop()


def current_arg_scope():
    return _stack()[-1]


def has_arg_scope(func):
    return _key(func) is not None


def arg_scoped_arguments(func):
    """The keyword arguments the current arg scope gives `func`."""
    return dict(_stack()[-1].get(_key(func), {}))


__all__ = ["arg_scope", "add_arg_scope", "current_arg_scope", "has_arg_scope",
           "arg_scoped_arguments"]
