"""TF 1.x's "basic classification" Keras tutorial as written (Sequential, Flatten, Dense, compile with a\ntf.train optimizer, fit, evaluate, predict), on synthetic 28x28 images."""
import numpy as np
import graphflow as tf
from graphflow import keras
rng = np.random.RandomState(0)
centers = rng.rand(10, 28, 28)
train_labels = rng.randint(0, 10, 2000)
train_images = np.clip(centers[train_labels] + 0.2 * rng.randn(2000, 28, 28), 0, 1)
test_labels = rng.randint(0, 10, 300)
test_images = np.clip(centers[test_labels] + 0.2 * rng.randn(300, 28, 28), 0, 1)
class_names = ['T-shirt/top', 'Trouser', 'Pullover', 'Dress', 'Coat', 'Sandal', 'Shirt', 'Sneaker', 'Bag', 'Ankle boot']
model = keras.Sequential([
    keras.layers.Flatten(input_shape=(28, 28)),
    keras.layers.Dense(128, activation=tf.nn.relu),
    keras.layers.Dense(10, activation=tf.nn.softmax)
])
model.compile(optimizer=tf.train.AdamOptimizer(), loss='sparse_categorical_crossentropy', metrics=['accuracy'])
model.fit(train_images, train_labels, epochs=3)
test_loss, test_acc = model.evaluate(test_images, test_labels)
print('Test accuracy:', test_acc)
predictions = model.predict(test_images)
print(np.argmax(predictions[0]), test_labels[0])
assert test_acc > 0.9
