"""`tf.logging`: TF1's logging functions and levels over Python's `logging` ("graphflow" logger).

As in TF1, messages go to stderr as `INFO:graphflow:message` and the default verbosity is WARN, so
`tf.logging.info(...)` prints only after `tf.logging.set_verbosity(tf.logging.INFO)`.
"""

import logging as _logging
import sys as _sys

DEBUG = _logging.DEBUG
INFO = _logging.INFO
WARN = _logging.WARN
ERROR = _logging.ERROR
FATAL = _logging.FATAL



class _StderrHandler(_logging.StreamHandler):
    """Writes to whatever `sys.stderr` is at the time of each message (tests may replace it)."""

    @property
    def stream(self):
        return _sys.stderr

    @stream.setter
    def stream(self, value):
        pass


_logger = _logging.getLogger("graphflow")
if not _logger.handlers:
    _handler = _StderrHandler()
    _handler.setFormatter(_logging.Formatter("%(levelname)s:%(name)s:%(message)s"))
    _logger.addHandler(_handler)
    _logger.setLevel(WARN)
    _logger.propagate = False

_counts = {}


def get_logger():
    """The `logging.Logger` behind tf.logging."""
    return _logger


def set_verbosity(v):
    """Log messages of level `v` (DEBUG, INFO, WARN, ERROR, FATAL) and above."""
    _logger.setLevel(v)


def get_verbosity():
    return _logger.getEffectiveLevel()


def log(level, msg, *args, **kwargs):
    _logger.log(level, msg, *args, **kwargs)


def debug(msg, *args, **kwargs):
    _logger.debug(msg, *args, **kwargs)


def info(msg, *args, **kwargs):
    _logger.info(msg, *args, **kwargs)


def warning(msg, *args, **kwargs):
    _logger.warning(msg, *args, **kwargs)


warn = warning


def error(msg, *args, **kwargs):
    _logger.error(msg, *args, **kwargs)


def fatal(msg, *args, **kwargs):
    _logger.critical(msg, *args, **kwargs)


def vlog(level, msg, *args, **kwargs):
    _logger.log(level, msg, *args, **kwargs)


def _caller_key():
    frame = _sys._getframe(2)
    return (frame.f_code.co_filename, frame.f_lineno)


def log_every_n(level, msg, n, *args):
    """Log `msg` on the 1st, (n+1)th, (2n+1)th ... call from the same line."""
    key = _caller_key()
    count = _counts.get(key, 0)
    _counts[key] = count + 1
    if count % n == 0:
        _logger.log(level, msg, *args)


def log_first_n(level, msg, n, *args):
    """Log `msg` only on the first `n` calls from the same line."""
    key = _caller_key()
    count = _counts.get(key, 0)
    _counts[key] = count + 1
    if count < n:
        _logger.log(level, msg, *args)


def log_if(level, msg, condition, *args):
    if condition:
        _logger.log(level, msg, *args)


def flush():
    for handler in _logger.handlers:
        handler.flush()


__all__ = ["DEBUG", "INFO", "WARN", "ERROR", "FATAL", "set_verbosity", "get_verbosity", "get_logger",
           "log", "debug", "info", "warn", "warning", "error", "fatal", "vlog", "log_every_n",
           "log_first_n", "log_if", "flush"]
