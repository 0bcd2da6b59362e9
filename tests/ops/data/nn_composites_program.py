"""The program tests/ops/test_conv_composite_ops.py runs in graphflow and TensorFlow compares:
TF1's composed tf.nn functions (atrous_conv2d, relu_layer, depthwise_conv2d_native and its two
backprops), written against the TF1 API (`tf`), importing neither."""


def nn_composites_program(tf, np):
    """Fixed small inputs: image [2, 5, 6, 2], filters [3, 3, 2, 3] and [2, 2, 2, 2]."""
    image = (np.cos(np.arange(120, dtype=np.float32) * 0.7) * 2).reshape(2, 5, 6, 2)
    filters = (np.sin(np.arange(54, dtype=np.float32) * 1.3)).reshape(3, 3, 2, 3)
    depthwise = (np.sin(np.arange(16, dtype=np.float32) * 0.9 + 1)).reshape(2, 2, 2, 2)
    x = np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4)
    w = (np.cos(np.arange(20, dtype=np.float32))).reshape(4, 5)
    b = np.linspace(-0.5, 0.5, 5, dtype=np.float32)
    with tf.Graph().as_default():
        img = tf.constant(image)
        dw = tf.constant(depthwise)
        native = tf.nn.depthwise_conv2d_native(img, dw, [1, 2, 1, 1], "SAME")
        dilated = tf.nn.depthwise_conv2d_native(img, dw, [1, 1, 1, 1], "VALID",
                                                dilations=[1, 2, 2, 1])
        grad_in, grad_f = tf.gradients(tf.reduce_sum(native * native), [img, dw])
        outs = {
            "atrous_same": tf.nn.atrous_conv2d(img, filters, 2, "SAME"),
            "atrous_valid": tf.nn.atrous_conv2d(img, filters, 2, "VALID"),
            "atrous_rate1": tf.nn.atrous_conv2d(img, filters, 1, "SAME"),
            "relu_layer": tf.nn.relu_layer(x, w, b),
            "native": native, "native_dilated": dilated,
            "backprop_input": tf.nn.depthwise_conv2d_native_backprop_input(
                [2, 5, 6, 2], dw, 2 * native, [1, 2, 1, 1], "SAME"),
            "backprop_filter": tf.nn.depthwise_conv2d_native_backprop_filter(
                img, [2, 2, 2, 2], 2 * native, [1, 2, 1, 1], "SAME"),
            "grad_input": grad_in, "grad_filter": grad_f,
        }
        with tf.Session() as sess:
            return sess.run(outs)
