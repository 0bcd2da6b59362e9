"""TensorFlow's protocol buffer messages, for the readers and writers of TensorFlow's files.

Most of TensorFlow's schemas come compiled with TensorBoard (`tensorboard.compat.proto`, package
`tensorboard`): GraphDef, NodeDef, AttrValue, TensorProto, TensorShapeProto, MetaGraphDef,
SaverDef, SignatureDef, FunctionDefLibrary, VersionDef. A message's wire and text forms do not
depend on its package name, so files TensorFlow wrote parse with these classes and files written
with them are what TensorFlow reads.

Four small messages TensorBoard does not ship are declared here, field for field as TensorFlow's
.proto files declare them (under the package `graphflow.tfproto`, so they can never collide with
TensorFlow's own classes in a process that imports both):

    TensorSliceProto   (tensorflow/core/framework/tensor_slice.proto)
    BundleHeaderProto, BundleEntryProto   (tensorflow/core/protobuf/tensor_bundle.proto)
    SavedModel         (tensorflow/core/protobuf/saved_model.proto)
    CheckpointState    (tensorflow/python/training/checkpoint_state.proto)

This module is imported only by the TensorFlow readers and writers, never by `import graphflow`.
"""

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
from tensorboard.compat.proto import (  # noqa: F401 - re-exported for the readers and writers
    attr_value_pb2,
    function_pb2,
    graph_pb2,
    meta_graph_pb2,
    node_def_pb2,
    saver_pb2,
    tensor_pb2,
    tensor_shape_pb2,
    types_pb2,
    versions_pb2,
)

GraphDef = graph_pb2.GraphDef
NodeDef = node_def_pb2.NodeDef
AttrValue = attr_value_pb2.AttrValue
NameAttrList = attr_value_pb2.NameAttrList
TensorProto = tensor_pb2.TensorProto
TensorShapeProto = tensor_shape_pb2.TensorShapeProto
MetaGraphDef = meta_graph_pb2.MetaGraphDef
CollectionDef = meta_graph_pb2.CollectionDef
SignatureDef = meta_graph_pb2.SignatureDef
TensorInfo = meta_graph_pb2.TensorInfo
AssetFileDef = meta_graph_pb2.AssetFileDef
SaverDef = saver_pb2.SaverDef
FunctionDefLibrary = function_pb2.FunctionDefLibrary
FunctionDef = function_pb2.FunctionDef
VersionDef = versions_pb2.VersionDef
DataType = types_pb2.DataType

_PACKAGE = "graphflow.tfproto"
_FILE = "graphflow/fileformat/tf_extra.proto"

_T = descriptor_pb2.FieldDescriptorProto
_OPTIONAL, _REPEATED = _T.LABEL_OPTIONAL, _T.LABEL_REPEATED


def _field(message, name, number, kind, label=_OPTIONAL, type_name=None, oneof=None):
    field = message.field.add(name=name, number=number, type=kind, label=label)
    if type_name:
        field.type_name = type_name
    if oneof is not None:
        field.oneof_index = oneof
    return field


def _declare():
    """The FileDescriptorProto of the four messages (proto3, as TensorFlow declares them)."""
    f = descriptor_pb2.FileDescriptorProto(name=_FILE, package=_PACKAGE, syntax="proto3")
    f.dependency.extend([types_pb2.DESCRIPTOR.name, tensor_shape_pb2.DESCRIPTOR.name,
                         versions_pb2.DESCRIPTOR.name, meta_graph_pb2.DESCRIPTOR.name])

    # message TensorSliceProto { message Extent { int64 start = 1;
    #   oneof has_length { int64 length = 2; } } repeated Extent extent = 1; }
    tensor_slice = f.message_type.add(name="TensorSliceProto")
    extent = tensor_slice.nested_type.add(name="Extent")
    extent.oneof_decl.add(name="has_length")
    _field(extent, "start", 1, _T.TYPE_INT64)
    _field(extent, "length", 2, _T.TYPE_INT64, oneof=0)
    _field(tensor_slice, "extent", 1, _T.TYPE_MESSAGE, _REPEATED,
           f".{_PACKAGE}.TensorSliceProto.Extent")

    # message BundleHeaderProto { int32 num_shards = 1; enum Endianness { LITTLE = 0; BIG = 1; }
    #   Endianness endianness = 2; VersionDef version = 3; }
    header = f.message_type.add(name="BundleHeaderProto")
    endianness = header.enum_type.add(name="Endianness")
    endianness.value.add(name="LITTLE", number=0)
    endianness.value.add(name="BIG", number=1)
    _field(header, "num_shards", 1, _T.TYPE_INT32)
    _field(header, "endianness", 2, _T.TYPE_ENUM,
           type_name=f".{_PACKAGE}.BundleHeaderProto.Endianness")
    _field(header, "version", 3, _T.TYPE_MESSAGE, type_name=".tensorboard.VersionDef")

    # message BundleEntryProto { DataType dtype = 1; TensorShapeProto shape = 2; int32 shard_id = 3;
    #   int64 offset = 4; int64 size = 5; fixed32 crc32c = 6; repeated TensorSliceProto slices = 7; }
    entry = f.message_type.add(name="BundleEntryProto")
    _field(entry, "dtype", 1, _T.TYPE_ENUM, type_name=".tensorboard.DataType")
    _field(entry, "shape", 2, _T.TYPE_MESSAGE, type_name=".tensorboard.TensorShapeProto")
    _field(entry, "shard_id", 3, _T.TYPE_INT32)
    _field(entry, "offset", 4, _T.TYPE_INT64)
    _field(entry, "size", 5, _T.TYPE_INT64)
    _field(entry, "crc32c", 6, _T.TYPE_FIXED32)
    _field(entry, "slices", 7, _T.TYPE_MESSAGE, _REPEATED, f".{_PACKAGE}.TensorSliceProto")

    # message SavedModel { int64 saved_model_schema_version = 1;
    #   repeated MetaGraphDef meta_graphs = 2; }
    saved_model = f.message_type.add(name="SavedModel")
    _field(saved_model, "saved_model_schema_version", 1, _T.TYPE_INT64)
    _field(saved_model, "meta_graphs", 2, _T.TYPE_MESSAGE, _REPEATED,
           ".tensorboard.MetaGraphDef")

    # message CheckpointState { string model_checkpoint_path = 1;
    #   repeated string all_model_checkpoint_paths = 2;
    #   repeated double all_model_checkpoint_timestamps = 3; double last_preserved_timestamp = 4; }
    state = f.message_type.add(name="CheckpointState")
    _field(state, "model_checkpoint_path", 1, _T.TYPE_STRING)
    _field(state, "all_model_checkpoint_paths", 2, _T.TYPE_STRING, _REPEATED)
    _field(state, "all_model_checkpoint_timestamps", 3, _T.TYPE_DOUBLE, _REPEATED)
    _field(state, "last_preserved_timestamp", 4, _T.TYPE_DOUBLE)
    return f


def _messages():
    pool = descriptor_pool.Default()
    try:
        file_descriptor = pool.FindFileByName(_FILE)
    except KeyError:
        file_descriptor = pool.Add(_declare())
        file_descriptor = pool.FindFileByName(_FILE)
    return {name: message_factory.GetMessageClass(file_descriptor.message_types_by_name[name])
            for name in ("TensorSliceProto", "BundleHeaderProto", "BundleEntryProto",
                         "SavedModel", "CheckpointState")}


_CLASSES = _messages()
TensorSliceProto = _CLASSES["TensorSliceProto"]
BundleHeaderProto = _CLASSES["BundleHeaderProto"]
BundleEntryProto = _CLASSES["BundleEntryProto"]
SavedModel = _CLASSES["SavedModel"]
CheckpointState = _CLASSES["CheckpointState"]
