"""The program tests/ops/test_pool_argmax_ops.py runs in graphflow and TensorFlow compares:
tf.nn.max_pool_with_argmax (values, argmax, the gradient through the values) under four settings,
written against the TF1 API (`tf`), importing neither."""


def argmax_program(tf, np):
    """A [2, 5, 7, 3] input with a tie in one window; SAME, VALID, batch in index, overlapping."""
    x = (np.cos(np.arange(2 * 5 * 7 * 3, dtype=np.float32) * 2.3) * 3).reshape(2, 5, 7, 3)
    x[0, 1, 1, 0] = x[0, 1, 2, 0]   # a tie inside one window
    out = {}
    with tf.Graph().as_default():
        xt = tf.constant(x)
        for key, kw in [("same", dict(ksize=[1, 3, 3, 1], strides=[1, 2, 2, 1], padding="SAME")),
                        ("valid", dict(ksize=[1, 2, 3, 1], strides=[1, 1, 2, 1], padding="VALID")),
                        ("batch", dict(ksize=[1, 2, 2, 1], strides=[1, 2, 2, 1], padding="SAME",
                                       include_batch_in_index=True)),
                        ("overlap", dict(ksize=[1, 3, 3, 1], strides=[1, 1, 1, 1], padding="SAME",
                                         include_batch_in_index=True))]:
            y, arg = tf.nn.max_pool_with_argmax(xt, **kw)
            g = tf.gradients(tf.reduce_sum(y * y), xt)[0]
            with tf.Session() as s:
                out[key + "_y"], out[key + "_arg"], out[key + "_grad"] = s.run([y, arg, g])
    return out
