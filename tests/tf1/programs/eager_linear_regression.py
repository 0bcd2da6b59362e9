"""TF 1.x's eager linear regression example (tf.contrib.eager's "linear_regression"): a model
trained with tfe.implicit_gradients on a tf.data pipeline of synthetic points."""
import numpy as np
import graphflow as tf

tf.enable_eager_execution()
tfe = tf.contrib.eager


class LinearModel(tfe.Network):
  def __init__(self):
    super(LinearModel, self).__init__()
    self._hidden_layer = self.track_layer(tf.layers.Dense(1))

  def call(self, xs):
    return self._hidden_layer(xs)


def mean_square_loss(model, xs, ys):
  return tf.reduce_mean(tf.square(tf.subtract(model(xs), ys)))


def fit(model, dataset, optimizer, verbose=False, logdir=None):
  mse = lambda xs, ys: mean_square_loss(model, xs, ys)
  loss_and_grads = tfe.implicit_value_and_gradients(mse)
  for i, (xs, ys) in enumerate(tfe.Iterator(dataset)):
    loss, grads = loss_and_grads(xs, ys)
    if verbose and i % 50 == 0:
      print("Iteration %d: loss = %s" % (i, loss.numpy()))
    optimizer.apply_gradients(grads)
  return loss


def synthetic_dataset(w, b, noise_level, batch_size, num_batches):
  rng = np.random.RandomState(0)
  xs = rng.randn(batch_size * num_batches, w.shape[0]).astype(np.float32)
  ys = (xs.dot(w) + b + noise_level * rng.randn(batch_size * num_batches, 1)).astype(np.float32)
  return tf.data.Dataset.from_tensor_slices((xs, ys)).batch(batch_size)


true_w = np.array([[-2.0], [4.0], [1.0]], dtype=np.float32)
true_b = np.array([0.5], dtype=np.float32)
dataset = synthetic_dataset(true_w, true_b, noise_level=0.01, batch_size=64, num_batches=40)
model = LinearModel()
optimizer = tf.train.GradientDescentOptimizer(learning_rate=0.1)
loss = None
for epoch in range(2):
  loss = fit(model, dataset, optimizer, verbose=True)
kernel, bias = model.variables
print("learned w:", kernel.numpy().ravel(), "b:", bias.numpy())
assert float(loss) < 1e-3, loss
np.testing.assert_allclose(kernel.numpy(), true_w, atol=0.02)
np.testing.assert_allclose(bias.numpy(), true_b, atol=0.02)
