"""A TF1 CSV input pipeline as the premade-estimator tutorials wrote it: TextLineDataset(...).skip(1),\nmap(decode_csv) into a features dict, shuffle/repeat/batch, a one-shot iterator training a model."""
import numpy as np, tempfile, os
import graphflow as tf
d = tempfile.mkdtemp()
rng = np.random.RandomState(0)
path = os.path.join(d, "iris.csv")
with open(path, "w") as f:
    f.write("sepal_length,sepal_width,petal_length,petal_width,species\r\n")
    for _ in range(300):
        k = rng.randint(0, 3)
        vals = rng.randn(4) * 0.3 + [k, 2 * k, -k, 0.5 * k]
        f.write(",".join("%.3f" % v for v in vals) + ",%d\n" % k)
CSV_COLUMN_NAMES = ['SepalLength', 'SepalWidth', 'PetalLength', 'PetalWidth', 'Species']
CSV_TYPES = [[0.0], [0.0], [0.0], [0.0], [0]]
def _parse_line(line):
    fields = tf.decode_csv(line, record_defaults=CSV_TYPES)
    features = dict(zip(CSV_COLUMN_NAMES, fields))
    label = features.pop('Species')
    return features, label
def csv_input_fn(csv_path, batch_size):
    dataset = tf.data.TextLineDataset(csv_path).skip(1)
    dataset = dataset.map(_parse_line)
    dataset = dataset.shuffle(1000).repeat().batch(batch_size)
    return dataset
features, labels = csv_input_fn(path, 32).make_one_shot_iterator().get_next()
x = tf.stack([features[k] for k in CSV_COLUMN_NAMES[:4]], axis=1)
logits = tf.layers.dense(tf.layers.dense(x, 10, tf.nn.relu), 3)
loss = tf.losses.sparse_softmax_cross_entropy(labels, logits)
acc = tf.reduce_mean(tf.cast(tf.equal(tf.argmax(logits, 1, output_type=tf.int32), labels), tf.float32))
train = tf.train.AdamOptimizer(0.05).minimize(loss)
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    for i in range(200):
        _, a = sess.run([train, acc])
    print("batch accuracy", a)
    assert a > 0.8
