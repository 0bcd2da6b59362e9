"""TF1 training programs in the tutorials' style that use learning-rate schedules, Adagrad,
Adadelta and `ExponentialMovingAverage`, used by tests/tf1/test_training_programs.py.

As in tests/tf1_programs.py, each program is `program(tf, np, **options) -> {name: array}`,
self-contained, and runs unchanged under graphflow and under TensorFlow (`tensorflow.compat.v1`).
"""


def schedules(tf, np, steps=12):
    """Every learning-rate schedule evaluated at a fed global step."""
    with tf.Graph().as_default():
        step = tf.placeholder(tf.int64, [])
        rates = {
            "exponential": tf.train.exponential_decay(0.1, step, 4, 0.5),
            "exponential_staircase": tf.train.exponential_decay(0.1, step, 4, 0.5, staircase=True),
            "natural_exp": tf.train.natural_exp_decay(0.1, step, 4, 0.5),
            "natural_exp_staircase": tf.train.natural_exp_decay(0.1, step, 3, 0.5, True),
            "inverse_time": tf.train.inverse_time_decay(0.1, step, 4, 0.5),
            "inverse_time_staircase": tf.train.inverse_time_decay(0.1, step, 3, 0.5, True),
            "polynomial": tf.train.polynomial_decay(0.1, step, 8, 0.01, power=2.0),
            "polynomial_cycle": tf.train.polynomial_decay(0.1, step, 5, 0.01, cycle=True),
            "cosine": tf.train.cosine_decay(0.1, step, 8),
            "cosine_alpha": tf.train.cosine_decay(0.1, step, 8, alpha=0.2),
            "piecewise": tf.train.piecewise_constant(step, [3, 7], [0.1, 0.05, 0.01]),
            "sgdr": tf.train.cosine_decay_restarts(0.1, step, 3),
            "sgdr_flat": tf.train.cosine_decay_restarts(0.1, step, 4, t_mul=1.0, m_mul=0.5,
                                                        alpha=0.1),
            "linear_cosine": tf.train.linear_cosine_decay(0.1, step, 9, num_periods=1.5),
        }
        with tf.Session() as sess:
            table = [sess.run(rates, {step: s}) for s in range(steps)]
    return {name: np.array([row[name] for row in table]) for name in rates}


def softmax_regression(tf, np, optimizer, steps=20):
    """Softmax regression on fixed data trained by `optimizer` ('adagrad' with a piecewise
    constant rate, 'adadelta' with a polynomial decay, 'adagrad_cosine') while an
    ExponentialMovingAverage with num_updates = global step tracks the weights."""
    rng = np.random.RandomState(3)
    features = rng.randn(32, 5).astype(np.float32)
    labels = (features[:, 0] + features[:, 1] > 0).astype(np.int32)
    w0 = (rng.randn(5, 2) * 0.1).astype(np.float32)
    with tf.Graph().as_default():
        x = tf.constant(features)
        y = tf.constant(labels)
        w = tf.Variable(w0, name="w")
        b = tf.Variable(tf.zeros([2]), name="b")
        logits = tf.matmul(x, w) + b
        loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y,
                                                                             logits=logits))
        global_step = tf.train.get_or_create_global_step()
        if optimizer == "adagrad":
            lr = tf.train.piecewise_constant(global_step, [5, 12], [0.5, 0.2, 0.05])
            opt = tf.train.AdagradOptimizer(lr)
        elif optimizer == "adagrad_cosine":
            lr = tf.train.cosine_decay(0.5, global_step, 15, alpha=0.1)
            opt = tf.train.AdagradOptimizer(lr, initial_accumulator_value=0.5)
        else:
            lr = tf.train.polynomial_decay(20.0, global_step, 15, 1.0, power=1.5)
            opt = tf.train.AdadeltaOptimizer(lr, rho=0.9, epsilon=1e-6)
        train = opt.minimize(loss, global_step=global_step)
        ema = tf.train.ExponentialMovingAverage(0.9, num_updates=global_step)
        with tf.control_dependencies([train]):
            train_op = ema.apply([w, b])
        losses, rates = [], []
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            for _ in range(steps):
                rates.append(sess.run(lr))
                _, value = sess.run([train_op, loss])
                losses.append(value)
            w_final, b_final, w_avg, b_avg = sess.run([w, b, ema.average(w), ema.average(b)])
            names = sorted(ema.variables_to_restore())
    return {"losses": np.array(losses), "rates": np.array(rates), "w": w_final, "b": b_final,
            "w_average": w_avg, "b_average": b_avg, "average_name": ema.average_name(w),
            "restore_names": " ".join(names)}
