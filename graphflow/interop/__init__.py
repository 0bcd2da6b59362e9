"""Interoperability with other systems: ONNX files (`interop.onnx`)."""
