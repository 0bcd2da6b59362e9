"""tf.train.Example messages: TensorFlow's wire format (field numbers, packing), checked against
bytes TensorFlow's own example_pb2 wrote for the same message."""

import pytest

from graphflow.framework import example_proto as e

# tensorflow.core.example.example_pb2: Example(features={'x': float_list [1.5, 2], 'y': int64_list
# [3], 'b': bytes_list [b'hi']}).SerializeToString(deterministic=True)
TF_BYTES = bytes.fromhex("0a2c0a0b0a016212060a040a0268690a110a0178120c120a0a080000c03f000000400a0a0a"
                         "017912051a030a0103")


def _example():
    return e.Example(features=e.Features(feature={
        "x": e.Feature(float_list=e.FloatList(value=[1.5, 2])),
        "y": e.Feature(int64_list=e.Int64List(value=[3])),
        "b": e.Feature(bytes_list=e.BytesList(value=[b"hi"]))}))


def test_serialization_is_tensorflows_byte_for_byte():
    assert _example().SerializeToString(deterministic=True) == TF_BYTES


def test_tensorflows_bytes_parse_back():
    features = e.Example.FromString(TF_BYTES).features.feature
    assert list(features["x"].float_list.value) == [1.5, 2.0]
    assert list(features["y"].int64_list.value) == [3]
    assert list(features["b"].bytes_list.value) == [b"hi"]
    assert features["x"].WhichOneof("kind") == "float_list"


def test_messages_have_tensorflows_names():
    assert e.Example.DESCRIPTOR.full_name == "tensorflow.Example"
    assert e.Feature.DESCRIPTOR.fields_by_name["int64_list"].number == 3
    assert e.SequenceExample.DESCRIPTOR.fields_by_name["feature_lists"].number == 2
    assert e.Example.DESCRIPTOR.file.name == "tensorflow/core/example/example.proto"


def test_sequence_example_round_trip():
    seq = e.SequenceExample(context=e.Features(feature={"n": e.Feature(
        int64_list=e.Int64List(value=[2]))}), feature_lists=e.FeatureLists(feature_list={
            "w": e.FeatureList(feature=[e.Feature(bytes_list=e.BytesList(value=[b"a"]))])}))
    back = e.SequenceExample.FromString(seq.SerializeToString())
    assert back.feature_lists.feature_list["w"].feature[0].bytes_list.value[0] == b"a"


def test_unknown_name_is_an_attribute_error():
    with pytest.raises(AttributeError):
        e.NotAMessage  # noqa: B018


def test_missing_protobuf_names_the_extra(monkeypatch):
    import sys
    monkeypatch.setattr(e, "_classes", {})
    monkeypatch.setitem(sys.modules, "google.protobuf", None)
    with pytest.raises(ImportError, match=r"graphflow\[records\]"):
        e.message_class("Example")
