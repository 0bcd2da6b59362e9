"""`tf.DeviceSpec` (parsing, printing, merging as TF1's DeviceSpecV1) and `canonical_device`; the
expected strings are TensorFlow's."""

import pytest

import graphflow as tf
from graphflow.framework.device_spec import canonical_device


@pytest.mark.parametrize("spec, printed, fields", [
    ("/gpu:0", "/device:GPU:0", (None, None, None, "GPU", 0)),
    ("/job:ps/task:1/cpu:0", "/job:ps/task:1/device:CPU:0", ("ps", None, 1, "CPU", 0)),
    ("/device:GPU:1", "/device:GPU:1", (None, None, None, "GPU", 1)),
    ("gpu:2", "/device:GPU:2", (None, None, None, "GPU", 2)),
    ("/replica:0/device:CPU:*", "/replica:0/device:CPU:*", (None, 0, None, "CPU", None)),
    ("/job:worker", "/job:worker", ("worker", None, None, None, None)),
    ("", "", (None, None, None, None, None)),
])
def test_from_string_and_to_string_as_tf(spec, printed, fields):
    d = tf.DeviceSpec.from_string(spec)
    assert d.to_string() == printed
    assert (d.job, d.replica, d.task, d.device_type, d.device_index) == fields


def test_merge_replace_and_equality():
    a = tf.DeviceSpec.from_string("/job:ps/cpu:0")
    a.merge_from(tf.DeviceSpec(device_type="GPU", device_index=1))
    assert a.to_string() == "/job:ps/device:GPU:1"
    assert tf.DeviceSpec(job="ps", task=0).replace(device_type="CPU").to_string() == \
        "/job:ps/task:0/device:CPU:*"
    assert tf.DeviceSpec(job="ps") == tf.DeviceSpec.from_string("/job:ps")
    assert hash(tf.DeviceSpec(job="ps")) == hash(tf.DeviceSpec.from_string("/job:ps"))
    assert tf.DeviceSpec(device_type="gpu", device_index=0).to_string() == "/device:GPU:0"
    merged = tf.DeviceSpec(job="a").make_merged_spec("/gpu:3")
    assert merged.to_string() == "/job:a/device:GPU:3"
    with pytest.raises(TypeError, match="no field 'color'"):
        tf.DeviceSpec().replace(color=1)


def test_unknown_parts_are_refused():
    with pytest.raises(ValueError, match="Unknown attribute 'foo'"):
        tf.DeviceSpec.from_string("/foo:3")
    with pytest.raises(ValueError, match="Unknown device specification"):
        canonical_device("/device:TPU:0")


@pytest.mark.parametrize("spec, want", [
    ("/gpu:0", "/gpu:0"), ("/device:GPU:1", "/gpu:1"), ("gpu", "/gpu:0"), ("cuda:0", "/gpu:0"),
    ("/job:localhost/replica:0/task:0/device:CPU:0", "/cpu:0"), ("/job:worker", ""), (None, ""),
    (tf.DeviceSpec(device_type="GPU", device_index=2), "/gpu:2"),
])
def test_canonical_device_keeps_the_device_part(spec, want):
    assert canonical_device(spec) == want
