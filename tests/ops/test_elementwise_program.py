"""The elementwise program format's one validator (graphflow/ops/elementwise_program.py): the
structure, the dtype rule of every instruction, filled-in dtypes and attr defaults."""

import numpy as np
import pytest

from graphflow.ops import elementwise_program as ep


def _program(inputs, instructions, output=None):
    return {"version": 1, "inputs": inputs, "instructions": instructions,
            "output": len(inputs) + len(instructions) - 1 if output is None else output}


def test_dtypes_and_attr_defaults_are_filled_in():
    program = _program(["int32", "float32"], [
        ["RealDiv", [0, 0], {}, None],                 # int32 / int32 -> float64
        ["Less", [1, 1], {}, None],                    # bool
        ["Select", [3, 1, 1], {}, None],               # float32 (the values' dtype)
        ["LeakyRelu", [4], {}, None],                  # alpha defaults to 0.2
        ["Cast", [5], {"DstT": "float64"}, None],
        ["Const", [], {"value": np.float32(2)}, "float64"],
        ["AddN", [2, 6, 7], {}, None]])
    checked = ep.check(program)
    assert [ins[3] for ins in checked["instructions"]] == [
        "float64", "bool", "float32", "float32", "float64", "float64", "float64"]
    assert checked["instructions"][3][2] == {"alpha": 0.2}
    assert checked["instructions"][5][2] == {"value": 2.0}
    assert type(checked["instructions"][5][2]["value"]) is float
    assert ep.check(checked) == checked  # canonical: checking again changes nothing
    assert ep.key(checked) == ep.key(ep.check(program))


def test_a_cast_takes_its_target_from_the_dtype_when_it_has_no_attr():
    checked = ep.check(_program(["float32"], [["Cast", [0], {}, "int8"]]))
    assert checked["instructions"][0][2:] == [{"DstT": "int8"}, "int8"]


@pytest.mark.parametrize("bad, message", [
    (_program(["float32"], [["Tanh", [0], {}, "float32"]], output=0), "output"),
    (_program(["float32"], [["Tanh", [1], {}, "float32"]]), "operand 1"),
    (_program(["float32"], [["MatMul", [0, 0], {}, "float32"]]), "not a fusible"),
    (_program(["int32"], [["Tanh", [0], {}, None]]), "does not take int32"),
    (_program(["float32"], [["Less", [0, 0], {}, "float32"]]), "gives bool, not float32"),
    (_program(["float32"], [["Add", [0], {}, None]]), "has 1 operands"),
    (_program(["float32"], [["Select", [0, 0, 0], {}, None]]), "condition must be bool"),
    (_program(["float32"], [["Const", [0], {"value": 1}, "float32"]]), "Const takes no operands"),
    (_program(["float32"], [["Tanh", [0], {}]]), "must be [op_type"),
    (_program(["float32"], []), "non-empty"),
    ({**_program(["float32"], [["Tanh", [0], {}, None]]), "version": 2}, "version"),
    (_program(["float32"], [["Cast", [0], {}, None]]), "needs a 'DstT'"),
])
def test_malformed_programs_name_the_problem(bad, message):
    with pytest.raises(ep.ProgramError, match=message.replace("[", r"\[")):
        ep.check(bad)


def test_input_dtypes_must_match():
    program = _program(["float32"], [["Tanh", [0], {}, None]])
    ep.check(program, ["float32"])
    with pytest.raises(TypeError, match="input 0 must be float32, got float64"):
        ep.check(program, [np.float64])
    with pytest.raises(ep.ProgramError, match="expects 1 inputs"):
        ep.check(program, [])


def test_the_allowed_op_types_can_be_narrowed_or_widened():
    program = _program(["float32", "float32"], [["BiasAdd", [0, 1], {}, None]])
    with pytest.raises(ep.ProgramError, match="not a fusible"):
        ep.check(program)
    assert ep.check(program, ops={"BiasAdd"})["instructions"][0][3] == "float32"
