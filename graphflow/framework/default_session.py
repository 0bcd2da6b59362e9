"""The per-thread stack of default sessions, kept beside the default-graph stack.

`Tensor.eval`, `Operation.run`, `SparseTensor.eval` and `Variable.load` run in the default session
when none is given. The session type lives in the engine, floors above the graph; it registers
itself here (`with sess:`, `sess.as_default()`, `InteractiveSession`) so that the graph never
imports the engine. Anything with `run(fetches, feed_dict)` may be pushed.
"""

import threading


class _DefaultSessionStack(threading.local):
    def __init__(self):
        self.stack = []


_default_sessions = _DefaultSessionStack()


def push(session):
    """Make `session` the default session of this thread until `pop(session)`."""
    _default_sessions.stack.append(session)


def pop(session):
    """Undo `push(session)`: drop the top entry when it is `session`."""
    stack = _default_sessions.stack
    if stack and stack[-1] is session:
        stack.pop()


def remove(session):
    """Drop `session` wherever it is in this thread's stack (a closed InteractiveSession)."""
    stack = _default_sessions.stack
    if session in stack:
        stack.remove(session)


def get_default_session():
    """The innermost default session of this thread, or None."""
    stack = _default_sessions.stack
    return stack[-1] if stack else None


def get_default_session_or_error():
    session = get_default_session()
    if session is None:
        raise ValueError("Cannot evaluate a tensor: no default session is registered. Use "
                         "`with tf.Session() as sess:` or pass session=sess.")
    return session
