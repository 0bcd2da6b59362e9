"""Programs over `tf.keras.backend` run the same under graphflow (`tf` = graphflow) and TF1's
tf.keras (`tf` = tensorflow.compat.v1 with legacy Keras), for tests/tf1/keras/test_keras_backend_*.py.
Each is self-contained (only its source is sent to the TensorFlow process) and returns
{name: array}; keras_backend_recorded.py holds what TensorFlow returned."""


def backend_math_program(tf, np):
    """Reductions, elementwise math, comparisons, products and layout functions."""
    K = tf.keras.backend
    rng = np.random.RandomState(0)
    a = rng.randn(2, 3, 4).astype(np.float32)
    b = rng.randn(2, 4, 5).astype(np.float32)
    m = rng.randn(3, 4).astype(np.float32)
    with tf.Graph().as_default():
        x, y, w = K.constant(a), K.constant(b), K.constant(m)
        bools = K.greater(x, 0.0)
        out = {
            "mean": K.mean(x, axis=1), "mean_bool": K.mean(bools), "sum": K.sum(x, 2, True),
            "max": K.max(x, axis=-1), "min": K.min(x), "prod": K.prod(x[0], 0),
            "var": K.var(x, axis=2), "std": K.std(x, axis=[0, 1], keepdims=True),
            "any": K.cast(K.any(x > 1.0, axis=1), "float32"),
            "all": K.cast(K.all(bools, axis=-1), "float32"),
            "argmax": K.argmax(x), "argmin": K.argmin(x, axis=1),
            "square": K.square(x), "sqrt": K.sqrt(x), "exp": K.exp(x), "log": K.log(K.abs(x)),
            "sign": K.sign(x), "round": K.round(x * 2.0), "pow": K.pow(K.abs(x), 1.5),
            "maximum": K.maximum(x, 0.2), "minimum": K.minimum(x, -0.1),
            "clip": K.clip(x, -0.5, 0.7), "clip_inverted": K.clip(x, 0.3, 0.1),
            "equal": K.cast(K.equal(K.round(x), 0.0), "float32"),
            "less": K.cast(K.less(x, y[:, :3, :4]), "float32"),
            "cumsum": K.cumsum(x, axis=1), "cumprod": K.cumprod(x, axis=2),
            "dot2": K.dot(w, K.transpose(w)), "dot3": K.dot(x, y[0]),
            "dot33": K.dot(x, K.stack([y[0], y[1], y[1]])),
            "batch_dot": K.batch_dot(x, y), "batch_dot_axes": K.batch_dot(x, x, axes=[2, 2]),
            "batch_dot_2d": K.batch_dot(x[:, 0], x[:, 1], axes=1),
            "batch_dot_12": K.batch_dot(x, K.permute_dimensions(x, (0, 2, 1)), axes=(1, 2)),
            "permute": K.permute_dimensions(x, (2, 0, 1)), "reshape": K.reshape(x, (4, -1)),
            "concat": K.concatenate([x, x * 2.0], axis=-2), "stack": K.stack([w, w], axis=1),
            "expand": K.expand_dims(w, 1), "squeeze": K.squeeze(K.expand_dims(w, 0), 0),
            "flatten": K.flatten(x), "batch_flatten": K.batch_flatten(x),
            "tile": K.tile(w, (2, 1)), "repeat": K.repeat(w, 2),
            "repeat_elements": K.repeat_elements(x, 2, axis=1), "reverse": K.reverse(x, 2),
            "gather": K.gather(w, [2, 0]), "one_hot": K.one_hot(K.constant([0, 3, 1], "int32"), 4),
            "arange": K.arange(2, 9, 3), "ndim": K.ones_like(x)[0, 0, :K.ndim(x)],
            "shape": K.shape(x), "temporal_padding": K.temporal_padding(x, (1, 2)),
            "spatial_2d_padding": K.spatial_2d_padding(K.expand_dims(x), ((1, 0), (0, 2))),
            "spatial_2d_padding_first": K.spatial_2d_padding(
                K.expand_dims(x, 1), ((0, 1), (2, 0)), data_format="channels_first"),
            "spatial_3d_padding": K.spatial_3d_padding(
                K.expand_dims(K.expand_dims(x)), ((1, 0), (0, 1), (1, 1))),
        }
        values = K.batch_get_value(list(out.values()))
        result = dict(zip(out, values))
        result["int_shape"] = np.array(K.int_shape(x))
        result["count_params"] = np.array(K.count_params(w))
        result["dtype"] = np.array(K.dtype(x) == "float32")
        return result


def backend_nn_program(tf, np):
    """Activations, backend cross-entropies, convolution and pooling."""
    K = tf.keras.backend
    rng = np.random.RandomState(1)
    a = rng.randn(3, 5).astype(np.float32)
    probs = np.exp(a) / np.exp(a).sum(1, keepdims=True)
    onehot = np.eye(5, dtype=np.float32)[[1, 4, 0]]
    image = rng.randn(2, 6, 5, 3).astype(np.float32)
    kernel = rng.randn(3, 2, 3, 4).astype(np.float32)
    seq = rng.randn(2, 7, 3).astype(np.float32)
    kernel1 = rng.randn(3, 3, 2).astype(np.float32)
    vol = rng.randn(1, 4, 5, 4, 2).astype(np.float32)
    kernel3 = rng.randn(2, 3, 2, 2, 3).astype(np.float32)
    with tf.Graph().as_default():
        x, p, t = K.constant(a), K.constant(probs), K.constant(onehot)
        img = K.constant(image)
        out = {
            "relu": K.relu(x), "relu_alpha": K.relu(x, alpha=0.1),
            "relu_max": K.relu(x, max_value=0.5), "relu6": K.relu(x * 5.0, max_value=6),
            "relu_thr": K.relu(x, alpha=0.2, max_value=1.0, threshold=0.3),
            "elu": K.elu(x), "elu_alpha": K.elu(x, 0.5), "softmax": K.softmax(x),
            "softmax0": K.softmax(x, axis=0), "sigmoid": K.sigmoid(x), "tanh": K.tanh(x),
            "hard_sigmoid": K.hard_sigmoid(x * 3.0), "softplus": K.softplus(x),
            "softsign": K.softsign(x), "l2_normalize": K.l2_normalize(x, axis=1),
            "cce": K.categorical_crossentropy(t, p),
            "cce_unnormalized": K.categorical_crossentropy(t, p * 2.0),
            "cce_logits": K.categorical_crossentropy(t, x, from_logits=True),
            "cce_softmax_op": K.categorical_crossentropy(t, tf.nn.softmax(x)),
            "cce_axis0": K.categorical_crossentropy(K.transpose(t), K.transpose(p), axis=0),
            "scce": K.sparse_categorical_crossentropy(K.constant([1, 4, 0], "int32"), p),
            "scce_logits": K.sparse_categorical_crossentropy(
                K.constant([[1], [4], [0]], "int32"), x, from_logits=True),
            "scce_3d": K.sparse_categorical_crossentropy(
                K.constant([[1, 2], [4, 0], [0, 3]], "int32"),
                K.stack([p, K.reverse(p, 1)], axis=1)),
            "bce": K.binary_crossentropy(K.constant((a > 0).astype(np.float32)), K.sigmoid(x)),
            "bce_probs": K.binary_crossentropy(K.constant((a > 0).astype(np.float32)),
                                               p * 0.999 + 0.0005),
            "bce_logits": K.binary_crossentropy(K.constant((a > 0).astype(np.float32)), x,
                                                from_logits=True),
            "conv2d": K.conv2d(img, K.constant(kernel)),
            "conv2d_same": K.conv2d(img, K.constant(kernel), strides=(2, 1), padding="same"),
            "conv2d_dilated": K.conv2d(img, K.constant(kernel), dilation_rate=(2, 2)),
            "conv2d_first": K.conv2d(K.permute_dimensions(img, (0, 3, 1, 2)), K.constant(kernel),
                                     data_format="channels_first"),
            "conv1d": K.conv1d(K.constant(seq), K.constant(kernel1), strides=2),
            "conv1d_causal": K.conv1d(K.constant(seq), K.constant(kernel1), padding="causal",
                                      dilation_rate=2),
            "conv3d": K.conv3d(K.constant(vol), K.constant(kernel3), padding="same"),
            "pool2d_max": K.pool2d(img, (2, 2), strides=(2, 2)),
            "pool2d_avg": K.pool2d(img, (3, 2), padding="same", pool_mode="avg"),
            "pool3d": K.pool3d(K.constant(vol), (2, 2, 2), strides=(2, 2, 2), pool_mode="avg"),
            "bias_add": K.bias_add(img, K.constant([1.0, -2.0, 3.0])),
            "batch_norm": K.batch_normalization(x, K.mean(x, 0), K.var(x, 0),
                                                K.constant(0.5), K.constant(2.0)),
        }
        return dict(zip(out, K.batch_get_value(list(out.values()))))


def backend_graph_program(tf, np):
    """Variables, placeholders, `function` with updates and the learning phase, gradients,
    switch and in_train_phase, moving_average_update."""
    K = tf.keras.backend
    rng = np.random.RandomState(2)
    data = rng.randn(4, 3).astype(np.float32)
    result = {}
    with tf.Graph().as_default():
        x = K.placeholder(shape=(None, 3))
        x2 = K.placeholder(ndim=2)
        w = K.variable(rng.randn(3, 2), name="w")
        counter = K.zeros((2,))
        eye = K.eye(3)
        avg = K.variable(np.zeros(2, np.float32))
        out = K.dot(x, w)
        loss = K.mean(K.square(out))
        grad = K.gradients(loss, [w])[0]
        phase = K.learning_phase()
        trained = K.in_train_phase(out * 2.0, lambda: out - 1.0)
        chosen = K.switch(K.greater(x, 0.0), x, K.zeros_like(x))
        step = K.function([x, phase], [out, trained, grad],
                          updates=[K.update_sub(w, 0.1 * grad), (counter, counter + 1.0)])
        plain = K.function([x2], K.sum(x2, axis=1) + K.sum(eye))
        observed = K.variable([1.0, 2.0])
        ma = K.moving_average_update(avg, observed, 0.9)
        first = step([data, 1])
        second = step([data, 0])
        result.update({
            "out1": first[0], "trained1": first[1], "grad1": first[2], "out2": second[0],
            "tested2": second[1], "plain": plain([data]),
            "chosen": K.function([x], [chosen])([data])[0],
            "w": K.get_value(w),
            "counter": K.get_value(counter), "stop": K.function([x], K.gradients(
                K.sum(K.stop_gradient(out) * out), [w]))([data])[0],
            "int_shape": np.array([-1 if d is None else d for d in K.int_shape(x2)]),
        })
        K.set_value(w, np.ones((3, 2)))
        result["w_set"] = K.get_value(w)
        K.get_session().run(tf.global_variables_initializer())  # the debiasing variables
        K.get_session().run(ma)
        K.set_value(observed, [3.0, -1.0])
        K.get_session().run(ma)
        result["moving_average"] = K.get_value(avg)
        result["constant"] = K.get_value(K.constant(1.5, dtype="float64", shape=(2, 2)))
        result["eval"] = K.eval(K.ones((2, 2)) * 3.0)
    return result
