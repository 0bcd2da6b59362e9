"""tf.summary ops: tags and scopes, collections, TF1's histogram buckets and image scaling, text,
audio and merge, checked by parsing the serialized Summary with TensorBoard's protos."""

import io
import wave

import numpy as np
import pytest

import graphflow as tf

summary_pb2 = pytest.importorskip("tensorboard.compat.proto.summary_pb2",
                                  reason="tf.summary needs the tensorboard package")


def _parse(value):
    assert isinstance(value, bytes)  # a scalar tf.string fetches as bytes, as in TF1
    return summary_pb2.Summary.FromString(value)


def test_scalar_tag_follows_name_scopes_and_repeats_are_numbered():
    x = tf.placeholder(tf.float32, [])
    with tf.name_scope("train"):
        a = tf.summary.scalar("loss", x)
        b = tf.summary.scalar("loss", x * 2.0)
    assert a.op.name == "train/loss" and b.op.name == "train/loss_1"
    assert a.dtype == tf.string and a.shape.as_list() == []
    with tf.Session() as sess:
        va, vb = sess.run([a, b], {x: 1.25})
    assert [(v.tag, v.simple_value) for v in _parse(va).value] == [("train/loss", 1.25)]
    assert [(v.tag, v.simple_value) for v in _parse(vb).value] == [("train/loss_1", 2.5)]


def test_scalar_rejects_several_values_when_built():
    with pytest.raises(ValueError, match="single value"):
        tf.summary.scalar("bad", tf.zeros([3]))


def test_collections_and_merge_all():
    x = tf.placeholder(tf.float32, [4])
    s1 = tf.summary.scalar("average", tf.reduce_mean(x))
    s2 = tf.summary.histogram("values", x)
    s3 = tf.summary.scalar("other", tf.reduce_max(x), collections=["extra"])
    assert tf.get_collection(tf.GraphKeys.SUMMARIES) == [s1, s2]
    assert tf.get_collection("extra") == [s3]
    merged = tf.summary.merge_all()
    assert merged.op.type == "MergeSummary" and merged.op.name == "Merge/MergeSummary"
    assert tf.summary.merge_all(key="nothing here") is None
    with tf.Session() as sess:
        value = sess.run(merged, {x: [1.0, 2.0, 3.0, 6.0]})
    got = _parse(value)
    assert [v.tag for v in got.value] == ["average", "values"]
    assert got.value[0].simple_value == 3.0
    histo = got.value[1].histo
    assert (histo.min, histo.max, histo.num, histo.sum, histo.sum_squares) == (1, 6, 4, 12, 50)


def test_histogram_buckets_are_tf1s():
    # bucket upper limits grow by 10% from 1e-12; runs of empty buckets collapse into one
    with tf.Session() as sess:
        histo = _parse(sess.run(tf.summary.histogram("h", [1.0, 1.0, -3.0]))).value[0].histo
    assert sum(histo.bucket) == 3 and len(histo.bucket) == len(histo.bucket_limit)
    limits = np.array(histo.bucket_limit)
    above_one = int(np.searchsorted(limits, 1.0, side="right"))
    assert np.isclose(limits[above_one], 1.0089710279437536) and histo.bucket[above_one] == 2.0
    neg = [(lim, c) for lim, c in zip(limits, histo.bucket) if c == 1.0]
    assert len(neg) == 1 and -3.0 < neg[0][0] <= -3.0 / 1.1 + 1e-9
    assert limits[-1] == np.finfo(np.float64).max


def test_histogram_of_nan_fails_naming_the_op():
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError, match="'weights'.*Nan in summary"):
            sess.run(tf.summary.histogram("weights", [1.0, np.nan]))


def _png_pixels(encoded):
    from PIL import Image
    return np.array(Image.open(io.BytesIO(encoded)))


def test_image_tags_sizes_and_tf1_scaling():
    pil = pytest.importorskip("PIL", reason="Pillow decodes the PNGs in this test")
    assert pil
    images = np.zeros([3, 2, 4, 3], np.float32)
    images[:, 0, 0, 0] = 2.0           # all >= 0: scaled so the largest is 255
    images[1, 1, 1, 1] = -4.0          # image 1 has a negative: 0 -> 128, -4 -> 1, 2 -> 128 + 63
    with tf.Session() as sess:
        got = _parse(sess.run(tf.summary.image("digits", images, max_outputs=2)))
        single = _parse(sess.run(tf.summary.image("one", np.full([3, 2, 4, 1], 7, np.uint8),
                                                  max_outputs=1)))
    assert [v.tag for v in got.value] == ["digits/image/0", "digits/image/1"]
    first, second = (v.image for v in got.value)
    assert (first.height, first.width, first.colorspace) == (2, 4, 3)
    p0, p1 = _png_pixels(first.encoded_image_string), _png_pixels(second.encoded_image_string)
    assert p0.shape == (2, 4, 3) and p0[0, 0, 0] == 255 and p0[1, 1, 1] == 0
    assert p1[1, 1, 1] == 1 and p1[0, 0, 1] == 128 and p1[0, 0, 0] == 128 + int(2 * 127 / 4)
    assert [v.tag for v in single.value] == ["one/image"]
    assert np.all(_png_pixels(single.value[0].image.encoded_image_string) == 7)


def test_text_and_audio():
    with tf.Session() as sess:
        text, audio = sess.run([tf.summary.text("notes", "ready **now**"),
                                tf.summary.audio("beep", np.full([2, 80], 0.5, np.float32), 16000,
                                                 max_outputs=1)])
    value = _parse(text).value[0]
    assert value.tag == "notes" and value.metadata.plugin_data.plugin_name == "text"
    assert list(value.tensor.string_val) == [b"ready **now**"]
    clip = _parse(audio).value[0]
    assert clip.tag == "beep/audio" and clip.audio.length_frames == 80
    with wave.open(io.BytesIO(clip.audio.encoded_audio_string)) as wav:
        assert (wav.getframerate(), wav.getnchannels(), wav.getnframes()) == (16000, 1, 80)
        assert np.all(np.frombuffer(wav.readframes(80), "<i2") == 16383)


def test_merge_rejects_duplicate_tags_when_run():
    x = tf.constant(1.0)
    a = tf.summary.scalar("same", x, collections=[])
    merged = tf.summary.merge([a, a])
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError, match="Duplicate tag"):
            sess.run(merged)


def test_family_and_tag_cleaning_follow_tf1():
    x = tf.constant(1.0)
    grouped = tf.summary.scalar("loss", x, family="train")
    cleaned = tf.summary.scalar("my loss:1", x)
    assert grouped.op.name == "train/loss" and cleaned.op.name == "my_loss_1"
    with tf.Session() as sess:
        assert _parse(sess.run(grouped)).value[0].tag == "train/train/loss"
        assert _parse(sess.run(cleaned)).value[0].tag == "my_loss_1"
