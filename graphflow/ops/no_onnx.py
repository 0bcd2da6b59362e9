"""Why an op has no ONNX form: the shared reasons that records quote in their `onnx` fact.

Each name is a whole fact, `{"none": "why"}`, so a record reads `onnx=no_onnx.GRADIENT`. A reason
that only one op has is written on its own record. Plain data: `interop/onnx` interprets it.
"""


def none(reason):
    """The `onnx` fact of an op with no ONNX form: `{"none": reason}`."""
    return {"none": reason}


GRADIENT = none("a gradient kernel: ONNX inference graphs hold no gradient ops (the "
                "ai.onnx.preview.training domain is not implemented by runtimes)")
TENSOR_ARRAY = none("TensorArray state (a resource handle written in place) has no ONNX form; "
                    "ONNX's sequence ops are values, not indexable buffers")
STRING = none("ONNX's string support has no op for this (only StringNormalizer, RegexFullMatch, "
              "StringConcat, StringSplit with different semantics)")
CASE = none("ONNX's only case change is StringNormalizer: a locale's rules, and 1-D or [1, C] "
            "inputs only (TF's lower/upper change ASCII letters, any shape)")
REGEX = none("ONNX's RegexFullMatch (opset 20, RE2 syntax) is not mapped yet")
SUMMARY = none("a TensorBoard summary: serialized protobufs, no ONNX meaning")
IO = none("file or image I/O: ONNX graphs have no access to files")
RANDOM = none("random numbers: ONNX's generators draw different numbers, outputs cannot match")
STATE = none("updates a variable: ONNX graphs are pure functions of their inputs")
SPECIAL = none("ONNX has no gamma-family special functions (lgamma, digamma, polygamma)")
PARSE_EXAMPLE = none("protobuf Example parsing has no ONNX operator")
LOGGING = none("logs on the host (a side effect ONNX has no op for)")
CHECK = none("a run-time check that raises with a message: ONNX has no failing op")
OPTIMIZER_BUILT = none("built by graphflow's optimizer on its run plans, never in a user's graph "
                       "(export the graph before optimization)")
QUEUE = none("a queue or reader: session state shared across runs and threads, which ONNX has not")
DATA = none("reads a tf.data pipeline (host-side Python iterator state)")
COLLECTIVE = none("an MPI collective: it exchanges values between processes, and an ONNX graph "
                  "runs in one")
