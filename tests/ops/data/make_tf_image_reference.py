"""Writes tf_image_reference.json, the TensorFlow numbers tests/ops/test_image_ops.py compares
with. Run with a TensorFlow installation (not a graphflow dependency):

    python tests/ops/data/make_tf_image_reference.py

It resizes one 1x3x4x2 image with tf.compat.v1.image.resize_bilinear / resize_nearest_neighbor
under the three attr settings to two sizes, and standardizes it (graph mode, float32)."""

import json
import pathlib

import numpy as np
import tensorflow.compat.v1 as tf

IMAGE = ((np.arange(24, dtype=np.float32).reshape(1, 3, 4, 2) * 7) % 11) / 3
SETTINGS = [{}, {"align_corners": True}, {"half_pixel_centers": True}]
SIZES = [[5, 3], [2, 6]]


def main():
    tf.disable_v2_behavior()
    out = {"resize": [], "tensorflow": tf.__version__}
    with tf.Session() as sess:
        for attrs in SETTINGS:
            for fn in ("resize_bilinear", "resize_nearest_neighbor"):
                for size in SIZES:
                    value = sess.run(getattr(tf.image, fn)(IMAGE, size, **attrs))
                    out["resize"].append({"fn": fn, "size": size, "attrs": attrs,
                                          "values": value.reshape(-1).tolist()})
        out["standardized"] = sess.run(tf.image.per_image_standardization(IMAGE[0])).reshape(
            -1).tolist()
    path = pathlib.Path(__file__).with_name("tf_image_reference.json")
    path.write_text(json.dumps(out, indent=0) + "\n")


if __name__ == "__main__":
    main()
