"""ONNX StringNormalizer at import: stopwords (case-sensitive or not), case change, the [1, C]
form, and the single empty string left when every element is a stopword."""

import numpy as np
import pytest
from onnx import TensorProto, helper

from graphflow.interop import onnx as gf_onnx


def _normalizer(shape, **attrs):
    node = helper.make_node("StringNormalizer", ["x"], ["y"], **attrs)
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", TensorProto.STRING,
                                                                          shape)],
                              [helper.make_tensor_value_info("y", TensorProto.STRING, None)])
    return gf_onnx.import_model(helper.make_model(graph,
                                                  opset_imports=[helper.make_opsetid("", 17)]))


def _strings(*rows):
    return np.array(rows, dtype=object)


@pytest.mark.parametrize("sensitive, want", [(1, [b"MONDAY", b"A.B", b"X"]), (0, [b"A.B", b"X"])])
def test_stopwords_then_case_change(sensitive, want):
    model = _normalizer([None], stopwords=["Monday", "a*b"], is_case_sensitive=sensitive,
                        case_change_action="UPPER")
    got = model.run({"x": _strings(b"monday", b"Monday", b"a*b", b"a.b", b"x")})["y"]
    assert list(got) == want  # the stopword 'a*b' is a word, not a pattern


def test_two_dims_lowercase_unicode_and_all_removed():
    model = _normalizer([1, None], stopwords=["stop"], case_change_action="LOWER")
    got = model.run({"x": np.array([["\u00c9T\u00c9".encode(), b"STOP", b"Go"]], dtype=object)})
    assert got["y"].tolist() == [["\u00e9t\u00e9".encode(), b"go"]]
    assert model.run({"x": np.array([[b"stop", b"Stop"]], dtype=object)})["y"].tolist() == [[b""]]
    plain = _normalizer([None], stopwords=["x"])
    assert plain.run({"x": _strings(b"x", b"X")})["y"].tolist() == [b""]
