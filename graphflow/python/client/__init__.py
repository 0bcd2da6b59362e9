"""`graphflow.python.client`: `timeline` (as `tensorflow.python.client.timeline`)."""

from graphflow.python.client import timeline

__all__ = ["timeline"]
