"""Loading the optional `onnx` package with a clear message when it is missing."""


def require_onnx():
    try:
        import onnx
        import onnx.numpy_helper  # noqa: F401  (used through the onnx module)
    except ImportError as exc:
        raise ImportError("graphflow's ONNX support needs the onnx package: "
                          'pip install "graphflow[onnx]"') from exc
    return onnx
