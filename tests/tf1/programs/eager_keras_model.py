"""A tf.keras model trained eagerly: a Sequential model and a subclassed Model called on eager
tensors, a custom training loop with tf.GradientTape, evaluation with numpy."""
import numpy as np
import graphflow as tf

tf.enable_eager_execution()

rng = np.random.RandomState(2)
x = rng.randn(512, 8).astype(np.float32)
y = (np.sin(x[:, :1]) + 0.5 * x[:, 1:2] ** 2).astype(np.float32)

model = tf.keras.Sequential([
    tf.keras.layers.Dense(32, activation='relu', input_shape=(8,)),
    tf.keras.layers.Dense(32, activation='relu'),
    tf.keras.layers.Dense(1)])
optimizer = tf.train.AdamOptimizer(0.01)
dataset = tf.data.Dataset.from_tensor_slices((x, y)).shuffle(512, seed=3).batch(64)

def mse(model, xs, ys):
  return tf.reduce_mean(tf.square(model(xs) - ys))

first = float(mse(model, x, y))
for epoch in range(30):
  for xs, ys in dataset:
    with tf.GradientTape() as tape:
      loss = mse(model, xs, ys)
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
last = float(mse(model, x, y))
print("mse %.4f -> %.4f" % (first, last))
assert last < first / 5, (first, last)

class Residual(tf.keras.Model):
  def __init__(self):
    super(Residual, self).__init__()
    self.dense = tf.keras.layers.Dense(8)

  def call(self, inputs):
    return inputs + self.dense(inputs)

res = Residual()
out = res(tf.constant(x[:4]))
print(out.shape, len(res.trainable_variables))
assert out.shape.as_list() == [4, 8] and len(res.trainable_variables) == 2
