"""Logistic regression on a tf.data pipeline read with tfe.Iterator, as TF 1.x eager tutorials
wrote it: a softmax model of weights and biases, trained with tfe.implicit_gradients."""
import numpy as np
import graphflow as tf

tf.enable_eager_execution()
tfe = tf.contrib.eager

rng = np.random.RandomState(1)
centers = rng.randn(3, 4).astype(np.float32) * 3
labels = rng.randint(0, 3, size=600)
features = (centers[labels] + rng.randn(600, 4)).astype(np.float32)

W = tfe.Variable(tf.zeros([4, 3]), name="weights")
b = tfe.Variable(tf.zeros([3]), name="bias")

def logits(x):
  return tf.matmul(x, W) + b

def loss_fn(x, y):
  return tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits(x)))

def accuracy(x, y):
  predictions = tf.argmax(logits(x), axis=1, output_type=tf.int32)
  return tf.reduce_mean(tf.cast(tf.equal(predictions, y), tf.float32))

grad_fn = tfe.implicit_gradients(loss_fn)
optimizer = tf.train.GradientDescentOptimizer(0.5)
dataset = tf.data.Dataset.from_tensor_slices((features, labels.astype(np.int32)))
first_loss = float(loss_fn(features, labels.astype(np.int32)))
for epoch in range(5):
  for (x, y) in tfe.Iterator(dataset.shuffle(600, seed=epoch).batch(50)):
    optimizer.apply_gradients(grad_fn(x, y))
  print("epoch %d: loss %.4f accuracy %.3f" % (
      epoch, loss_fn(features, labels.astype(np.int32)).numpy(),
      accuracy(features, labels.astype(np.int32)).numpy()))
final_loss = float(loss_fn(features, labels.astype(np.int32)))
acc = float(accuracy(features, labels.astype(np.int32)))
assert final_loss < first_loss / 3, (first_loss, final_loss)
assert acc > 0.9, acc
