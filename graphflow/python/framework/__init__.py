"""`graphflow.python.framework`: the modules TF1 programs import as
`from tensorflow.python.framework import ops, tensor_shape, dtypes, constant_op, graph_util`."""

__all__ = ["ops", "tensor_shape", "dtypes", "constant_op", "graph_util"]
