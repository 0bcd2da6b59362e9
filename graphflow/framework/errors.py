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


__all__ = ["OpError", "InvalidArgumentError", "FailedPreconditionError", "NotFoundError", "OutOfRangeError",
           "CancelledError", "UnimplementedError", "ResourceExhaustedError", "InternalError", "DataLossError",
           "UninitializedVariableError",
           "GraphFormatError"]
