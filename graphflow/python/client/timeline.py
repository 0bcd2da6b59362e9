"""`tensorflow.python.client.timeline` under graphflow's name: see `graphflow.fileformat.timeline`."""

from graphflow.fileformat.timeline import Timeline

__all__ = ["Timeline"]
