"""framework.proto: wire compatibility, byte-exact round trips, bad bytes, to_code()."""
import os
import random

import numpy as np
import pytest

import paddle_nb as pd
from paddle_nb.core import attrs as A
from paddle_nb.core.framework_pb2 import AttrType, BlockDesc, OpDesc, ProgramDesc, VarDesc, VarType

FIXTURES = os.path.join(os.path.dirname(__file__), "fixtures", "paddle")


def _mlp():
    x = pd.data("x", [None, 4])
    h = pd.layer.fc(x, 8, act="relu")
    return pd.layer.fc(h, 3, act="softmax")


def test_field_numbers_match_paddle():
    """The numbers that make the format Paddle's (docs/architecture.md, decision 1)."""
    def numbers(msg):
        return {f.name: f.number for f in msg.DESCRIPTOR.fields}
    assert ProgramDesc.DESCRIPTOR.full_name == "paddle.framework.proto.ProgramDesc"
    assert numbers(ProgramDesc)["blocks"] == 1
    assert numbers(BlockDesc) == {"idx": 1, "parent_idx": 2, "vars": 3, "ops": 4,
                                  "forward_block_idx": 5}
    assert {k: v for k, v in numbers(OpDesc).items()} == {
        "inputs": 1, "outputs": 2, "type": 3, "attrs": 4, "is_target": 5}
    assert numbers(OpDesc.Var) == {"parameter": 1, "arguments": 2}
    attr = numbers(OpDesc.Attr)
    assert [attr[k] for k in ("name", "type", "i", "f", "s", "ints", "floats", "strings", "b",
                              "bools", "block_idx", "l")] == [1, 2, 3, 4, 5, 6, 7, 8, 10, 11,
                                                              12, 13]
    assert numbers(VarDesc)["name"] == 1 and numbers(VarDesc)["type"] == 2
    assert numbers(VarDesc)["persistable"] == 3
    assert numbers(VarType)["lod_tensor"] == 3 and numbers(VarType)["tensor_array"] == 4
    assert numbers(VarType.LoDTensorDesc) == {"tensor": 1, "lod_level": 2}
    assert numbers(VarType.TensorDesc) == {"data_type": 1, "dims": 2}
    assert VarType.FP32 == 5 and VarType.LOD_TENSOR == 7 and AttrType.BLOCK == 8


def test_our_program_round_trips_byte_for_byte():
    _mlp()
    main = pd.default_main_program()
    sub = main.create_block()
    sub.create_var("local", [2], "float32")
    main.rollback()
    data = main.to_bytes()
    again = pd.Program.from_bytes(data)
    assert again.to_bytes() == data
    assert pd.Program.parse_from_string(data).to_bytes() == data
    assert again.to_code() == main.to_code()
    assert again.block(1).parent_idx == 0


@pytest.mark.parametrize("name", ["mlp_train.pdesc", "mlp_startup.pdesc", "ops_misc.pdesc",
                                  "mlp_infer.pdmodel"])
def test_paddle_programs_round_trip_byte_for_byte(name):
    data = open(os.path.join(FIXTURES, name), "rb").read()
    assert pd.Program.from_bytes(data).to_bytes() == data


def test_unknown_attributes_are_kept_and_written_back():
    data = open(os.path.join(FIXTURES, "mlp_train.pdesc"), "rb").read()
    prog = pd.Program.from_bytes(data)
    mul = prog.global_block().ops[0]
    assert mul.type == "mul"
    for paddle_only in ("use_mkldnn", "scale_x", "op_role", "op_callstack"):
        assert mul.has_attr(paddle_only)
    # editing one attribute leaves every other one as it was
    mul._set_attr("x_num_col_dims", 1)
    assert prog.to_bytes() == data
    prog.global_block().ops[2]._set_attr("my_note", "kept")
    again = pd.Program.from_bytes(prog.to_bytes())
    assert again.global_block().ops[2].attr("my_note") == "kept"
    assert again.global_block().ops[0].attr("use_mkldnn") is False


@pytest.mark.parametrize("bad", [
    b"", b"\x00", b"garbage bytes that are not protobuf",
    bytes(random.Random(0).randrange(256) for _ in range(300)),
])
def test_bad_bytes_give_a_clear_error(bad):
    with pytest.raises(pd.ProgramFormatError, match="ProgramDesc|program"):
        pd.Program.from_bytes(bad)


def test_truncated_bytes_give_a_clear_error():
    data = open(os.path.join(FIXTURES, "mlp_train.pdesc"), "rb").read()
    for cut in (len(data) // 3, len(data) // 2, len(data) - 7):
        with pytest.raises(pd.ProgramFormatError):
            pd.Program.from_bytes(data[:cut])


def test_a_bad_block_tree_is_refused():
    d = ProgramDesc()
    d.blocks.add(idx=0, parent_idx=-1)
    d.blocks.add(idx=1, parent_idx=5)
    with pytest.raises(pd.ProgramFormatError, match="parent_idx=5"):
        pd.Program.from_bytes(d.SerializeToString())
    with pytest.raises(pd.ProgramFormatError, match="needs bytes"):
        pd.Program.from_bytes("a string")


def test_to_code_prints_ops_vars_and_nested_blocks():
    y = _mlp()
    code = pd.default_main_program().to_code()
    assert "var x : float32[-1, 4]" in code
    assert "var fc_0.w_0 : float32[4, 8]  # param" in code
    assert "fc_0.tmp_0 = mul(X=[x], Y=[fc_0.w_0]) {x_num_col_dims=1, y_num_col_dims=1}" in code
    assert f"{y.name} = softmax(X=[fc_1.tmp_1]) {{axis=-1}}" in code
    # Paddle's conditional_block: its sub-block is printed indented under it
    data = open(os.path.join(FIXTURES, "ops_misc.pdesc"), "rb").read()
    lines = pd.Program.from_bytes(data).to_code().splitlines()
    i = next(i for i, line in enumerate(lines) if "conditional_block(" in line)
    assert "sub_block=block 1" in lines[i]
    assert lines[i + 1] == "    {  // block 1, parent 0"
    assert lines[i + 2] == "        var scale_1.tmp_0 : float32[]  # stop_gradient"
    assert lines[i + 4].startswith("        scale_1.tmp_0 = scale(X=[reduce_sum_0.tmp_0])")


def test_attribute_types_round_trip():
    op = OpDesc(type="x")
    values = {A.INT: 3, A.FLOAT: 0.5, A.STRING: "s", A.INTS: [1, 2], A.FLOATS: [0.5],
              A.STRINGS: ["a"], A.BOOLEAN: True, A.BOOLEANS: [True, False], A.BLOCK: 2,
              A.LONG: 2**40, A.LONGS: [2**40], A.FLOAT64: 0.1, A.FLOAT64S: [0.1]}
    for t, v in values.items():
        a = op.attrs.add(name=f"a{t}")
        A.write(a, t, v)
        assert A.read(a) == v
    with pytest.raises(TypeError):
        A.write(op.attrs.add(name="bad"), A.INT, "three")
    assert np.isclose(A.read(op.attrs[1]), 0.5)
