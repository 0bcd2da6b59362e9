"""Exception types (TF1's `tf.errors` names). Every run-time error names the op and the user's line."""


class OpError(Exception):
    """An error raised while running an op. `op` is the failing Operation (or None)."""

    def __init__(self, node_def=None, op=None, message=""):
        super().__init__(message)
        self.node_def = node_def
        self.op = op
        self.message = message

    def __str__(self):
        return self.message


class InvalidArgumentError(OpError):
    """Bad feed, bad shape or a kernel that failed on its inputs."""


class FailedPreconditionError(OpError):
    """E.g. reading a variable that was never initialized."""


class NotFoundError(OpError):
    """A name or file that does not exist."""


class OutOfRangeError(OpError):
    """An input is exhausted: an iterator past the end of its dataset (`IteratorGetNext`), or the
    epochs of a numpy input feeder."""


class CancelledError(OpError):
    """An op was cancelled: an enqueue on a closed queue (or one pending when the queue was closed
    with `cancel_pending_enqueues=True`), or a queue op blocked when its session closed."""


class UnimplementedError(OpError):
    """An op has no kernel for the requested device."""


class ResourceExhaustedError(OpError):
    """An op's result does not fit in memory (e.g. an absurd element count)."""


class InternalError(OpError):
    """A bug in graphflow itself."""


class DataLossError(OpError):
    """Unrecoverable data loss or corruption: a TFRecord file whose length or data CRC does not
    match, or that ends in the middle of a record."""


class UninitializedVariableError(RuntimeError):
    """Raised by the variable-read kernel; the session turns it into FailedPreconditionError."""

    def __init__(self, variable_name):
        super().__init__(f"Attempting to use uninitialized value {variable_name}")
        self.variable_name = variable_name


class CheckFailedError(RuntimeError):
    """Raised by checking kernels (Assert, CheckNumerics, PyFunc) with their full message; the
    session turns it into InvalidArgumentError naming the op and the user's line."""


class GraphFormatError(ValueError):
    """A saved graph file is truncated, corrupted, hostile or of an unknown version."""


class NotImplementedInGraphflow(AttributeError):
    """A TensorFlow name graphflow does not provide (an AttributeError, so `hasattr` is False).

    `candidates`, when given, is a function returning the names the namespace does have: the
    message then ends with the closest of them ("Did you mean tf.nn.relu6?"), written as
    `prefix + name`. They are looked for when the message is first shown, not when the error is
    raised, so a `hasattr` probe costs nothing beyond the lookup itself."""

    def __init__(self, message, candidates=None, missing=None, prefix=""):
        super().__init__(message)
        self._candidates, self._missing, self._prefix = candidates, missing, prefix
        self._message = None
        # Python 3.13 would add its own "Did you mean" from dir() of the namespace (importing all
        # its modules): an `obj` already set keeps the interpreter from filling in `name`
        self.obj = None

    def __str__(self):
        if self._message is None:
            self._message = super().__str__()
            close = self.suggestions()
            if close:
                names = [self._prefix + n for n in close]
                listed = names[0] if len(names) == 1 else (", ".join(names[:-1]) + " or "
                                                           + names[-1])
                self._message += f". Did you mean {listed}?"
        return self._message

    def suggestions(self, limit=3):
        """The names closest to the missing one (difflib's ratio, case-insensitive, at least 0.7),
        best first: the best one and those within 0.05 of it."""
        if self._candidates is None or not self._missing:
            return []
        import difflib
        try:
            names = [n for n in self._candidates() if not n.startswith("_")]
        except Exception:  # noqa: BLE001 - a message must never fail to print
            return []
        by_lower = {}
        for name in sorted(names):
            by_lower.setdefault(name.lower(), name)
        missing = self._missing.lower()
        close = difflib.get_close_matches(missing, list(by_lower), n=limit, cutoff=0.7)
        if not close:
            return []
        # only the names about as close as the best one: relu6x gives relu6, not also relu, crelu
        best = difflib.SequenceMatcher(None, missing, close[0]).ratio()
        return [by_lower[n] for n in close
                if difflib.SequenceMatcher(None, missing, n).ratio() >= best - 0.05]


__all__ = ["OpError", "InvalidArgumentError", "FailedPreconditionError", "NotFoundError", "OutOfRangeError",
           "CancelledError", "UnimplementedError", "ResourceExhaustedError", "InternalError", "DataLossError",
           "UninitializedVariableError",
           "GraphFormatError"]
