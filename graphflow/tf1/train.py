"""`tf.train`: optimizers, the global step and learning-rate schedules under TF1's names.

The optimizer classes live in `graphflow.tf1.optimizers` (update ops in `graphflow.ops.training_ops`);
this module is the TF1-shaped namespace users reach as `tf.train.AdamOptimizer(...)`.
"""

from graphflow.fileformat.checkpoint import (  # noqa: F401
    CheckpointState,
    Saver,
    SaverDef,
    checkpoint_exists,
    get_checkpoint_state,
    latest_checkpoint,
)
from graphflow.framework import dtypes
from graphflow.framework.graph import GraphKeys, get_default_graph
from graphflow.ops.core_ops import convert_to_tensor
from graphflow.ops.state_ops import Variable
from graphflow.tf1.checkpoint_utils import (  # noqa: F401
    NewCheckpointReader,
    init_from_checkpoint,
    list_variables,
    load_checkpoint,
    load_variable,
)
from graphflow.tf1.ftrl import FtrlOptimizer
from graphflow.tf1.learning_rate_decay import (  # noqa: F401
    cosine_decay,
    cosine_decay_restarts,
    exponential_decay,
    inverse_time_decay,
    linear_cosine_decay,
    natural_exp_decay,
    piecewise_constant,
    polynomial_decay,
)
from graphflow.tf1.meta_graph import export_meta_graph, read_meta_graph_file  # noqa: F401
from graphflow.tf1.moving_averages import ExponentialMovingAverage  # noqa: F401
from graphflow.tf1.optimizers import (
    AdadeltaOptimizer,
    AdagradOptimizer,
    AdamOptimizer,
    GradientDescentOptimizer,
    MomentumOptimizer,
    Optimizer,
    RMSPropOptimizer,
)
from graphflow.tf1.session_hooks import (  # noqa: F401
    CheckpointSaverHook,
    FeedFnHook,
    LoggingTensorHook,
    NanLossDuringTrainingError,
    NanTensorHook,
    SecondOrStepTimer,
    SessionRunArgs,
    SessionRunContext,
    SessionRunHook,
    SessionRunValues,
    StopAtStepHook,
)
from graphflow.tf1.training_session import (  # noqa: F401
    ChiefSessionCreator,
    MonitoredSession,
    MonitoredTrainingSession,
    Scaffold,
    SingularMonitoredSession,
    Supervisor,
)


def get_global_step(graph=None):
    """The global step variable of `graph` (default graph if None), or None if there is none."""
    graph = graph or get_default_graph()
    found = graph.get_collection(GraphKeys.GLOBAL_STEP)
    if len(found) > 1:
        raise TypeError("Multiple tensors in global_step collection.")
    if found:
        step = found[0]
    else:
        try:
            step = graph.get_tensor_by_name("global_step:0")
        except KeyError:
            return None
    if not step.dtype.is_integer:
        raise TypeError(f"Existing \"global_step\" does not have integer type: {step.dtype.name}")
    if step.shape.ndims not in (None, 0):
        raise TypeError(f"Existing \"global_step\" is not scalar: {step.shape}")
    return step


def create_global_step(graph=None):
    """Create the int64 scalar `global_step` variable (0, not trainable) in `graph`."""
    graph = graph or get_default_graph()
    if get_global_step(graph) is not None:
        raise ValueError("\"global_step\" already exists.")
    with graph.as_default(), graph.name_scope(None), graph.control_dependencies(None):
        return Variable(convert_to_tensor(0, dtype=dtypes.int64), trainable=False,
                        name="global_step",
                        collections=[GraphKeys.GLOBAL_VARIABLES, GraphKeys.GLOBAL_STEP])


def get_or_create_global_step(graph=None):
    """The global step of `graph`, created first if it does not exist."""
    graph = graph or get_default_graph()
    step = get_global_step(graph)
    return step if step is not None else create_global_step(graph)


def global_step(sess, global_step_tensor):
    """The current value of the global step as a Python int."""
    if isinstance(global_step_tensor, int):
        return global_step_tensor
    return int(sess.run(global_step_tensor))


__all__ = ["Optimizer", "GradientDescentOptimizer", "MomentumOptimizer", "AdamOptimizer",
           "RMSPropOptimizer", "AdagradOptimizer", "AdadeltaOptimizer", "FtrlOptimizer",
           "get_global_step",
           "create_global_step",
           "get_or_create_global_step", "global_step", "exponential_decay", "natural_exp_decay",
           "inverse_time_decay", "polynomial_decay", "cosine_decay", "piecewise_constant",
           "cosine_decay_restarts", "linear_cosine_decay",
           "ExponentialMovingAverage", "list_variables", "load_variable", "load_checkpoint",
           "NewCheckpointReader", "init_from_checkpoint", "Saver", "SaverDef",
           "latest_checkpoint", "get_checkpoint_state", "checkpoint_exists", "CheckpointState",
           "SessionRunHook", "SessionRunArgs", "SessionRunContext", "SessionRunValues",
           "SecondOrStepTimer", "LoggingTensorHook", "StopAtStepHook", "CheckpointSaverHook",
           "NanTensorHook", "NanLossDuringTrainingError", "FeedFnHook", "Scaffold",
           "ChiefSessionCreator", "MonitoredSession", "SingularMonitoredSession",
           "MonitoredTrainingSession", "Supervisor", "export_meta_graph", "read_meta_graph_file",
           "Coordinator", "QueueRunner", "add_queue_runner", "batch", "batch_join",
           "input_producer", "range_input_producer", "shuffle_batch", "shuffle_batch_join",
           "slice_input_producer", "start_queue_runners", "string_input_producer", "limit_epochs",
           "maybe_batch", "maybe_shuffle_batch"]

# TF1's queue-based input pipelines (graphflow.tf1.data.queue_runners, input_producers)
from graphflow.tf1.data.input_producers import (  # noqa: E402, F401
    batch,
    batch_join,
    input_producer,
    limit_epochs,
    maybe_batch,
    maybe_shuffle_batch,
    range_input_producer,
    shuffle_batch,
    shuffle_batch_join,
    slice_input_producer,
    string_input_producer,
)
from graphflow.tf1.data.queue_runners import (  # noqa: E402, F401
    Coordinator,
    QueueRunner,
    add_queue_runner,
    start_queue_runners,
)
