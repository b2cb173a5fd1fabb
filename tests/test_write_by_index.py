"""What the op table cannot show of the ops that write into tensors by index (set_value,
index_put, index_add, scatter_nd_add, put_along_axis, fill_diagonal_tensor): set_value's
constants stored as Paddle 2.6 stores them (Scalars), and indices out of range or modes not
built refused in the op's words."""
import numpy as np
import pytest

import paddle_nb as pd
from paddle_nb.core import attrs as A
from paddle_nb.core.framework_pb2 import OpDesc


def test_scalars_attributes_round_trip_as_paddle_types():
    attr = OpDesc.Attr(name="values")
    A.write(attr, A.SCALARS, [True, 3, -2.5, np.int64(7)])
    assert [s.type for s in attr.scalars] == [1, 2, 3, 2]      # BOOLEAN, LONG, FLOAT64
    assert A.read(attr) == [True, 3, -2.5, 7]
    with pytest.raises(TypeError):
        A.write(attr, A.SCALARS, ["a"])


def test_set_value_constants_survive_saving_and_loading(exe):
    x = pd.data("x", [2, 3], "int64")
    y = pd.op.set_value(Input=x, axes=[1], starts=[0], ends=[3], steps=[2], values=[4, -1],
                        shape=[2, 1], dtype=3)
    program = pd.Program.from_bytes(pd.default_main_program().to_bytes())
    assert program.global_block().ops[-1].attr("values") == [4, -1]
    got = exe.run(program, feed={"x": np.zeros((2, 3), np.int64)}, fetch_list=[y.name])[0]
    np.testing.assert_array_equal(got, [[4, 0, 4], [-1, 0, -1]])


def test_indices_out_of_range_name_op_slot_range_and_value(exe):
    x = pd.data("x", [3, 2], "float32")
    i = pd.data("i", [2], "int64")
    out = pd.op.index_put(x=x, indices=[i], value=pd.op.fill_any_like(X=x))
    with pytest.raises(pd.IndexRangeError) as e:
        exe.run(feed={"x": np.zeros((3, 2), np.float32), "i": np.int64([0, -4])},
                fetch_list=[out])
    msg = str(e.value)
    assert "index_put" in msg and "indices" in msg and "-4" in msg and "-3 <= " in msg


def test_put_along_axis_refuses_a_reduction_it_does_not_build():
    x = pd.data("x", [2, 3], "float32")
    i = pd.data("i", [2, 1], "int64")
    v = pd.data("v", [2, 1], "float32")
    with pytest.raises(pd.BuildError, match="Reduce='mul'"):
        pd.op.put_along_axis(Input=x, Index=i, Value=v, Axis=1, Reduce="mul")
