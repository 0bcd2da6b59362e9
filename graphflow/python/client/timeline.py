"""`tensorflow.python.client.timeline` under graphflow's name: see `graphflow.tools.timeline`."""

from graphflow.tools.timeline import Timeline

__all__ = ["Timeline"]
