"""TF1 programs over `tf.image` that run unchanged under graphflow and under TensorFlow
(`program(tf, np) -> {name: array}`, tf being `graphflow` or `tensorflow.compat.v1` in graph
mode). tests/tf1/test_image_*.py compare graphflow's results with TensorFlow 2.21's, recorded in
image_reference.json; run this file with TensorFlow's Python to record them again:

    /path/to/tf/python tests/tf1/image_programs.py
"""

import json
import pathlib
import sys

REFERENCE = pathlib.Path(__file__).with_name("image_reference.json")


def _images(np):
    """RGB floats in [0, 1] with the cases HSV has to get right: greys, ties between channels,
    black, white, each primary and secondary colour."""
    rng = np.random.default_rng(7)
    special = np.array([[0, 0, 0], [1, 1, 1], [0.5, 0.5, 0.5], [1, 0, 0], [0, 1, 0], [0, 0, 1],
                        [1, 1, 0], [0, 1, 1], [1, 0, 1], [0.3, 0.3, 0.8], [0.8, 0.3, 0.3],
                        [0.3, 0.8, 0.8], [0.2, 0.6, 0.2], [0.9, 0.1, 0.5], [0.05, 0.9, 0.6],
                        [0.7, 0.7, 0.2]], np.float32)
    rand = rng.random((2, 4, 5, 3)).astype(np.float32)
    rand[0, 0, :4] = special[:4]
    rand[0, 1] = special[4:9]
    rand[1, 0] = special[9:14]
    rand[1, 1, :2] = special[14:]
    return rand


def color_program(tf, np):
    images = _images(np)
    u8 = (images * 255).astype(np.uint8)
    hsv = tf.image.rgb_to_hsv(images)
    out = {"rgb_to_hsv": hsv,
           "hsv_to_rgb": tf.image.hsv_to_rgb(tf.constant(images)),
           "round_trip": tf.image.hsv_to_rgb(hsv),
           "rgb_to_hsv_f64": tf.image.rgb_to_hsv(images.astype(np.float64))}
    for delta in (0.0, 0.2, -0.45, 0.9, -1.0):
        out[f"adjust_hue_{delta}"] = tf.image.adjust_hue(images, delta)
    out["adjust_hue_u8"] = tf.image.adjust_hue(u8, 0.3)
    for factor in (0.0, 0.5, 1.7, 4.0):
        out[f"adjust_saturation_{factor}"] = tf.image.adjust_saturation(images[0], factor)
    out["adjust_saturation_u8"] = tf.image.adjust_saturation(u8, 1.5)
    out["adjust_gamma"] = tf.image.adjust_gamma(images, 2.2, 0.9)
    out["adjust_gamma_u8"] = tf.image.adjust_gamma(u8, 0.5, 1.3)
    out["adjust_gamma_f64"] = tf.image.adjust_gamma(images.astype(np.float64), 1.5)
    for name in ("rgb_to_yiq", "yiq_to_rgb", "rgb_to_yuv", "yuv_to_rgb"):
        out[name] = getattr(tf.image, name)(images)
    out["grayscale_to_rgb"] = tf.image.grayscale_to_rgb(tf.constant(images[..., :1]))
    out["adjust_brightness_u8"] = tf.image.adjust_brightness(u8, -0.1)
    out["adjust_contrast_u8"] = tf.image.adjust_contrast(u8, 1.6)
    with tf.Session() as sess:
        return sess.run(out)


def geometry_program(tf, np):
    images = _images(np)
    k = tf.placeholder(tf.int32, [])
    out = {}
    for r in range(-1, 5):
        out[f"rot90_{r}"] = tf.image.rot90(images[0], r)
        out[f"rot90_batch_{r}"] = tf.image.rot90(images, r)
    out["transpose"] = tf.image.transpose_image(images[0])
    out["transpose_batch"] = tf.image.transpose_image(images)
    with tf.Session() as sess:
        values = sess.run(out)
        for r in (1, 2, 3, 6):
            values[f"rot90_fed_{r}"] = sess.run(tf.image.rot90(images, k), {k: r})
        return values


def metrics_program(tf, np):
    x = _images(np)
    images = tf.constant(x)
    other = np.clip(x + np.random.default_rng(3).normal(0, 0.1, images.shape), 0, 1).astype(
        np.float32)
    big = np.random.default_rng(4).random((2, 16, 13, 3)).astype(np.float32)
    big2 = np.clip(big * 0.8 + 0.1 * np.random.default_rng(5).random(big.shape), 0, 1).astype(
        np.float32)
    huge = np.random.default_rng(6).random((2, 50, 45, 3)).astype(np.float32)
    huge2 = np.clip(huge * 0.7 + 0.2 * np.random.default_rng(7).random(huge.shape), 0, 1).astype(
        np.float32)
    dy, dx = tf.image.image_gradients(images)
    out = {"total_variation": tf.image.total_variation(images),
           "total_variation_3d": tf.image.total_variation(images[1]),
           "dy": dy, "dx": dx,
           "sobel": tf.image.sobel_edges(images),
           "psnr": tf.image.psnr(images, other, 1.0),
           "psnr_u8": tf.image.psnr((x * 255).astype(np.uint8),
                                    (other * 255).astype(np.uint8), 255),
           "ssim": tf.image.ssim(big, big2, 1.0),
           "ssim_small_window": tf.image.ssim(big[0], big2[0], 1.0, filter_size=5,
                                              filter_sigma=0.8, k1=0.02, k2=0.05),
           "ssim_u8": tf.image.ssim((big * 255).astype(np.uint8), (big2 * 255).astype(np.uint8),
                                    255),
           "ssim_map": tf.image.ssim(big, big2, 1.0, return_index_map=True),
           "ms_ssim": tf.image.ssim_multiscale(huge, huge2, 1.0, filter_size=3),
           "ms_ssim_factors": tf.image.ssim_multiscale(huge[0], huge2[0], 1.0, (0.3, 0.5, 0.2),
                                                       filter_size=5, filter_sigma=1.0),
           "ms_ssim_u8": tf.image.ssim_multiscale((huge * 255).astype(np.uint8),
                                                  (huge2 * 255).astype(np.uint8), 255,
                                                  filter_size=3)}
    with tf.Session() as sess:
        return sess.run(out)


def resize_program(tf, np):
    rng = np.random.default_rng(0)
    img = (rng.random((2, 5, 7, 3)) * 10).astype(np.float32)
    ints = (rng.random((5, 7, 3)) * 255).astype(np.uint8)
    out = {}
    for size in ([9, 4], [3, 11], [2, 2], [1, 1], [13, 17]):
        for kw in ({}, {"align_corners": True}, {"half_pixel_centers": True}):
            out[f"bicubic_{size}_{sorted(kw)}"] = tf.image.resize_bicubic(img, size, **kw)
        out[f"area_{size}"] = tf.image.resize_area(img, size)
        out[f"area_align_{size}"] = tf.image.resize_area(img, size, align_corners=True)
    out["bicubic_u8"] = tf.image.resize_bicubic(ints[None], [8, 3])
    out["area_u8"] = tf.image.resize_area(ints[None], [3, 4])
    methods = [0, 1, 2, 3, "bilinear", "nearest", "bicubic", "area"]
    for m in methods:
        out[f"resize_{m}"] = tf.image.resize(img, [4, 9], method=m)
        out[f"resize_images_{m}_align"] = tf.image.resize_images(ints, [8, 5], method=m,
                                                                 align_corners=True)
        out[f"resize_aspect_{m}"] = tf.image.resize_images(img, [12, 12], method=m,
                                                           preserve_aspect_ratio=True)
        out[f"resize_with_pad_{m}"] = tf.image.resize_image_with_pad(img[0], 9, 4, method=m)
    out["resize_with_pad_batch"] = tf.image.resize_image_with_pad(img, 3, 11)
    out["resize_with_pad_u8"] = tf.image.resize_image_with_pad(ints, 6, 6, method=1)
    with tf.Session() as sess:
        return sess.run(out)


def _boxes(np, n, seed):
    rng = np.random.default_rng(seed)
    corners = rng.random((n, 2)).astype(np.float32) * 10
    boxes = np.concatenate([corners, corners + 0.5 + rng.random((n, 2)).astype(np.float32) * 4],
                           axis=1)
    boxes[::5] = boxes[::5][:, [2, 3, 0, 1]]  # corners the other way round
    boxes[7, 2] = boxes[7, 0]  # an empty box
    scores = rng.random(n).astype(np.float32)
    scores[10:14] = scores[3]  # ties: the lower index first
    return boxes, scores


def detection_program(tf, np):
    boxes, scores = _boxes(np, 60, 1)
    nms = tf.image
    out = {"nms": nms.non_max_suppression(boxes, scores, 40),
           "nms_iou": nms.non_max_suppression(boxes, scores, 40, iou_threshold=0.2),
           "nms_limit": nms.non_max_suppression(boxes, scores, 5, iou_threshold=0.7),
           "nms_zero": nms.non_max_suppression(boxes, scores, 0),
           "nms_score": nms.non_max_suppression(boxes, scores, 60, 0.4, score_threshold=0.5),
           "nms_iou0": nms.non_max_suppression(boxes, scores, 60, 0.0),
           "nms_iou1": nms.non_max_suppression(boxes, scores, 60, 1.0)}
    out["with_scores"] = nms.non_max_suppression_with_scores(boxes, scores, 30, 0.3, 0.2)
    for sigma in (0.1, 0.5, 2.0):
        out[f"soft_{sigma}"] = nms.non_max_suppression_with_scores(
            boxes, scores, 50, 0.5, 0.1, soft_nms_sigma=sigma)
    # TF1's non_max_suppression_padded is the op NonMaxSuppressionV4 (TF 2's compat.v1 name runs
    # a tiled algorithm whose picks differ from greedy NMS)
    if hasattr(tf, "raw_ops"):
        def padded(b, s, size, iou, score=float("-inf"), pad_to_max_output_size=False):
            return tf.raw_ops.NonMaxSuppressionV4(
                boxes=b, scores=s, max_output_size=size, iou_threshold=iou, score_threshold=score,
                pad_to_max_output_size=pad_to_max_output_size)
    else:
        padded = nms.non_max_suppression_padded
    out["padded"] = padded(boxes, scores, 45, 0.3, 0.2, pad_to_max_output_size=True)
    out["padded_short"] = padded(boxes, scores, 8, 0.5)
    with tf.Session() as sess:
        values = sess.run(out)
    flat = {}
    for k, v in values.items():
        if isinstance(v, tuple):
            flat.update({f"{k}_{i}": part for i, part in enumerate(v)})
        else:
            flat[k] = v
    return flat


def crop_program(tf, np):
    rng = np.random.default_rng(6)
    image = (rng.random((3, 7, 9, 2)) * 5).astype(np.float32)
    boxes = np.array([[0.1, 0.2, 0.8, 0.9], [0.0, 0.0, 1.0, 1.0], [0.7, 0.6, 0.2, 0.1],
                      [-0.3, 0.4, 0.6, 1.4], [0.25, 0.3, 0.55, 0.45], [0.5, 0.5, 0.5, 0.5]],
                     np.float32)
    box_ind = np.array([0, 2, 1, 1, 0, 2], np.int32)
    x = tf.constant(image)
    b = tf.constant(boxes)
    out = {}
    for method in ("bilinear", "nearest"):
        for size in ([4, 5], [1, 3], [6, 1], [1, 1]):
            crops = tf.image.crop_and_resize(x, b, box_ind, size, method=method,
                                             extrapolation_value=-1.5)
            out[f"{method}_{size}"] = crops
            weights = np.arange(6 * size[0] * size[1] * 2, dtype=np.float32).reshape(
                [6] + size + [2]) % 7 - 3
            gi, gb = tf.gradients(tf.reduce_sum(crops * weights), [x, b])
            out[f"{method}_{size}_grad_image"] = gi
            out[f"{method}_{size}_grad_boxes"] = gb
    out["uint8"] = tf.image.crop_and_resize((image * 40).astype(np.uint8), boxes, box_ind, [3, 4])
    with tf.Session() as sess:
        return sess.run(out)


def draw_program(tf, np):
    rng = np.random.default_rng(9)
    images = rng.random((2, 9, 11, 3)).astype(np.float32)
    boxes = np.concatenate([rng.random((2, 12, 2)) * 0.7 - 0.1, rng.random((2, 12, 2)) * 0.7 + 0.4],
                           axis=2)[:, :, [0, 1, 2, 3]].astype(np.float32)
    boxes[0, 3] = [0.8, 0.2, 0.3, 0.6]  # inverted: not drawn
    boxes[1, 4] = [1.2, 0.1, 1.5, 0.5]  # outside: not drawn
    colors = np.array([[0.1, 0.2, 0.3, 1], [0.9, 0.5, 0.1, 1], [0, 0, 0, 1]], np.float32)
    out = {"default": tf.image.draw_bounding_boxes(images, boxes),
           "colors": tf.image.draw_bounding_boxes(images, boxes, colors=colors),
           "grey": tf.image.draw_bounding_boxes(images[..., :1], boxes),
           "rgba": tf.image.draw_bounding_boxes(np.concatenate([images, images[..., :1]], -1),
                                                boxes[:, :5])}
    with tf.Session() as sess:
        return sess.run(out)


def patches_program(tf, np):
    rng = np.random.default_rng(10)
    x0 = rng.random((2, 7, 9, 3)).astype(np.float32)
    x = tf.constant(x0)
    out = {}
    settings = [([1, 3, 3, 1], [1, 1, 1, 1], [1, 1, 1, 1], "VALID"),
                ([1, 2, 4, 1], [1, 2, 3, 1], [1, 1, 1, 1], "SAME"),
                ([1, 3, 2, 1], [1, 3, 2, 1], [1, 2, 3, 1], "SAME"),
                ([1, 2, 2, 1], [1, 4, 1, 1], [1, 2, 2, 1], "VALID"),
                ([1, 7, 9, 1], [1, 1, 1, 1], [1, 1, 1, 1], "VALID")]
    for i, (k, s, r, pad) in enumerate(settings):
        y = tf.extract_image_patches(x, k, s, r, pad)
        out[f"patches_{i}"] = y
        weights = np.cos(np.arange(np.prod(y.shape.as_list()))).reshape(y.shape.as_list())
        out[f"grad_{i}"] = tf.gradients(tf.reduce_sum(y * weights.astype(np.float32)), x)[0]
    out["ints"] = tf.image.extract_image_patches((x0 * 100).astype(np.int32), [1, 2, 3, 1],
                                                 [1, 1, 2, 1], [1, 1, 1, 1], "SAME")
    with tf.Session() as sess:
        return sess.run(out)


PROGRAMS = [color_program, geometry_program, metrics_program, resize_program, detection_program,
            crop_program, draw_program, patches_program]


def load_reference():
    """{program name: {result name: numpy array}} as recorded from TensorFlow."""
    import numpy as np
    data = json.loads(REFERENCE.read_text())
    return {prog: {k: np.asarray(v["values"], dtype=v["dtype"]).reshape(v["shape"])
                   for k, v in results.items()} for prog, results in data["programs"].items()}


def _short(values):
    """float32 values as the shortest decimals that read back as the same float32."""
    if values.dtype == "float32":
        return [float(str(v)) for v in values]
    return values.tolist()


def _record():
    import numpy as np
    import tensorflow.compat.v1 as tf
    tf.disable_v2_behavior()
    out = {"tensorflow": tf.__version__, "programs": {}}
    for program in PROGRAMS:
        with tf.Graph().as_default():
            results = program(tf, np)
        out["programs"][program.__name__] = {
            k: {"dtype": str(np.asarray(v).dtype), "shape": list(np.shape(v)),
                "values": _short(np.asarray(v).reshape(-1))} for k, v in sorted(results.items())}
    REFERENCE.write_text(json.dumps(out) + "\n")


if __name__ == "__main__" and "record" in sys.argv[1:] + ["record"]:
    _record()
