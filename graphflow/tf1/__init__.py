"""The TF1 surface built on the engine: layers, losses, variable scopes, initializers, optimizers and
the `tf.train`/`tf.nn`/`tf.random` namespaces, with TF1's names, arguments and defaults."""
