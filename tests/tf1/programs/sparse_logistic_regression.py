"""Logistic regression on hashed sparse features as TF1 tutorials wrote it (the "wide" part of a
click model): each example is a bag of "field=value" strings, fed through a sparse_placeholder,
hashed with string_to_hash_bucket_fast into a SparseTensor of bucket ids, and scored two ways,
embedding_lookup_sparse over a weight column and sparse_tensor_dense_matmul of a multi-hot
SparseTensor, trained with GradientDescent on synthetic clicks. It checks that both models learn,
that they agree, and that the numbers are TensorFlow's (recorded from TensorFlow 2.21's
tf.compat.v1; tests/tf1/test_sparse_logistic_program.py reruns this program under TensorFlow)."""
import json
import numpy as np
import graphflow as tf

NUM_BUCKETS = 256
FIELDS = {"site": ["news", "sports", "shop", "mail", "video"],
          "device": ["phone", "tablet", "desktop"],
          "hour": [str(h) for h in range(0, 24, 3)],
          "ad": ["a%d" % i for i in range(12)]}
# TensorFlow's numbers for this program: losses of both models after steps 0, 100, ..., 400,
# and the accuracy on held-out examples
TF_LOSSES = [0.6931473016738892, 0.45020759105682373, 0.4234502911567688, 0.415230929851532,
             0.4119023084640503]
TF_ACCURACY = 0.78125

rng = np.random.RandomState(42)
truth = {f + "=" + v: rng.randn() * 1.5 for f, values in FIELDS.items() for v in values}

def make_examples(n):
  examples, labels = [], []
  for _ in range(n):
    feats = [f + "=" + values[rng.randint(len(values))] for f, values in FIELDS.items()]
    if rng.rand() < 0.5:
      feats.append("ad=" + FIELDS["ad"][rng.randint(12)])  # a second ad shown beside the first
    score = sum(truth[t] for t in feats) - 0.5
    examples.append(feats)
    labels.append(float(rng.rand() < 1.0 / (1.0 + np.exp(-score))))
  return examples, np.array(labels, np.float32)

def to_sparse(examples):
  indices = [[i, j] for i, feats in enumerate(examples) for j in range(len(feats))]
  values = [t.encode() for feats in examples for t in feats]
  width = max(len(feats) for feats in examples)
  return tf.SparseTensorValue(np.array(indices, np.int64), np.array(values, object),
                              np.array([len(examples), width], np.int64))

train_x, train_y = make_examples(512)
test_x, test_y = make_examples(128)

features = tf.sparse_placeholder(tf.string, name="features")
labels = tf.placeholder(tf.float32, [None], name="labels")
bucket_ids = tf.SparseTensor(features.indices,
                             tf.string_to_hash_bucket_fast(features.values, NUM_BUCKETS),
                             features.dense_shape)

with tf.variable_scope("lookup"):
  weights = tf.get_variable("weights", [NUM_BUCKETS, 1], initializer=tf.zeros_initializer())
  bias = tf.get_variable("bias", [], initializer=tf.zeros_initializer())
  logits_a = tf.squeeze(tf.nn.embedding_lookup_sparse(weights, bucket_ids, None, combiner="sum"),
                        [1]) + bias

with tf.variable_scope("matmul"):
  weights_b = tf.get_variable("weights", [NUM_BUCKETS, 1], initializer=tf.zeros_initializer())
  bias_b = tf.get_variable("bias", [], initializer=tf.zeros_initializer())
  multi_hot = tf.SparseTensor(
      tf.stack([bucket_ids.indices[:, 0], bucket_ids.values], axis=1),
      tf.ones_like(bucket_ids.values, dtype=tf.float32),
      tf.stack([bucket_ids.dense_shape[0], NUM_BUCKETS]))
  logits_b = tf.squeeze(tf.sparse_tensor_dense_matmul(multi_hot, weights_b), [1]) + bias_b

loss_a = tf.reduce_mean(tf.nn.sigmoid_cross_entropy_with_logits(labels=labels, logits=logits_a))
loss_b = tf.reduce_mean(tf.nn.sigmoid_cross_entropy_with_logits(labels=labels, logits=logits_b))
optimizer = tf.train.GradientDescentOptimizer(learning_rate=0.5)
train_op = tf.group(optimizer.minimize(loss_a), optimizer.minimize(loss_b))
accuracy = tf.reduce_mean(tf.cast(tf.equal(tf.cast(logits_a > 0, tf.float32), labels),
                                  tf.float32))

train_feed = {features: to_sparse(train_x), labels: train_y}
losses_a, losses_b = [], []
with tf.Session() as sess:
  sess.run(tf.global_variables_initializer())
  for step in range(401):
    if step % 100 == 0:
      la, lb = sess.run([loss_a, loss_b], train_feed)
      losses_a.append(float(la)); losses_b.append(float(lb))
      print("step %d: loss %.4f (lookup) %.4f (matmul)" % (step, la, lb))
    sess.run(train_op, train_feed)
  test_accuracy = float(sess.run(accuracy, {features: to_sparse(test_x), labels: test_y}))
  print("held-out accuracy %.4f" % test_accuracy)
print(json.dumps({"losses_a": losses_a, "losses_b": losses_b, "accuracy": test_accuracy}))

assert losses_a[-1] < 0.65 * losses_a[0], losses_a           # it learns
np.testing.assert_allclose(losses_b, losses_a, rtol=1e-5)   # both models are one model
np.testing.assert_allclose(losses_a, TF_LOSSES, rtol=1e-4)  # TensorFlow's numbers
assert abs(test_accuracy - TF_ACCURACY) < 1e-6 and test_accuracy > 0.7, test_accuracy
