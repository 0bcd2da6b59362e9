"""An MNIST-style multilayer perceptron trained eagerly with tf.GradientTape on a tf.data pipeline
(synthetic 28x28 digits), then its step traced with tfe.defun, checkpointed and restored."""
import os
import tempfile
import numpy as np
import graphflow as tf

tf.enable_eager_execution()
tfe = tf.contrib.eager

rng = np.random.RandomState(0)
prototypes = (rng.rand(10, 784) > 0.7).astype(np.float32)
labels = rng.randint(0, 10, size=2000).astype(np.int64)
images = np.clip(prototypes[labels] + 0.3 * rng.randn(2000, 784), 0, 1).astype(np.float32)

class MLP(tfe.Network):
  def __init__(self):
    super(MLP, self).__init__()
    self.hidden = self.track_layer(tf.layers.Dense(128, activation=tf.nn.relu))
    self.out = self.track_layer(tf.layers.Dense(10))

  def call(self, x):
    return self.out(self.hidden(x))

model = MLP()
optimizer = tf.train.AdamOptimizer(1e-3)

def loss(logits, y):
  return tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))

def compute_accuracy(logits, y):
  return float(tf.reduce_mean(tf.cast(tf.equal(tf.argmax(logits, axis=1), y), tf.float32)))

dataset = tf.data.Dataset.from_tensor_slices((images, labels)).shuffle(2000, seed=0).batch(100)
for epoch in range(2):
  for (batch, (x, y)) in enumerate(dataset):
    with tf.GradientTape() as tape:
      value = loss(model(x), y)
    grads = tape.gradient(value, model.variables)
    optimizer.apply_gradients(zip(grads, model.variables))
  print("epoch %d loss %.4f accuracy %.3f" % (epoch, value.numpy(),
                                              compute_accuracy(model(images), labels)))
assert compute_accuracy(model(images), labels) > 0.95

@tfe.defun
def train_step(x, y):
  with tf.GradientTape() as tape:
    value = loss(model(x), y)
  optimizer.apply_gradients(zip(tape.gradient(value, model.variables), model.variables))
  return value

for (x, y) in dataset:
  value = train_step(x, y)
print("traced step loss", value.numpy(), "traces", train_step.trace_count)
assert train_step.trace_count == 1

checkpoint_dir = tempfile.mkdtemp()
checkpoint = tf.train.Checkpoint(model=model, optimizer=optimizer)
saved = checkpoint.save(os.path.join(checkpoint_dir, "ckpt"))
before = model(images[:5]).numpy()
for v in model.variables:
  v.assign(tf.zeros_like(v))
checkpoint.restore(saved)
np.testing.assert_array_equal(model(images[:5]).numpy(), before)
print("restored from", saved)
