"""The op registry (the Framework design's operator registration): declarations,
generated creators, and errors that teach."""
import numpy as np
import pytest

import paddle_nb as pd
from paddle_nb.core import attr_tensors, registry
from paddle_nb.core.framework_pb2 import OpProto


def test_every_op_is_declared_once_with_a_proto_and_a_cpu_kernel():
    for op_type in pd.registered_ops():
        op_def = registry.lookup(op_type)
        proto = op_def.proto()
        assert isinstance(proto, OpProto) and proto.type == op_type
        assert proto.IsInitialized()
        assert "cpu" in op_def.kernels, op_type
        assert op_def.comment, op_type


def test_op_proto_carries_slot_flags_and_attr_types():
    proto = registry.lookup("sum").proto()
    assert proto.inputs[0].name == "X" and proto.inputs[0].duplicable
    reshape = registry.lookup("reshape2").proto()
    xshape = next(o for o in reshape.outputs if o.name == "XShape")
    assert xshape.intermediate
    shape_in = next(i for i in reshape.inputs if i.name == "Shape")
    assert shape_in.dispensable
    mul = {a.name: a for a in registry.lookup("mul").proto().attrs}
    assert mul["x_num_col_dims"].type == 0   # INT


def test_unknown_op_type_names_the_closest_ones():
    with pytest.raises(pd.UnknownOpError) as e:
        pd.default_main_program().global_block().append_op("elementwise_ad", {}, {})
    msg = str(e.value)
    assert "unknown op type 'elementwise_ad'" in msg and "did you mean elementwise_add" in msg
    assert "test_registry.py" in msg            # the user's line
    assert not pd.default_main_program().global_block().ops     # nothing was added
    with pytest.raises(AttributeError, match="did you mean softmax"):
        pd.op.sofmax


def test_generated_creators_have_docstrings_and_build_ops(exe):
    doc = pd.op.elementwise_add.__doc__
    assert "Out = X + Y" in doc and "axis (int, default -1)" in doc and "Inputs:" in doc
    assert "elementwise_add" in dir(pd.op)
    x = pd.data("x", [None, 3])
    y = pd.op.elementwise_add(X=x, Y=x)
    parts = pd.op.split(X=y, num=3, axis=1)
    out = pd.op.reshape2(X=y, shape=[0, 3, 1])
    assert y.shape == (-1, 3) and len(parts) == 3 and parts[0].shape == (-1, 1)
    assert out.shape == (-1, 3, 1)          # XShape is intermediate: not returned
    got = exe.run(feed={"x": np.float32([[1, 2, 3]])}, fetch_list=[y, parts[2], out])
    np.testing.assert_allclose(got[0], [[2, 4, 6]])
    np.testing.assert_allclose(got[1], [[6]])
    assert got[2].shape == (1, 3, 1)


def test_every_op_records_the_user_line_that_created_it():
    x = pd.data("x", [None, 3])
    y = pd.relu(x)   # THIS LINE
    op = pd.default_main_program().global_block().ops[-1]
    assert op.output("Out") == [y.name]
    assert "test_registry.py" in op.created_at and "THIS LINE" in op.created_at
    assert op.attr("op_callstack")


def test_shape_mismatch_names_op_slot_shapes_and_line():
    x = pd.data("x", [None, 4])
    w = pd.var(np.ones((5, 2), np.float32))
    with pytest.raises(pd.ShapeError) as e:
        pd.layers.append("mul", {"X": [x], "Y": [w]})  # MISMATCH LINE
    msg = str(e.value)
    assert msg.startswith("block 0 > op 1 mul: slot Y: X's columns must equal Y's rows")
    assert "expected: Y with 4 rows" in msg and "x float32[-1, 4]" in msg
    assert "given:    Y var_0 float32[5, 2] with 5 rows" in msg
    assert "test_registry.py" in msg and "MISMATCH LINE" in msg
    # the failed op and its output were removed: the program is as it was
    gb = pd.default_main_program().global_block()
    assert [op.type for op in gb.ops] == ["assign_value"]
    assert list(gb.vars) == ["x", "var_0"]


def test_broadcast_mismatch_error():
    x = pd.data("x", [None, 4])
    y = pd.data("y", [3])
    with pytest.raises(pd.ShapeError, match=r"cannot be broadcast.*\n.*expected.*\n.*given: "
                                            r"+X x float32\[-1, 4\], Y y float32\[3\]"):
        x + y


def test_bad_slots_and_attrs_are_build_errors():
    gb = pd.default_main_program().global_block()
    x = pd.data("x", [None, 4])
    with pytest.raises(pd.BuildError, match=r"no input slot 'Z'.*\['X'\]"):
        gb.append_op("relu", {"Z": [x]}, {"Out": ["o"]})
    with pytest.raises(pd.BuildError, match="needs input slot X"):
        gb.append_op("relu", {}, {"Out": ["o"]})
    with pytest.raises(pd.BuildError, match="not duplicable"):
        gb.append_op("relu", {"X": [x, x]}, {"Out": ["o"]})
    with pytest.raises(pd.BuildError, match="'nope' is not declared"):
        gb.append_op("relu", {"X": ["nope"]}, {"Out": ["o"]})
    with pytest.raises(pd.BuildError, match=r"attribute axis: expected an integer.*int"):
        gb.append_op("softmax", {"X": [x]}, {"Out": ["o"]}, {"axis": "last"})
    assert [op.type for op in gb.ops] == [] and list(gb.vars) == ["x"]


def test_a_failed_op_removes_itself_not_an_identical_twin():
    x, w = pd.data("x", [None, 4]), pd.data("w", [4, 2])
    gb = pd.default_main_program().global_block()
    failures = 0
    for attempt in range(2):      # the same line twice: the two OpDescs are equal fields
        if attempt == 1:
            w.set_shape([5, 2])   # ... but now the second one does not fit
        try:
            gb.append_op("mul", {"X": [x], "Y": [w]}, {"Out": ["m"]})
        except pd.ShapeError:
            failures += 1
        if attempt == 0:
            first = gb.table.ops[0]
    assert failures == 1 and len(gb.ops) == 1
    assert gb.table.ops[0] is first          # the op that stayed is the one that succeeded


def test_registering_a_type_twice_is_refused():
    with pytest.raises(pd.BuildError, match="registered twice"):
        registry.register(registry.OpDef("relu", [], []))


def test_runtime_errors_name_the_op_and_the_line(exe):
    x = pd.data("x", [None, 2])
    y = pd.layers.reshape(x, [3, -1])  # RESHAPE LINE
    with pytest.raises(pd.ExecutionError) as e:
        exe.run(feed={"x": np.ones((2, 2), np.float32)}, fetch_list=[y])
    msg = str(e.value)
    # the op's own shape inference, run again on the values (core/runtime_shapes.py), says
    # what is wrong in its words (before: numpy's bare ValueError from inside the kernel)
    assert "block 0 > op 0 reshape2: at run time, slot X: X's size does not divide into " \
           "shape" in msg and "RESHAPE LINE" in msg


def test_op_facts_live_in_the_opdef_and_fit_its_slots_and_attributes():
    """What validation, the builders and the views read about an op is declared with it
    (OpDef fields), never in a list elsewhere: each fact must fit the declaration."""
    from paddle_nb.core import registry   # noqa: PLC0415
    for t in registry.types_where("activation"):
        op = registry.lookup(t)
        assert [s.name for s in op.inputs] == ["X"] and op.outputs[0].name == "Out", t
    for t in registry.types_where("allocates"):
        op = registry.lookup(t)
        assert all(op.attr(a) is not None for a in op.allocates), (t, op.allocates)
    assert registry.types_where("out_dtype") == ["equal", "greater_equal", "greater_than",
                                                 "less_equal", "less_than", "not_equal"]
    assert {"sum", "fill_zeros_like"} <= set(registry.types_where("grad_plumbing"))
    assert pd.layers.ACTIVATIONS == tuple(registry.types_where("activation"))
    assert "log" not in pd.layers.ACTIVATIONS and "relu" in pd.layers.ACTIVATIONS


# --- attribute tensors (attr_tensors.ATTRIBUTE_TENSORS) ------------------------------------------
def test_every_attribute_tensor_is_an_input_slot_of_its_registered_op():
    for op_type, tensors in attr_tensors.ATTRIBUTE_TENSORS.items():
        op_def = registry.lookup(op_type)              # only op types registered here
        for t in tensors:
            slot = op_def.input(t.slot)
            assert slot is not None and slot.dispensable, (op_type, t.slot)
            assert slot.duplicable == (t.form == "list"), (op_type, t.slot)
            assert op_def.attr(t.attr) is not None or op_type.endswith("interp_v2"), \
                (op_type, t.attr)                      # interp's is "out_h and out_w"
            assert t.elements in ("int", "float", "number", "real"), t


def test_every_tensor_slot_named_like_an_attribute_is_in_the_table():
    """A new op with an attribute-tensor slot (Fluid names them ...Tensor, ...TensorList,
    ..._tensor) needs its row, or its tensor would be read by no rule at all."""
    listed = {(op, t.slot) for op, ts in attr_tensors.ATTRIBUTE_TENSORS.items() for t in ts}
    # data named like an attribute tensor: set_value's ValueTensor is the values written
    # (any shape that broadcasts to the part), not an attribute's value
    data = {("set_value", "ValueTensor")}
    for op_type in registry.registered_types(include_grad=False):
        for slot in registry.lookup(op_type).inputs:
            if slot.name.endswith(("Tensor", "TensorList", "_tensor")) and \
                    (op_type, slot.name) not in data:
                assert (op_type, slot.name) in listed, (op_type, slot.name)


def test_an_op_reads_only_attribute_tensors_it_has_and_its_gradient_inherits_them():
    for op_type in registry.registered_types():
        op_def = registry.lookup(op_type)
        stands = {t.slot for t in attr_tensors.attribute_tensors(op_def)}
        assert set(op_def.reads_attr_tensors) <= stands, op_type
    assert registry.lookup("slice_grad").reads_attr_tensors == registry.lookup(
        "slice").reads_attr_tensors
    assert registry.lookup("clip_grad").reads_attr_tensors == ("Min", "Max")
    with pytest.raises(pd.BuildError, match=r"op not_an_op says it reads \['X'\] as "
                                            r"attribute tensors"):
        registry.register(registry.OpDef("not_an_op", [registry.Slot("X")], [],
                                         reads_attr_tensors=("X",)))
    assert not registry.is_registered("not_an_op")


def test_the_creators_say_which_attribute_tensors_are_read():
    doc = pd.op.fill_constant.__doc__
    assert "ShapeTensorList (duplicable, dispensable) [attribute shape as a tensor: read at " \
           "run time]" in doc
    assert "StartsTensor (dispensable) [attribute starts as a tensor: read at run time]" in \
        pd.op.slice.__doc__
