"""`graphflow.python`: the import paths TF1 programs spell as `tensorflow.python...`
(`from tensorflow.python.client import timeline`)."""

from graphflow.python import client

__all__ = ["client"]
