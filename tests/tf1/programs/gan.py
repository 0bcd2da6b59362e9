"""A GAN as TF1 code wrote it: variable_scope reuse, batch norm with UPDATE_OPS, var_list per
optimizer, a sampler built with reuse=True."""
import numpy as np
import graphflow as tf
tf.set_random_seed(1234)

def generator(z, reuse=False, training=True):
    with tf.variable_scope("generator", reuse=reuse):
        h = tf.layers.dense(z, 64)
        h = tf.layers.batch_normalization(h, training=training)
        h = tf.nn.leaky_relu(h, alpha=0.2)
        return tf.nn.tanh(tf.layers.dense(h, 2))

def discriminator(x, reuse=False):
    with tf.variable_scope("discriminator", reuse=reuse):
        h = tf.nn.leaky_relu(tf.layers.dense(x, 64), 0.2)
        logits = tf.layers.dense(h, 1)
        return tf.nn.sigmoid(logits), logits

real = tf.placeholder(tf.float32, [None, 2])
z = tf.placeholder(tf.float32, [None, 8])
fake = generator(z)
d_real, d_real_logits = discriminator(real)
d_fake, d_fake_logits = discriminator(fake, reuse=True)
d_loss = tf.reduce_mean(tf.nn.sigmoid_cross_entropy_with_logits(logits=d_real_logits, labels=tf.ones_like(d_real_logits))) + \
         tf.reduce_mean(tf.nn.sigmoid_cross_entropy_with_logits(logits=d_fake_logits, labels=tf.zeros_like(d_fake_logits)))
g_loss = tf.reduce_mean(tf.nn.sigmoid_cross_entropy_with_logits(logits=d_fake_logits, labels=tf.ones_like(d_fake_logits)))
t_vars = tf.trainable_variables()
d_vars = [var for var in t_vars if 'discriminator' in var.name]
g_vars = [var for var in t_vars if var.name.startswith('generator')]
update_ops = tf.get_collection(tf.GraphKeys.UPDATE_OPS)
with tf.control_dependencies(update_ops):
    d_optim = tf.train.AdamOptimizer(0.0002, beta1=0.5).minimize(d_loss, var_list=d_vars)
    g_optim = tf.train.AdamOptimizer(0.0002, beta1=0.5).minimize(g_loss, var_list=g_vars)
sampler = generator(z, reuse=True, training=False)
rng = np.random.RandomState(1)
with tf.Session() as sess:
    tf.global_variables_initializer().run()
    for it in range(300):
        batch = (rng.randn(64, 2) * 0.1 + [1.0, -1.0]).astype(np.float32)
        noise = rng.uniform(-1, 1, [64, 8]).astype(np.float32)
        _, dl = sess.run([d_optim, d_loss], feed_dict={real: batch, z: noise})
        _, gl = sess.run([g_optim, g_loss], feed_dict={z: noise})
        if it % 100 == 0:
            print(it, dl, gl)
    samples = sess.run(sampler, {z: rng.uniform(-1, 1, [500, 8]).astype(np.float32)})
    print("sample mean", samples.mean(0), len(d_vars), len(g_vars))
assert np.all(np.abs(samples.mean(0) - [1.0, -1.0]) < 0.6), samples.mean(0)
