"""Programs over the Keras layers of layers_merge, layers_activation, layers_reshaping,
layers_noise and layers_conv3d, run the same under graphflow (`tf` = graphflow) and TF1's
tf.keras (tensorflow.compat.v1 with legacy Keras); keras_layer_recorded.py holds what TensorFlow
returned. Weights are set from seeded numpy arrays; outputs are in inference mode."""


def keras_layers_program(tf, np):
    """Each layer's output, weight names and shapes, and config round trip."""
    K = tf.keras.backend
    L = tf.keras.layers
    rng = np.random.RandomState(7)
    vec = rng.randn(3, 4).astype(np.float32)
    seq = rng.randn(2, 6, 3).astype(np.float32)
    img = rng.randn(2, 5, 6, 3).astype(np.float32)
    vol = rng.randn(2, 4, 5, 6, 2).astype(np.float32)
    results = {}
    with tf.Graph().as_default():
        cases = [
            ("multiply", L.Multiply(), [vec, vec * 2.0 + 1.0, vec - 1.0]),
            ("subtract", L.Subtract(), [vec, vec[::-1]]),
            ("average", L.Average(), [vec, vec[::-1], vec * 3.0]),
            ("maximum", L.Maximum(), [vec, vec[::-1]]),
            ("minimum", L.Minimum(), [vec, vec[::-1]]),
            ("dot", L.Dot(axes=1), [vec, vec[::-1]]),
            ("dot_normalized", L.Dot(axes=-1, normalize=True), [vec, vec[::-1]]),
            ("dot_3d", L.Dot(axes=(1, 2)), [seq, seq.transpose(0, 2, 1)]),
            ("prelu", L.PReLU(alpha_initializer="ones"), img),
            ("prelu_shared", L.PReLU(shared_axes=[1, 2]), img),
            ("elu", L.ELU(alpha=0.7), vec), ("thresholded_relu", L.ThresholdedReLU(0.4), vec),
            ("softmax", L.Softmax(axis=1), seq), ("relu", L.ReLU(), vec),
            ("relu_args", L.ReLU(max_value=1.0, negative_slope=0.1, threshold=0.2), vec),
            ("layer_norm", L.LayerNormalization(), seq),
            ("layer_norm_axes", L.LayerNormalization(axis=[1, 2], epsilon=0.01), img),
            ("repeat_vector", L.RepeatVector(3), vec),
            ("permute", L.Permute((3, 1, 2)), img),
            ("cropping1d", L.Cropping1D((1, 2)), seq),
            ("cropping2d", L.Cropping2D(((1, 0), (2, 1))), img),
            ("cropping2d_first", L.Cropping2D(1, data_format="channels_first"), img),
            ("zero_padding1d", L.ZeroPadding1D((2, 1)), seq),
            ("zero_padding3d", L.ZeroPadding3D((1, 0, 2)), vol),
            ("upsampling1d", L.UpSampling1D(3), seq),
            ("upsampling3d", L.UpSampling3D((2, 1, 2)), vol),
            ("gaussian_noise", L.GaussianNoise(0.5), vec),
            ("gaussian_dropout", L.GaussianDropout(0.3), vec),
            ("spatial_dropout1d", L.SpatialDropout1D(0.5), seq),
            ("spatial_dropout2d", L.SpatialDropout2D(0.5), img),
            ("activity_regularization", L.ActivityRegularization(l1=0.01, l2=0.1), vec),
            ("conv3d", L.Conv3D(3, (2, 3, 2), strides=(1, 2, 1), activation="relu"), vol),
            ("conv3d_same", L.Conv3D(2, 3, padding="same", use_bias=False), vol),
            ("separable", L.SeparableConv2D(4, (3, 2), depth_multiplier=2), img),
            ("separable_same", L.SeparableConv2D(2, 3, strides=2, padding="same",
                                                 activation="tanh"), img),
            ("depthwise", L.DepthwiseConv2D(3, depth_multiplier=2, padding="same"), img),
            ("max_pool3d", L.MaxPooling3D((2, 2, 3)), vol),
            ("avg_pool3d", L.AveragePooling3D(2, strides=1, padding="same"), vol),
            ("global_avg3d", L.GlobalAveragePooling3D(), vol),
            ("global_max3d", L.GlobalMaxPooling3D(), vol),
        ]
        for key, layer, data in cases:
            inputs = [K.constant(d) for d in data] if isinstance(data, list) else K.constant(data)
            out = layer(inputs)
            values = [(rng.randn(*K.int_shape(w)) * 0.5).astype(np.float32)
                      for w in layer.weights]
            if values:
                layer.set_weights(values)
            results[key] = K.get_value(out)
            results[key + "/weights"] = np.array(
                [w.name.split("/")[-1] + str(list(K.int_shape(w))) for w in layer.weights]
                + ["-"])
            config = layer.get_config()
            clone = type(layer).from_config(config)
            results[key + "/config"] = np.array(sorted(
                k for k in config if k not in ("name", "trainable", "dtype")) + ["-"])
            results[key + "/clone"] = np.array(type(clone).__name__ == type(layer).__name__)
        layer = [c[1] for c in cases if c[0] == "activity_regularization"][0]
        results["activity_regularization/loss"] = K.get_value(layer.losses[0])
        results["activity_regularization/n_losses"] = np.array(len(layer.losses))
    return results
