"""A DQN update as TF1 reinforcement-learning code wrote it: online and target networks, assign
sync, soft updates, gather_nd of chosen actions, huber loss, decayed RMSProp."""
import numpy as np
import graphflow as tf
n_actions, n_state = 3, 4
def q_net(x, scope, trainable=True):
    with tf.variable_scope(scope):
        h = tf.layers.dense(x, 32, tf.nn.relu, trainable=trainable, kernel_initializer=tf.variance_scaling_initializer())
        return tf.layers.dense(h, n_actions, trainable=trainable)
s = tf.placeholder(tf.float32, [None, n_state], name="s")
s2 = tf.placeholder(tf.float32, [None, n_state], name="s2")
a = tf.placeholder(tf.int32, [None])
r = tf.placeholder(tf.float32, [None])
done = tf.placeholder(tf.float32, [None])
q = q_net(s, "online")
q_target = q_net(s2, "target", trainable=False)
online_vars = tf.get_collection(tf.GraphKeys.GLOBAL_VARIABLES, scope="online")
target_vars = tf.get_collection(tf.GraphKeys.GLOBAL_VARIABLES, scope="target")
sync = tf.group(*[tf.assign(t, o) for t, o in zip(target_vars, online_vars)])
soft = [t.assign(0.99 * t + 0.01 * o) for t, o in zip(target_vars, online_vars)]
idx = tf.stack([tf.range(tf.shape(a)[0]), a], axis=1)
q_sa = tf.gather_nd(q, idx)
q_sa2 = tf.reduce_sum(q * tf.one_hot(a, n_actions), axis=1)
y = r + 0.99 * (1.0 - done) * tf.stop_gradient(tf.reduce_max(q_target, axis=1))
loss = tf.losses.huber_loss(y, q_sa)
global_step = tf.train.get_or_create_global_step()
lr = tf.train.exponential_decay(0.001, global_step, 100, 0.96, staircase=True)
train = tf.train.RMSPropOptimizer(lr, decay=0.95, epsilon=0.01).minimize(loss, global_step=global_step)
rng = np.random.RandomState(0)
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    sess.run(sync)
    for step in range(300):
        batch = dict(zip([s, s2, a, r, done], [rng.randn(32, 4).astype(np.float32), rng.randn(32, 4).astype(np.float32), rng.randint(0, 3, 32), rng.randn(32).astype(np.float32), (rng.rand(32) < 0.1).astype(np.float32)]))
        l, _, qa, qb = sess.run([loss, train, q_sa, q_sa2], batch)
        assert np.allclose(qa, qb, atol=1e-5)
        if step % 50 == 0:
            sess.run(soft)
    print("loss", l, "lr", sess.run(lr), "step", sess.run(global_step))
    assert np.isfinite(l) and sess.run(global_step) == 300
    assert abs(sess.run(lr) - 0.001 * 0.96 ** 3) < 1e-9
