"""The bugs the property tests found: minimal reproductions, kept as regression tests now
they are fixed."""
from __future__ import annotations

import numpy as np
import pytest

import paddle_nb as pd
from paddle_nb.core.errors import ProgramFormatError
from paddle_nb.core.framework_pb2 import ProgramDesc

def test_transpose2_of_a_0d_tensor_stays_0d():
    """Found by test_random_programs_round_trip_and_match_numpy: the kernel's
    ``np.ascontiguousarray`` turns a 0-d result into shape [1] (shape inference says [])."""
    prog = pd.Program()
    blk = prog.global_block()
    x = blk.create_var("x", shape=[], dtype="float32")
    blk.append_op("transpose2", inputs={"X": [x]}, outputs={"Out": ["out"], "XShape": ["xs"]},
                  attrs={"axis": []})
    assert blk.var("out").shape == ()
    out, = pd.Executor().run(prog, feed={"x": np.array(2.0, np.float32)}, fetch_list=["out"],
                             scope=pd.Scope())
    assert out.shape == ()


def test_softmax_of_a_0d_tensor():
    """Shape inference accepts a 0-d X (declares []), the kernel raises AxisError. Paddle
    2.5+ gives 1.0 (the softmax over a single element)."""
    prog = pd.Program()
    blk = prog.global_block()
    x = blk.create_var("x", shape=[], dtype="float32")
    blk.append_op("softmax", inputs={"X": [x]}, outputs={"Out": ["out"]}, attrs={"axis": -1})
    out, = pd.Executor().run(prog, feed={"x": np.array(2.0, np.float32)}, fetch_list=["out"],
                             scope=pd.Scope())
    assert out.shape == () and out == 1.0


@pytest.mark.parametrize("op", ["sgd", "momentum", "adam"])
def test_optimizers_update_a_0d_parameter(op):
    """The numba kernels return a Python float for 0-d arrays; ``.astype`` then fails."""
    prog = pd.Program()
    blk = prog.global_block()
    scalar = dict(shape=[], dtype="float32")
    ins = {"Param": [blk.create_var("p", **scalar)], "Grad": [blk.create_var("g", **scalar)],
           "LearningRate": [blk.create_var("lr", shape=[1], dtype="float32")]}
    feed = {"p": np.array(1.0, np.float32), "g": np.array(0.5, np.float32),
            "lr": np.float32([0.1])}
    outs = {"ParamOut": ["p_out"]}
    if op == "momentum":
        ins["Velocity"] = [blk.create_var("v", **scalar)]
        feed["v"] = np.array(0.0, np.float32)
        outs["VelocityOut"] = ["v_out"]
    if op == "adam":
        for slot in ("Moment1", "Moment2"):
            ins[slot] = [blk.create_var(slot, **scalar)]
            feed[slot] = np.array(0.25, np.float32)
        for slot in ("Beta1Pow", "Beta2Pow"):
            ins[slot] = [blk.create_var(slot, shape=[1], dtype="float32")]
            feed[slot] = np.float32([0.9])
        outs.update(Moment1Out=["m1"], Moment2Out=["m2"], Beta1PowOut=["b1"],
                    Beta2PowOut=["b2"])
    blk.append_op(op, inputs=ins, outputs=outs)
    p_out, = pd.Executor().run(prog, feed=feed, fetch_list=["p_out"], scope=pd.Scope())
    assert p_out.shape == () and p_out < 1.0


@pytest.mark.parametrize("what", ["attr without type", "var without type",
                                  "op input without parameter"])
def test_bytes_missing_a_required_field_are_refused(what):
    """Found by the mutated-bytes property: upb's ParseFromString does not check proto2
    required fields, so from_bytes accepts the program and to_bytes() then raises
    google.protobuf EncodeError. Paddle's C++ parser refuses such bytes."""
    desc = ProgramDesc()
    desc.CopyFrom(pd.Program().desc)
    blk = desc.blocks[0]
    if what == "attr without type":
        blk.ops.add(type="relu").attrs.add(name="alpha")
    elif what == "var without type":
        blk.vars.add(name="v")
    else:
        blk.ops.add(type="relu").inputs.add(arguments=["x"])
    data = desc.SerializePartialToString()
    with pytest.raises(ProgramFormatError):
        pd.Program.from_bytes(data)


def test_elementwise_gradient_of_a_0d_operand_stays_0d():
    """The root cause of the transpose2 bug (``np.ascontiguousarray`` makes 0-d arrays 1-d)
    also shapes the gradient of a 0-d elementwise operand [1] (ops/elementwise.py,
    ``unbroadcast``); the declared Y@GRAD is []."""
    prog = pd.Program()
    blk = prog.global_block()
    x = blk.create_var("x", shape=[3], dtype="float32")
    y = blk.create_parameter("y", shape=[], dtype="float32")
    blk.append_op("elementwise_add", inputs={"X": [x], "Y": [y]}, outputs={"Out": ["out"]})
    blk.append_op("mean", inputs={"X": ["out"]}, outputs={"Out": ["loss"]})
    with pd.program_guard(prog):
        pd.append_backward(blk.var("loss"))
    scope = pd.Scope()
    scope.var("y").set(np.array(0.5, np.float32))
    grad, = pd.Executor().run(prog, feed={"x": np.ones(3, np.float32)},
                              fetch_list=["y@GRAD"], scope=scope)
    assert blk.var("y@GRAD").shape == () and grad.shape == ()

