"""`tf.keras` in graph mode, as TF1 ran it: layers build ops on the default graph, models compile
into a loss, a training op and metrics, and `fit`/`evaluate`/`predict` run them in the backend's
session. The public namespaces (`tf.keras`, `tf.keras.layers`, ...) are declared in
`graphflow/__init__.py` over these modules' `__all__`."""
