"""TF1 programs in the classic example style, used by tests/test_tf1_programs.py.

Each program is `program(tf, np, **options) -> {name: array}` and builds its own graph. The same
source runs under graphflow (`tf` = graphflow) and, for the comparison, under TensorFlow
(`tf` = tensorflow.compat.v1), so the programs use only what both provide; weights start from
seeded numpy arrays so that both frameworks start from the same point. Each program is
self-contained (its source alone is sent to the TensorFlow process), so programs that share a data
set repeat its few lines of setup instead of calling a helper.
"""


def cnn_session(tf, np, steps=12, batch_size=16):
    """A small CNN trained with a plain Session loop (the reference for the Estimator CNN)."""
    rng = np.random.RandomState(0)
    images = rng.rand(48, 6, 6, 1).astype(np.float32)
    labels = (images[:, :, :3].mean(axis=(1, 2, 3)) > images[:, :, 3:].mean(axis=(1, 2, 3)))
    labels = labels.astype(np.int32)
    w_conv = (rng.randn(3, 3, 1, 4) * 0.5).astype(np.float32)
    w_dense = (rng.randn(36, 2) * 0.3).astype(np.float32)
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 6, 6, 1])
        y = tf.placeholder(tf.int32, [None])
        conv_kernel = tf.Variable(w_conv)
        conv_bias = tf.Variable(tf.zeros([4]))
        dense_kernel = tf.Variable(w_dense)
        dense_bias = tf.Variable(tf.zeros([2]))
        conv = tf.nn.relu(tf.nn.bias_add(tf.nn.conv2d(x, conv_kernel, [1, 1, 1, 1], "SAME"),
                                         conv_bias))
        pool = tf.nn.max_pool(conv, [1, 2, 2, 1], [1, 2, 2, 1], "VALID")
        logits = tf.matmul(tf.reshape(pool, [-1, 36]), dense_kernel) + dense_bias
        loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y,
                                                                             logits=logits))
        train_op = tf.train.GradientDescentOptimizer(0.5).minimize(loss)
        correct = tf.reduce_mean(tf.cast(tf.equal(tf.argmax(logits, 1, output_type=tf.int32), y),
                                         tf.float32))
        losses = []
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            initial_accuracy = sess.run(correct, {x: images, y: labels})
            for step in range(steps):
                rows = np.arange(step * batch_size, (step + 1) * batch_size) % len(images)
                _, batch_loss = sess.run([train_op, loss], {x: images[rows], y: labels[rows]})
                losses.append(batch_loss)
            eval_losses = [sess.run(loss, {x: images[i:i + 16], y: labels[i:i + 16]})
                           for i in range(0, 48, 16)]
            final_accuracy = sess.run(correct, {x: images, y: labels})
            final_dense = sess.run(dense_kernel)
    return {"losses": np.array(losses), "eval_loss": np.mean(eval_losses),
            "initial_accuracy": initial_accuracy, "accuracy": final_accuracy,
            "dense_kernel": final_dense}


def cnn_estimator(tf, np, model_dir, steps=12, batch_size=16):
    """The same CNN as `cnn_session`, as an Estimator fed by numpy_input_fn and trained in two
    calls (the second resumes from the checkpoint)."""
    rng = np.random.RandomState(0)
    images = rng.rand(48, 6, 6, 1).astype(np.float32)
    labels = (images[:, :, :3].mean(axis=(1, 2, 3)) > images[:, :, 3:].mean(axis=(1, 2, 3)))
    labels = labels.astype(np.int32)
    w_conv = (rng.randn(3, 3, 1, 4) * 0.5).astype(np.float32)
    w_dense = (rng.randn(36, 2) * 0.3).astype(np.float32)

    def model_fn(features, labels, mode, params):
        conv = tf.layers.conv2d(features["image"], 4, 3, padding="same", activation=tf.nn.relu,
                                kernel_initializer=tf.constant_initializer(w_conv))
        pool = tf.layers.max_pooling2d(conv, 2, 2)
        logits = tf.layers.dense(tf.layers.flatten(pool), 2,
                                 kernel_initializer=tf.constant_initializer(w_dense))
        classes = tf.argmax(logits, 1, output_type=tf.int32)
        if mode == tf.estimator.ModeKeys.PREDICT:
            return tf.estimator.EstimatorSpec(mode, predictions={"class": classes,
                                                                 "logits": logits})
        loss = tf.losses.sparse_softmax_cross_entropy(labels=labels, logits=logits)
        train_op = tf.train.GradientDescentOptimizer(params["learning_rate"]).minimize(
            loss, global_step=tf.train.get_global_step())
        metrics = {"accuracy": tf.metrics.accuracy(labels=labels, predictions=classes)}
        return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op,
                                          eval_metric_ops=metrics)

    config = tf.estimator.RunConfig(save_checkpoints_steps=5, log_step_count_steps=4)
    classifier = tf.estimator.Estimator(model_fn, model_dir=model_dir, config=config,
                                        params={"learning_rate": 0.5})
    train_input = tf.estimator.inputs.numpy_input_fn({"image": images}, labels,
                                                     batch_size=batch_size, num_epochs=None,
                                                     shuffle=False)
    eval_input = tf.estimator.inputs.numpy_input_fn({"image": images}, labels, batch_size=16,
                                                    num_epochs=1, shuffle=False)
    initial = classifier.evaluate(eval_input)
    classifier.train(train_input, steps=steps // 2)
    classifier.train(train_input, max_steps=steps)
    final = classifier.evaluate(eval_input)
    predicted = np.array([p["class"] for p in classifier.predict(eval_input)])
    return {"initial_accuracy": initial["accuracy"], "accuracy": final["accuracy"],
            "eval_loss": final["loss"], "global_step": final["global_step"],
            "dense_kernel": classifier.get_variable_value("dense/kernel"),
            "predicted": predicted, "labels": labels}


def word2vec(tf, np, fixed_samples, steps=40):
    """Skip-gram word2vec with nce_loss (NCE weights in two 'mod' partitions), trained in a
    MonitoredTrainingSession that stops at a global step."""
    rng = np.random.RandomState(1)
    vocabulary, dim, num_sampled = 12, 6, 4
    corpus = np.concatenate([np.arange(vocabulary)[rng.permutation(vocabulary)] for _ in range(6)])
    pairs = np.array([(corpus[i], corpus[i + d]) for i in range(1, len(corpus) - 1)
                      for d in (-1, 1)])
    init_embeddings = rng.uniform(-1.0, 1.0, (vocabulary, dim)).astype(np.float32)
    init_nce = (rng.randn(vocabulary, dim) / np.sqrt(dim)).astype(np.float32)
    with tf.Graph().as_default():
        tf.set_random_seed(1)  # the negative samples, the same whichever tests ran before
        train_inputs = tf.placeholder(tf.int32, shape=[16])
        train_labels = tf.placeholder(tf.int32, shape=[16, 1])
        embeddings = tf.Variable(init_embeddings)
        embed = tf.nn.embedding_lookup(embeddings, train_inputs)
        nce_weights = [tf.Variable(init_nce[0::2]), tf.Variable(init_nce[1::2])]
        nce_biases = tf.Variable(tf.zeros([vocabulary]))
        sampled_values = None
        if fixed_samples:
            candidates = np.array([0, 3, 5, 7], dtype=np.int64)
            unigram = np.log((np.arange(vocabulary) + 2.0) / (np.arange(vocabulary) + 1.0))
            unigram = unigram / np.log(vocabulary + 1.0)
            true_labels = tf.cast(train_labels, tf.int64)
            sampled_values = (tf.constant(candidates),
                              tf.gather(tf.constant((unigram * num_sampled).astype(np.float32)),
                                        true_labels),
                              tf.constant((unigram[candidates] * num_sampled).astype(np.float32)))
        loss = tf.reduce_mean(tf.nn.nce_loss(weights=nce_weights, biases=nce_biases,
                                             labels=train_labels, inputs=embed,
                                             num_sampled=num_sampled, num_classes=vocabulary,
                                             sampled_values=sampled_values))
        global_step = tf.train.get_or_create_global_step()
        train_op = tf.train.GradientDescentOptimizer(1.0).minimize(loss, global_step=global_step)
        losses = []
        hooks = [tf.train.StopAtStepHook(last_step=steps)]
        with tf.train.MonitoredTrainingSession(hooks=hooks) as sess:
            step = 0
            while not sess.should_stop():
                rows = np.arange(step * 16, (step + 1) * 16) % len(pairs)
                _, value = sess.run([train_op, loss], {train_inputs: pairs[rows, 0],
                                                       train_labels: pairs[rows, 1:]})
                losses.append(value)
                step += 1
    return {"losses": np.array(losses)}


def dcgan(tf, np, steps=12):
    """A tiny DCGAN: the generator upsamples with conv2d_transpose, the discriminator is a strided
    conv2d; both trained alternately with Adam."""
    rng = np.random.RandomState(2)
    n, z_dim = 8, 4
    grid = np.linspace(-1, 1, 8)
    real = np.array([np.tanh(2.0 - 3.0 * ((grid[:, None] - cx) ** 2 + (grid[None, :] - cy) ** 2))
                     for cx, cy in rng.uniform(-0.5, 0.5, (16, 2))]).astype(np.float32)
    real = real[..., None]

    def init(*shape):
        return (rng.randn(*shape) * 0.2).astype(np.float32)

    g_w1, g_w2, g_w3 = init(z_dim, 32), init(3, 3, 4, 8), init(3, 3, 1, 4)
    d_w1, d_w2 = init(3, 3, 1, 4), init(64, 1)
    noise = rng.uniform(-1, 1, (steps + 1, n, z_dim)).astype(np.float32)
    with tf.Graph().as_default():
        z = tf.placeholder(tf.float32, [None, z_dim])
        x = tf.placeholder(tf.float32, [None, 8, 8, 1])
        with tf.variable_scope("generator"):
            gw1, gb1 = tf.Variable(g_w1), tf.Variable(tf.zeros([32]))
            gw2, gb2 = tf.Variable(g_w2), tf.Variable(tf.zeros([4]))
            gw3, gb3 = tf.Variable(g_w3), tf.Variable(tf.zeros([1]))
        with tf.variable_scope("discriminator"):
            dw1, db1 = tf.Variable(d_w1), tf.Variable(tf.zeros([4]))
            dw2, db2 = tf.Variable(d_w2), tf.Variable(tf.zeros([1]))
        batch = tf.shape(z)[0]
        h = tf.reshape(tf.nn.relu(tf.matmul(z, gw1) + gb1), [-1, 2, 2, 8])
        h = tf.nn.relu(tf.nn.conv2d_transpose(h, gw2, tf.stack([batch, 4, 4, 4]), [1, 2, 2, 1],
                                              "SAME") + gb2)
        fake = tf.tanh(tf.nn.conv2d_transpose(h, gw3, tf.stack([batch, 8, 8, 1]), [1, 2, 2, 1],
                                              "SAME") + gb3)

        def discriminator(images):
            h = tf.nn.leaky_relu(tf.nn.conv2d(images, dw1, [1, 2, 2, 1], "SAME") + db1, 0.2)
            return tf.matmul(tf.reshape(h, [-1, 64]), dw2) + db2

        real_logits, fake_logits = discriminator(x), discriminator(fake)
        xent = tf.nn.sigmoid_cross_entropy_with_logits
        d_loss = (tf.reduce_mean(xent(labels=tf.ones_like(real_logits), logits=real_logits))
                  + tf.reduce_mean(xent(labels=tf.zeros_like(fake_logits), logits=fake_logits)))
        g_loss = tf.reduce_mean(xent(labels=tf.ones_like(fake_logits), logits=fake_logits))
        d_step = tf.train.AdamOptimizer(0.01, beta1=0.5).minimize(
            d_loss, var_list=[dw1, db1, dw2, db2])
        g_step = tf.train.AdamOptimizer(0.01, beta1=0.5).minimize(
            g_loss, var_list=[gw1, gb1, gw2, gb2, gw3, gb3])
        d_losses, g_losses = [], []
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            for step in range(steps):
                rows = np.arange(step * n, (step + 1) * n) % len(real)
                _, dl = sess.run([d_step, d_loss], {x: real[rows], z: noise[step]})
                _, gl = sess.run([g_step, g_loss], {z: noise[step]})
                d_losses.append(dl)
                g_losses.append(gl)
            samples = sess.run(fake, {z: noise[steps]})
    return {"d_losses": np.array(d_losses), "g_losses": np.array(g_losses), "samples": samples}


def metrics_evaluation(tf, np):
    """Logistic regression, evaluated with streaming tf.metrics before and after training."""
    rng = np.random.RandomState(3)
    features = rng.randn(64, 2).astype(np.float32)
    labels = (features[:, 0] - 0.5 * features[:, 1] + 0.3 * rng.randn(64) > 0).astype(np.int64)
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 2])
        y = tf.placeholder(tf.int64, [None])
        w = tf.Variable(np.array([[-0.5], [0.4]], np.float32))
        b = tf.Variable(tf.zeros([1]))
        logits = tf.squeeze(tf.matmul(x, w) + b, [1])
        probability = tf.sigmoid(logits)
        predicted = tf.cast(probability > 0.5, tf.int64)
        loss = tf.reduce_mean(tf.nn.sigmoid_cross_entropy_with_logits(
            labels=tf.cast(y, tf.float32), logits=logits))
        train_op = tf.train.GradientDescentOptimizer(1.0).minimize(loss)
        weights = tf.cast(tf.range(tf.shape(y)[0]) % 3 > 0, tf.float32)
        metrics = {
            "accuracy": tf.metrics.accuracy(y, predicted),
            "weighted_accuracy": tf.metrics.accuracy(y, predicted, weights=weights),
            "precision": tf.metrics.precision(y, predicted),
            "recall": tf.metrics.recall(y, predicted),
            "auc": tf.metrics.auc(y, probability),
            "auc_pr": tf.metrics.auc(y, probability, curve="PR", num_thresholds=50),
            "mse": tf.metrics.mean_squared_error(tf.cast(y, tf.float32), probability),
            "mae": tf.metrics.mean_absolute_error(tf.cast(y, tf.float32), probability),
            "rmse": tf.metrics.root_mean_squared_error(tf.cast(y, tf.float32), probability),
            "true_positives": tf.metrics.true_positives(y, predicted),
            "false_positives": tf.metrics.false_positives(y, predicted),
            "false_negatives": tf.metrics.false_negatives(y, predicted),
            "mean_iou": tf.metrics.mean_iou(y, predicted, num_classes=2),
            "mean_loss": tf.metrics.mean(loss),
        }
        values = {k: v for k, (v, _) in metrics.items()}
        updates = [u for _, u in metrics.values()]
        results = {"num_local_variables": len(tf.local_variables())}
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            for stage in ("before", "after"):
                sess.run(tf.local_variables_initializer())
                for i in range(0, 64, 16):
                    sess.run(updates, {x: features[i:i + 16], y: labels[i:i + 16]})
                for key, value in sess.run(values).items():
                    results[stage + "_" + key] = value
                results[stage + "_probability"] = sess.run(probability, {x: features})
                for _ in range(20):
                    sess.run(train_op, {x: features, y: labels})
    results["labels"] = labels
    return results


def linear_regression(tf, np, epochs=30):
    """The classic linear regression: "float" placeholders, scalar variables from Python floats,
    a per-sample training loop."""
    rng = np.random.RandomState(4)
    train_x = np.asarray([3.3, 4.4, 5.5, 6.71, 6.93, 4.168, 9.779, 6.182, 7.59, 2.167, 7.042,
                          10.791, 5.313, 7.997, 5.654, 9.27, 3.1])
    train_y = np.asarray([1.7, 2.76, 2.09, 3.19, 1.694, 1.573, 3.366, 2.596, 2.53, 1.221, 2.827,
                          3.465, 1.65, 2.904, 2.42, 2.94, 1.3])
    n_samples = train_x.shape[0]
    with tf.Graph().as_default():
        X = tf.placeholder("float")
        Y = tf.placeholder("float")
        W = tf.Variable(rng.randn(), name="weight")
        b = tf.Variable(rng.randn(), name="bias")
        pred = tf.add(tf.multiply(X, W), b)
        cost = tf.reduce_sum(tf.pow(pred - Y, 2)) / (2 * n_samples)
        optimizer = tf.train.GradientDescentOptimizer(0.01).minimize(cost)
        costs = []
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            for _ in range(epochs):
                for (x, y) in zip(train_x, train_y):
                    sess.run(optimizer, feed_dict={X: x, Y: y})
                costs.append(sess.run(cost, feed_dict={X: train_x, Y: train_y}))
            weight, bias = sess.run(W), sess.run(b)
    return {"costs": np.array(costs), "weight": weight, "bias": bias,
            "dtype_is_float32": np.array(X.dtype == tf.float32)}


def multi_tower(tf, np, steps=15, num_towers=2):
    """Data-parallel training over towers: a device function puts variables on the CPU and each
    tower's ops on its own device; the towers' gradients are averaged."""
    rng = np.random.RandomState(5)
    features = rng.randn(32, 4).astype(np.float32)
    labels = np.argmax(features[:, :3] + 0.5 * features[:, 3:], axis=1).astype(np.int32)
    w1_init = (rng.randn(4, 8) * 0.5).astype(np.float32)
    w2_init = (rng.randn(8, 3) * 0.5).astype(np.float32)
    ps_ops = ["Variable", "VariableV2", "AutoReloadVariable"]

    def assign_to_device(device, ps_device="/cpu:0"):
        def _assign(op):
            node_def = op if isinstance(op, tf.NodeDef) else op.node_def
            if node_def.op in ps_ops:
                return ps_device
            return device
        return _assign

    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 4])
        y = tf.placeholder(tf.int32, [None])
        optimizer = tf.train.GradientDescentOptimizer(0.5)
        tower_grads, tower_losses = [], []
        x_parts, y_parts = tf.split(x, num_towers), tf.split(y, num_towers)
        for i in range(num_towers):
            with tf.device(assign_to_device("/gpu:%d" % i)):
                with tf.variable_scope("model", reuse=i > 0):
                    w1 = tf.get_variable("w1", initializer=w1_init)
                    b1 = tf.get_variable("b1", [8], initializer=tf.zeros_initializer())
                    w2 = tf.get_variable("w2", initializer=w2_init)
                    hidden = tf.nn.relu(tf.matmul(x_parts[i], w1) + b1)
                    logits = tf.matmul(hidden, w2)
                loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(
                    labels=y_parts[i], logits=logits))
                tower_losses.append(loss)
                tower_grads.append(optimizer.compute_gradients(loss))
        with tf.device("/cpu:0"):
            averaged = []
            for grads_and_vars in zip(*tower_grads):
                grad = tf.reduce_mean(tf.stack([g for g, _ in grads_and_vars]), 0)
                averaged.append((grad, grads_and_vars[0][1]))
            train_op = optimizer.apply_gradients(averaged)
            mean_loss = tf.add_n(tower_losses) / num_towers
        placement = {"w1": w1.op.device, "tower1_matmul": logits.op.device}
        losses = []
        config = tf.ConfigProto(allow_soft_placement=True)
        with tf.Session(config=config) as sess:
            sess.run(tf.global_variables_initializer())
            for _ in range(steps):
                _, value = sess.run([train_op, mean_loss], {x: features, y: labels})
                losses.append(value)
    return {"losses": np.array(losses), "placement": np.array(str(placement))}


def image_folder(tf, np, folder, steps=15):
    """Images read from a folder of class sub-folders with read_file + decode_jpeg in a tf.data
    pipeline, classified by their mean colour (logistic regression)."""
    import os
    classes = sorted(os.listdir(folder))
    filenames, labels = [], []
    for index, name in enumerate(classes):
        for file in sorted(os.listdir(os.path.join(folder, name))):
            filenames.append(os.path.join(folder, name, file))
            labels.append(index)
    labels = np.array(labels, np.float32)
    order = np.random.RandomState(6).permutation(len(filenames))
    filenames, labels = [filenames[i] for i in order], labels[order]

    def parse(filename, label):
        image = tf.image.decode_jpeg(tf.read_file(filename), channels=3)
        return tf.cast(image, tf.float32) / 255.0, label

    with tf.Graph().as_default():
        dataset = tf.data.Dataset.from_tensor_slices((filenames, labels)).map(parse)
        images, targets = tf.data.make_one_shot_iterator(dataset.repeat().batch(8)).get_next()
        colour = tf.reduce_mean(images, axis=[1, 2]) - 0.5
        w = tf.Variable(np.zeros((3, 1), np.float32))
        b = tf.Variable(np.zeros(1, np.float32))
        logits = tf.squeeze(tf.matmul(colour, w) + b, [1])
        loss = tf.reduce_mean(tf.nn.sigmoid_cross_entropy_with_logits(labels=targets,
                                                                      logits=logits))
        accuracy = tf.reduce_mean(tf.cast(tf.equal(tf.cast(logits > 0, tf.float32), targets),
                                          tf.float32))
        train_op = tf.train.GradientDescentOptimizer(5.0).minimize(loss)
        losses, accuracies = [], []
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            first_batch = None
            for _ in range(steps):
                pixels, _, value, acc = sess.run([images, train_op, loss, accuracy])
                first_batch = pixels if first_batch is None else first_batch
                losses.append(value)
                accuracies.append(acc)
    return {"losses": np.array(losses), "accuracies": np.array(accuracies),
            "first_batch": first_batch}


def batch_norm_resnet(tf, np, steps=4):
    """A small residual CNN with batch norm written both ways TF1 code did: tf.layers with a
    defaulted `training` flag and UPDATE_OPS around minimize, and tf.nn.moments; plus the ref
    variable idiom `with tf.control_dependencies([assign]): tf.identity(v)`."""
    rng = np.random.RandomState(3)
    images = rng.randn(8, 8, 8, 3).astype(np.float32)
    labels = rng.randint(0, 4, 8).astype(np.int64)
    w1 = (rng.randn(3, 3, 3, 6) * 0.4).astype(np.float32)
    w2 = (rng.randn(3, 3, 6, 6) * 0.3).astype(np.float32)
    w3 = (rng.randn(3, 3, 6, 6) * 0.3).astype(np.float32)
    wd = (rng.randn(6, 4) * 0.3).astype(np.float32)
    out = {}
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [8, 8, 8, 3])
        y = tf.placeholder(tf.int64, [8])
        training = tf.placeholder_with_default(True, [])

        def conv_bn(h, w, relu=True):
            h = tf.layers.conv2d(h, w.shape[3], 3, padding="same", use_bias=False,
                                 kernel_initializer=tf.constant_initializer(w))
            h = tf.layers.batch_normalization(h, training=training, momentum=0.9)
            return tf.nn.relu(h) if relu else h
        h = conv_bn(x, w1)
        h = tf.nn.relu(conv_bn(conv_bn(h, w2), w3, relu=False) + h)
        logits = tf.layers.dense(tf.reduce_mean(h, axis=[1, 2]), 4,
                                 kernel_initializer=tf.constant_initializer(wd))
        loss = tf.losses.sparse_softmax_cross_entropy(labels=y, logits=logits)
        with tf.control_dependencies(tf.get_collection(tf.GraphKeys.UPDATE_OPS)):
            train = tf.train.MomentumOptimizer(0.05, 0.9).minimize(loss)
        moving = [v for v in tf.global_variables() if "moving_mean" in v.name]
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            feed = {x: images, y: labels}
            out["layers_losses"] = [sess.run([train, loss], feed)[1] for _ in range(steps)]
            out["layers_moving_mean"] = sess.run(moving[0])
            out["layers_eval_loss"] = sess.run(loss, {x: images, y: labels, training: False})
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [8, 8, 8, 3])
        k = tf.Variable(w1)
        h = tf.nn.conv2d(x, k, [1, 1, 1, 1], "SAME")
        mean, variance = tf.nn.moments(h, [0, 1, 2])
        gamma, beta = tf.Variable(tf.ones([6])), tf.Variable(tf.zeros([6]))
        h = tf.nn.relu(tf.nn.batch_normalization(h, mean, variance, beta, gamma, 1e-3))
        loss = tf.reduce_mean(tf.square(h - 0.5))
        train = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
        counter = tf.Variable(1.0)
        bump = tf.assign(counter, counter * 3.0)
        with tf.control_dependencies([bump]):
            after = tf.identity(counter)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            out["moments_losses"] = [sess.run([train, loss], {x: images})[1] for _ in range(steps)]
            out["moments_variance"] = sess.run(variance, {x: images})
            out["identity_after_assign"] = [sess.run(after) for _ in range(2)]
    return out
