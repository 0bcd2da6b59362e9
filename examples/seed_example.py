"""The lecture notes' TensorFlow computational-graph example, run with graphflow."""

import numpy as np

import graphflow as tf

np.random.seed(0)
N, D = 3, 4
x = tf.placeholder(tf.float32)
y = tf.placeholder(tf.float32)
z = tf.placeholder(tf.float32)
a = x * y
b = a + z
c = tf.reduce_sum(b)

with tf.Session() as sess:
    values = {x: np.random.randn(N, D), y: np.random.randn(N, D), z: np.random.randn(N, D)}
    out_c, out_a = sess.run([c, a], feed_dict=values)
print("a =\n", out_a)
print("c =", out_c)
