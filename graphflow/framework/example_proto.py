"""`tf.train.Example` and its parts (`Features`, `Feature`, `BytesList`, `FloatList`, `Int64List`,
`FeatureList`, `FeatureLists`, `SequenceExample`): the `tensorflow.Example` protobuf messages.

The message classes are built when first asked for, from descriptors written here with the same
package, file names, message names and field numbers as TensorFlow's `example.proto` and
`feature.proto` (proto3, packed float and int64 lists), so the bytes `SerializeToString` writes are
the bytes TensorFlow writes and either reads the other's. Encoding and decoding are the `protobuf`
package's (an optional dependency: `pip install 'graphflow[records]'`); the descriptors live in a
pool of their own, so they never clash with a TensorFlow or TensorBoard copy in the same process.
"""

import threading

PROTOBUF_HINT = "pip install 'graphflow[records]' (or pip install protobuf)"

MESSAGE_NAMES = ("BytesList", "FloatList", "Int64List", "Feature", "Features", "FeatureList",
                 "FeatureLists", "Example", "SequenceExample")

_lock = threading.Lock()
_classes = {}


def _require_protobuf(what):
    try:
        from google.protobuf import descriptor_pb2, descriptor_pool
    except ImportError:
        raise ImportError(f"{what} needs the protobuf package, which is not installed: "
                          f"{PROTOBUF_HINT}") from None
    return descriptor_pb2, descriptor_pool


def _field(message, name, number, kind, label="optional", type_name=None, packed=False,
           oneof=None):
    from google.protobuf import descriptor_pb2 as d
    f = message.field.add(name=name, number=number)
    f.label = {"optional": d.FieldDescriptorProto.LABEL_OPTIONAL,
               "repeated": d.FieldDescriptorProto.LABEL_REPEATED}[label]
    f.type = {"bytes": d.FieldDescriptorProto.TYPE_BYTES,
              "float": d.FieldDescriptorProto.TYPE_FLOAT,
              "int64": d.FieldDescriptorProto.TYPE_INT64,
              "string": d.FieldDescriptorProto.TYPE_STRING,
              "message": d.FieldDescriptorProto.TYPE_MESSAGE}[kind]
    if type_name:
        f.type_name = type_name
    if packed:
        f.options.packed = True
    if oneof is not None:
        f.oneof_index = oneof
    return f


def _map_field(message, name, value_type):
    """A proto3 `map<string, value_type> name = 1;` (a repeated nested map-entry message)."""
    entry_name = "".join(p.capitalize() for p in name.split("_")) + "Entry"
    entry = message.nested_type.add(name=entry_name)
    entry.options.map_entry = True
    _field(entry, "key", 1, "string")
    _field(entry, "value", 2, "message", type_name=value_type)
    _field(message, name, 1, "message", "repeated", f".tensorflow.{message.name}.{entry_name}")


def _file_protos(descriptor_pb2):
    feature = descriptor_pb2.FileDescriptorProto(
        name="tensorflow/core/example/feature.proto", package="tensorflow", syntax="proto3")
    _field(feature.message_type.add(name="BytesList"), "value", 1, "bytes", "repeated")
    _field(feature.message_type.add(name="FloatList"), "value", 1, "float", "repeated", packed=True)
    _field(feature.message_type.add(name="Int64List"), "value", 1, "int64", "repeated", packed=True)
    f = feature.message_type.add(name="Feature")
    f.oneof_decl.add(name="kind")
    for number, name in enumerate(("bytes_list", "float_list", "int64_list"), start=1):
        list_type = ".tensorflow." + "".join(p.capitalize() for p in name.split("_"))
        _field(f, name, number, "message", type_name=list_type, oneof=0)
    _map_field(feature.message_type.add(name="Features"), "feature", ".tensorflow.Feature")
    _field(feature.message_type.add(name="FeatureList"), "feature", 1, "message", "repeated",
           ".tensorflow.Feature")
    _map_field(feature.message_type.add(name="FeatureLists"), "feature_list",
               ".tensorflow.FeatureList")
    example = descriptor_pb2.FileDescriptorProto(
        name="tensorflow/core/example/example.proto", package="tensorflow", syntax="proto3",
        dependency=[feature.name])
    _field(example.message_type.add(name="Example"), "features", 1, "message",
           type_name=".tensorflow.Features")
    seq = example.message_type.add(name="SequenceExample")
    _field(seq, "context", 1, "message", type_name=".tensorflow.Features")
    _field(seq, "feature_lists", 2, "message", type_name=".tensorflow.FeatureLists")
    return feature, example


def _message_class(pool, full_name):
    from google.protobuf import message_factory
    descriptor = pool.FindMessageTypeByName(full_name)
    if hasattr(message_factory, "GetMessageClass"):
        return message_factory.GetMessageClass(descriptor)
    return message_factory.MessageFactory(pool).GetPrototype(descriptor)  # protobuf < 4.22


def message_classes(what="tf.train.Example"):
    """{name: message class} for the names in MESSAGE_NAMES (built once per process)."""
    with _lock:
        if not _classes:
            descriptor_pb2, descriptor_pool = _require_protobuf(what)
            pool = descriptor_pool.DescriptorPool()
            for proto in _file_protos(descriptor_pb2):
                pool.Add(proto)
            for name in MESSAGE_NAMES:
                _classes[name] = _message_class(pool, f"tensorflow.{name}")
        return _classes


def message_class(name):
    """The message class `tensorflow.<name>` (e.g. "Example")."""
    return message_classes(f"tf.train.{name}")[name]


def __getattr__(name):
    """`example_proto.Example` etc.: the message classes, built on first use."""
    if name in MESSAGE_NAMES:
        return message_class(name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
