"""TensorFlow 1's dataflow control flow (Switch/Merge for tf.cond, Enter/Merge/Switch/LoopCond/
NextIteration/Exit frames for tf.while_loop), as frozen TensorFlow 1 graphs hold it.

graphflow's control flow is functional (If/While over function graphs); this reader does not yet
raise dataflow frames into them, so a graph holding them is one clear error naming the ops.
"""

from graphflow.framework.errors import GraphFormatError


def lift(nodes, library, source, limits):
    """The nodes with the dataflow control flow raised into functional ops; today: the error."""
    found = sorted({n.op for n in nodes if n.op in _V1})
    names = [n.name for n in nodes if n.op in _V1][:8]
    where = f"{source}: " if source else ""
    raise GraphFormatError(
        f"{where}the graph uses TensorFlow 1 dataflow control flow ({', '.join(found)}; nodes "
        f"{names}): graphflow imports functional control flow only. Re-export the graph from "
        "TensorFlow with control flow v2 (tf.compat.v1.enable_control_flow_v2()), which writes "
        "If/While ops")


_V1 = frozenset(("Switch", "Merge", "Enter", "Exit", "NextIteration", "LoopCond", "RefSwitch",
                 "RefMerge", "RefEnter", "RefExit", "RefNextIteration"))
