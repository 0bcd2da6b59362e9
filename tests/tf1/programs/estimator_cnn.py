"""TF1's layers/Estimator CNN tutorial (model_fn with EstimatorSpec, numpy_input_fn, logging hook,
train/evaluate/predict), on synthetic 8x8 digits."""
import numpy as np
import graphflow as tf
tf.logging.set_verbosity(tf.logging.INFO)
def cnn_model_fn(features, labels, mode):
  input_layer = tf.reshape(features["x"], [-1, 8, 8, 1])
  conv1 = tf.layers.conv2d(inputs=input_layer, filters=8, kernel_size=[3, 3], padding="same", activation=tf.nn.relu)
  pool1 = tf.layers.max_pooling2d(inputs=conv1, pool_size=[2, 2], strides=2)
  pool2_flat = tf.reshape(pool1, [-1, 4 * 4 * 8])
  dense = tf.layers.dense(inputs=pool2_flat, units=32, activation=tf.nn.relu)
  dropout = tf.layers.dropout(inputs=dense, rate=0.4, training=mode == tf.estimator.ModeKeys.TRAIN)
  logits = tf.layers.dense(inputs=dropout, units=10)
  predictions = {"classes": tf.argmax(input=logits, axis=1), "probabilities": tf.nn.softmax(logits, name="softmax_tensor")}
  if mode == tf.estimator.ModeKeys.PREDICT:
    return tf.estimator.EstimatorSpec(mode=mode, predictions=predictions)
  loss = tf.losses.sparse_softmax_cross_entropy(labels=labels, logits=logits)
  if mode == tf.estimator.ModeKeys.TRAIN:
    optimizer = tf.train.GradientDescentOptimizer(learning_rate=0.05)
    train_op = optimizer.minimize(loss=loss, global_step=tf.train.get_global_step())
    return tf.estimator.EstimatorSpec(mode=mode, loss=loss, train_op=train_op)
  eval_metric_ops = {"accuracy": tf.metrics.accuracy(labels=labels, predictions=predictions["classes"])}
  return tf.estimator.EstimatorSpec(mode=mode, loss=loss, eval_metric_ops=eval_metric_ops)
rng = np.random.RandomState(0)
centers = rng.rand(10, 64)
y = rng.randint(0, 10, 1000).astype(np.int32)
x = (centers[y] + 0.1 * rng.randn(1000, 64)).astype(np.float32)
import tempfile
clf = tf.estimator.Estimator(model_fn=cnn_model_fn, model_dir=tempfile.mkdtemp())
tensors_to_log = {"probabilities": "softmax_tensor"}
logging_hook = tf.train.LoggingTensorHook(tensors=tensors_to_log, every_n_iter=200)
train_input_fn = tf.estimator.inputs.numpy_input_fn(x={"x": x[:800]}, y=y[:800], batch_size=50, num_epochs=None, shuffle=True)
clf.train(input_fn=train_input_fn, steps=400, hooks=[logging_hook])
eval_input_fn = tf.estimator.inputs.numpy_input_fn(x={"x": x[800:]}, y=y[800:], num_epochs=1, shuffle=False)
metrics = clf.evaluate(input_fn=eval_input_fn)
print(metrics)
assert metrics["accuracy"] > 0.9 and metrics["global_step"] == 400
preds = list(clf.predict(input_fn=tf.estimator.inputs.numpy_input_fn(x={"x": x[:5]}, shuffle=False)))
print([p["classes"] for p in preds], y[:5])
assert [int(p["classes"]) for p in preds] == list(y[:5])
