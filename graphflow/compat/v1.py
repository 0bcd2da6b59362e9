"""`graphflow.compat.v1`: the TF1 API, which is graphflow's own public API.

`import graphflow.compat.v1 as tf` binds the `graphflow` package itself: this module replaces its
own entry in `sys.modules` with it, so there is one namespace and no list of names to keep in step.
"""

import sys

import graphflow

sys.modules[__name__] = graphflow
