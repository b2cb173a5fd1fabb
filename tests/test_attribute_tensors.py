"""Inputs that stand for an attribute (issue "Robustness", Programs: run-time attribute
tensors). Fluid reads fill_constant's shape from ShapeTensorList, concat's axis from
AxisTensor... when they are given; an op that does not read one here must refuse it, never
run on the attribute's value instead (core/attr_tensors.py: ATTRIBUTE_TENSORS,
reads_attr_tensors, check_attr_tensors).

Each case is built twice, with the tensor given to the builder (the shape rule refuses it
as the op is appended) and edited into a saved program that is loaded (validation refuses
it before anything runs), and checked as "honoured or refused, never wrong": either the
run raises the clear error (op, block path, slot, attribute, "does not yet read"), or the
result is what Paddle computes. So the cases keep passing when an op learns to read its
tensor.
"""
import numpy as np
import pytest

import paddle_nb as pd
import test_ops_table as ops_table
from paddle_nb.core import attr_tensors, registry
from paddle_nb.core.errors import PaddleNBError
from paddle_nb.core.validate import ValidationError, validate

REFUSED = "refused"      # a case Paddle itself refuses (a float shape): never honoured


def _const(values, dtype):
    return pd.var(np.asarray(values, dtype), dtype=dtype)


def _ints(*values, dtype="int32"):
    """One 1-element int tensor per value (a ...TensorList)."""
    return [_const([v], dtype) for v in values]


X23 = np.arange(6, dtype=np.float32).reshape(2, 3) + 1


class Case:
    """``tensors()`` makes the attribute tensors ({slot: [Variables]}), ``op(**slots)``
    appends the op (the attribute set to something else) and returns what to fetch;
    ``expected``: Paddle's result with the tensors (a list per fetched variable, a check
    function, or REFUSED); ``paths``: how the tensor gets into the program."""

    def __init__(self, name, op_type, slot, attr, tensors, op, expected,
                 paths=("build", "load")):
        self.name, self.op_type, self.slot, self.attr = name, op_type, slot, attr
        self.tensors, self.op, self.expected, self.paths = tensors, op, expected, paths

    def __repr__(self):
        return self.name


def _shape_is(shape, low=None, high=None):
    def check(got):
        assert got[0].shape == shape
        if low is not None:
            assert np.all(got[0] >= low) and np.all(got[0] < high)
    return check


def _adam_step(beta1=0.9, beta2=0.999, eps=1e-8, decay=0.0, lr=0.1):
    """One Adam(W) step on w (three ones) for loss mean(w * c), as Paddle computes it: the
    bias corrections use the accumulated powers (beta1^1 = 0.9, beta2^1 = 0.999 after the
    startup), whichever betas the step itself uses."""
    b1p, b2p = 0.9, 0.999
    c = np.float32([1, -2, 3])
    g = c / 3
    w0 = 1 - lr * decay
    m1, m2 = (1 - beta1) * g, (1 - beta2) * g * g
    lr_t = lr * np.sqrt(1 - b2p) / (1 - b1p)
    return w0 - lr_t * m1 / (np.sqrt(m2) + eps * np.sqrt(1 - b2p))


def _adam_case(op_type, slot, value):
    """One step with ``slot`` = ``value`` instead of the optimizer's attribute: Paddle's
    update with that value. (Loaded only: the optimizers have no argument for it, as
    Paddle's have none either.)"""
    attr = {"Beta1Tensor": "beta1", "Beta2Tensor": "beta2", "EpsilonTensor": "epsilon"}[slot]
    decay = 0.01 if op_type == "adamw" else 0.0
    keyword = {"beta1": "beta1", "beta2": "beta2", "epsilon": "eps"}[attr]
    want = _adam_step(**{keyword: value}, decay=decay)

    def op():
        w = pd.create_parameter([3], "float32", name="w", initializer=pd.Constant(1.0))
        loss = pd.mean(w * pd.var(np.float32([1, -2, 3])))
        (pd.optimizer.AdamW(0.1, weight_decay=decay) if op_type == "adamw"
         else pd.optimizer.Adam(0.1)).minimize(loss)
        return [w]
    return Case(f"{op_type}_{slot}", op_type, slot, attr,
                lambda: {slot: [_const([value], "float32")]}, op, [want], paths=("load",))


X1123 = X23.reshape(1, 1, 2, 3)
X1123_UP = np.repeat(np.repeat(X1123, 2, axis=2), 2, axis=3)     # nearest, 2x, no corners


def _interp(op_type, **slots):
    return getattr(pd.op, op_type)(X=pd.var(X1123), out_h=3, out_w=5, align_corners=False,
                                   **slots)


def _dropout_kept_or_scaled(got):
    out = got[0]
    kept = out != 0
    np.testing.assert_allclose(out[kept], (X23 / 0.5)[kept], rtol=1e-6)


CASES = [
    Case("fill_constant_ShapeTensorList", "fill_constant", "ShapeTensorList", "shape",
         lambda: {"ShapeTensorList": _ints(4, 3)},
         lambda **s: pd.op.fill_constant(shape=[2, 3], value=1.0, dtype=5, **s),
         [np.ones((4, 3), np.float32)]),
    Case("fill_constant_ShapeTensor", "fill_constant", "ShapeTensor", "shape",
         lambda: {"ShapeTensor": [_const([4, 3], "int64")]},
         lambda **s: pd.op.fill_constant(shape=[2, 3], value=1.0, dtype=5, **s),
         [np.ones((4, 3), np.float32)]),
    Case("fill_constant_ValueTensor", "fill_constant", "ValueTensor", "value",
         lambda: {"ValueTensor": [_const([7.0], "float32")]},
         lambda **s: pd.op.fill_constant(shape=[2, 3], value=1.0, dtype=5, **s),
         [np.full((2, 3), 7, np.float32)]),
    # Fluid wants int32/int64 shapes: a float one is refused, honoured or not
    Case("fill_constant_float_ShapeTensorList", "fill_constant", "ShapeTensorList", "shape",
         lambda: {"ShapeTensorList": [_const([4.0], "float32"), _const([3.0], "float32")]},
         lambda **s: pd.op.fill_constant(shape=[2, 3], value=1.0, dtype=5, **s), REFUSED),
    Case("uniform_random_ShapeTensor", "uniform_random", "ShapeTensor", "shape",
         lambda: {"ShapeTensor": [_const([4, 3], "int64")]},
         lambda **s: pd.op.uniform_random(shape=[2, 3], min=-1.0, max=1.0, seed=3, **s),
         _shape_is((4, 3), -1.0, 1.0)),
    Case("gaussian_random_ShapeTensorList", "gaussian_random", "ShapeTensorList", "shape",
         lambda: {"ShapeTensorList": _ints(4, 3)},
         lambda **s: pd.op.gaussian_random(shape=[2, 3], seed=3, **s), _shape_is((4, 3))),
    Case("concat_AxisTensor", "concat", "AxisTensor", "axis",
         lambda: {"AxisTensor": _ints(1)},
         lambda **s: pd.op.concat(X=[pd.var(X23[:, :2].copy()), pd.var(X23[:, 1:].copy())],
                                  axis=0, **s),
         [np.concatenate([X23[:, :2], X23[:, 1:]], axis=1)]),
    Case("split_SectionsTensorList", "split", "SectionsTensorList", "sections",
         lambda: {"SectionsTensorList": _ints(1, 3)},
         lambda **s: list(pd.op.split(X=pd.var(np.arange(8, dtype=np.float32).reshape(4, 2)),
                                      sections=[2, 2], axis=0, **s)),
         [np.arange(8, dtype=np.float32).reshape(4, 2)[:1],
          np.arange(8, dtype=np.float32).reshape(4, 2)[1:]]),
    Case("split_AxisTensor", "split", "AxisTensor", "axis",
         lambda: {"AxisTensor": _ints(1)},
         lambda **s: list(pd.op.split(X=pd.var(np.arange(8, dtype=np.float32).reshape(2, 4)),
                                      num=2, axis=0, **s)),
         [np.arange(8, dtype=np.float32).reshape(2, 4)[:, :2],
          np.arange(8, dtype=np.float32).reshape(2, 4)[:, 2:]]),
    Case("reshape2_ShapeTensor", "reshape2", "ShapeTensor", "shape",
         lambda: {"ShapeTensor": _ints(3, 2)},
         lambda **s: pd.op.reshape2(X=pd.var(X23), shape=[6], **s), [X23.reshape(3, 2)]),
    Case("expand_v2_Shape", "expand_v2", "Shape", "shape",
         lambda: {"Shape": [_const([3, 3], "int32")]},
         lambda **s: pd.op.expand_v2(X=pd.var(X23[:1].copy()), shape=[2, 3], **s),
         [np.broadcast_to(X23[:1], (3, 3))]),
    Case("expand_v2_expand_shapes_tensor", "expand_v2", "expand_shapes_tensor", "shape",
         lambda: {"expand_shapes_tensor": _ints(3, 3)},
         lambda **s: pd.op.expand_v2(X=pd.var(X23[:1].copy()), shape=[2, 3], **s),
         [np.broadcast_to(X23[:1], (3, 3))]),
    Case("tile_RepeatTimes", "tile", "RepeatTimes", "repeat_times",
         lambda: {"RepeatTimes": [_const([3, 1], "int32")]},
         lambda **s: pd.op.tile(X=pd.var(X23), repeat_times=[2, 1], **s),
         [np.tile(X23, (3, 1))]),
    Case("tile_repeat_times_tensor", "tile", "repeat_times_tensor", "repeat_times",
         lambda: {"repeat_times_tensor": _ints(1, 2)},
         lambda **s: pd.op.tile(X=pd.var(X23), repeat_times=[2, 1], **s),
         [np.tile(X23, (1, 2))]),
    Case("one_hot_v2_depth_tensor", "one_hot_v2", "depth_tensor", "depth",
         lambda: {"depth_tensor": _ints(4)},
         lambda **s: pd.op.one_hot_v2(X=_const([0, 2], "int64"), depth=3, **s),
         [np.eye(4, dtype=np.float32)[[0, 2]]]),
    Case("unsqueeze2_AxesTensor", "unsqueeze2", "AxesTensor", "axes",
         lambda: {"AxesTensor": [_const([0], "int32")]},
         lambda **s: pd.op.unsqueeze2(X=pd.var(X23), axes=[1], **s), [X23[None]]),
    Case("unsqueeze2_AxesTensorList", "unsqueeze2", "AxesTensorList", "axes",
         lambda: {"AxesTensorList": _ints(0)},
         lambda **s: pd.op.unsqueeze2(X=pd.var(X23), axes=[1], **s), [X23[None]]),
    Case("gather_Axis", "gather", "Axis", "axis",
         lambda: {"Axis": _ints(1)},
         lambda **s: pd.op.gather(X=pd.var(np.arange(9, dtype=np.float32).reshape(3, 3)),
                                  Index=_const([0, 2], "int64"), axis=0, **s),
         [np.arange(9, dtype=np.float32).reshape(3, 3)[:, [0, 2]]]),
    Case("pad3d_Paddings", "pad3d", "Paddings", "paddings",
         lambda: {"Paddings": [_const([1, 1, 0, 0, 0, 0], "int32")]},
         lambda **s: pd.op.pad3d(X=pd.var(np.float32([[[[[1, 2]]]]])), paddings=[0] * 6, **s),
         [np.float32([[[[[0, 1, 2, 0]]]]])]),
    *[_adam_case(op_type, slot, value) for op_type in ("adam", "adamw")
      for slot, value in (("Beta1Tensor", 0.5), ("Beta2Tensor", 0.9), ("EpsilonTensor", 0.1))],
    Case("uniform_random_ShapeTensorList", "uniform_random", "ShapeTensorList", "shape",
         lambda: {"ShapeTensorList": _ints(4, 3, dtype="int64")},
         lambda **s: pd.op.uniform_random(shape=[2, 3], min=2.0, max=3.0, seed=3, **s),
         _shape_is((4, 3), 2.0, 3.0)),
    Case("gaussian_random_ShapeTensor", "gaussian_random", "ShapeTensor", "shape",
         lambda: {"ShapeTensor": [_const([4, 3], "int32")]},
         lambda **s: pd.op.gaussian_random(shape=[2, 3], seed=3, **s), _shape_is((4, 3))),
    Case("dropout_Seed", "dropout", "Seed", "seed",
         lambda: {"Seed": [_const([7], "int32")]},
         lambda **s: pd.op.dropout(X=pd.var(X23), dropout_prob=0.5, is_test=False,
                                   dropout_implementation="upscale_in_train", seed=1,
                                   fix_seed=True, **s), _dropout_kept_or_scaled),
    Case("slice_StartsTensor_EndsTensor", "slice", "StartsTensor", "starts",
         lambda: {"StartsTensor": [_const([1], "int64")], "EndsTensor": [_const([3], "int64")]},
         lambda **s: pd.op.slice(Input=pd.var(X23), axes=[1], starts=[0], ends=[1], **s),
         [X23[:, 1:3]]),
    Case("strided_slice_lists", "strided_slice", "StartsTensorList", "starts",
         lambda: {"StartsTensorList": _ints(0), "EndsTensorList": _ints(3),
                  "StridesTensorList": _ints(2)},
         lambda **s: pd.op.strided_slice(Input=pd.var(X23), axes=[1], starts=[1], ends=[2],
                                         strides=[1], **s), [X23[:, 0:3:2]]),
    Case("strided_slice_StridesTensor", "strided_slice", "StridesTensor", "strides",
         lambda: {"StridesTensor": [_const([2], "int32")]},
         lambda **s: pd.op.strided_slice(Input=pd.var(X23), axes=[1], starts=[0], ends=[3],
                                         strides=[1], **s), [X23[:, 0:3:2]]),
    Case("bilinear_interp_v2_OutSize", "bilinear_interp_v2", "OutSize", "out_h and out_w",
         lambda: {"OutSize": [_const([2, 3], "int32")]},
         lambda **s: _interp("bilinear_interp_v2", **s), [X1123]),
    Case("nearest_interp_v2_SizeTensor", "nearest_interp_v2", "SizeTensor", "out_h and out_w",
         lambda: {"SizeTensor": _ints(4, 6)},
         lambda **s: _interp("nearest_interp_v2", **s), [X1123_UP]),
    Case("nearest_interp_v2_Scale", "nearest_interp_v2", "Scale", "scale",
         lambda: {"Scale": [_const([2.0, 2.0], "float32")]},
         lambda **s: _interp("nearest_interp_v2", **s), [X1123_UP]),
    # read here: the tensor's value, and the wrong element type refused
    Case("reshape2_Shape", "reshape2", "Shape", "shape",
         lambda: {"Shape": [_const([3, 2], "int32")]},
         lambda **s: pd.op.reshape2(X=pd.var(X23), shape=[6], **s), [X23.reshape(3, 2)]),
    Case("reshape2_float_Shape", "reshape2", "Shape", "shape",
         lambda: {"Shape": [_const([3.7, 2.0], "float32")]},
         lambda **s: pd.op.reshape2(X=pd.var(X23), shape=[3, 2], **s), REFUSED),
    Case("slice_float_StartsTensorList", "slice", "StartsTensorList", "starts",
         lambda: {"StartsTensorList": [_const([1.0], "float32")]},
         lambda **s: pd.op.slice(Input=pd.var(X23), axes=[1], starts=[0], ends=[3], **s),
         REFUSED),
    Case("scale_ScaleTensor", "scale", "ScaleTensor", "scale",
         lambda: {"ScaleTensor": [_const([-3.0], "float32")]},
         lambda **s: pd.op.scale(X=pd.var(X23), scale=2.0, **s), [-3 * X23]),
    # Paddle's ScaleTensor holds one element: two are refused, not cut to the first
    Case("scale_two_element_ScaleTensor", "scale", "ScaleTensor", "scale",
         lambda: {"ScaleTensor": [_const([-3.0, 5.0], "float32")]},
         lambda **s: pd.op.scale(X=pd.var(X23), scale=2.0, **s), REFUSED),
]


def _build(case, give_slot: bool):
    main, startup = pd.Program(), pd.Program()
    with pd.program_guard(main, startup):
        slots = case.tensors()
        out = case.op(**(slots if give_slot else {}))
    return main, startup, slots, out if isinstance(out, list) else [out]


def _with_inputs(program, op_type, slots) -> pd.Program:
    """``program`` saved with ``slots`` added to its op ``op_type``, and loaded again: a
    program as Paddle saves it."""
    d = program.desc
    op = next(o for o in d.blocks[0].ops if o.type == op_type)
    for slot, variables in slots.items():
        v = op.inputs.add(parameter=slot)
        v.arguments.extend(var.name for var in variables)
    return pd.Program.from_bytes(d.SerializeToString())


def _run(case, path, place=None):
    exe, scope = pd.Executor(place or pd.CPUPlace()), pd.Scope()
    if path == "build":
        main, startup, _, out = _build(case, True)
    else:
        main, startup, slots, out = _build(case, False)
        main = _with_inputs(main, case.op_type, slots)
    exe.run(startup, scope=scope)
    got = exe.run(main, fetch_list=[v.name for v in out], scope=scope)
    return [g.copy_to_host() if hasattr(g, "copy_to_host") else g for g in got]


def honoured_or_refused(case, path, place=None):
    """Run the case; "refused" with the clear error, or "honoured" with Paddle's result."""
    try:
        got = _run(case, path, place)
    except (PaddleNBError, ValidationError) as e:
        msg = str(e)
        assert case.op_type in msg and "block 0 > op " in msg, msg
        assert f"slot {case.slot}" in msg, msg
        if "does not yet read" in msg:
            assert f"stands for attribute {case.attr}" in msg, msg
            assert "op created at:" in msg and "test_attribute_tensors.py" in msg, msg
        else:          # read here, and the tensor is not what Fluid accepts
            assert case.expected is REFUSED, msg
            assert "int elements" in msg or "exactly one element" in msg, msg
        return "refused"
    assert case.expected is not REFUSED, f"{case} ran: {got}"
    if callable(case.expected):
        case.expected(got)
    else:
        assert len(got) == len(case.expected)
        for g, want in zip(got, case.expected):
            np.testing.assert_allclose(g, want, rtol=1e-6)
    return "honoured"


@pytest.mark.parametrize("case,path", [(c, p) for c in CASES for p in c.paths],
                         ids=[f"{c.name}-{p}" for c in CASES for p in c.paths])
def test_an_attribute_tensor_is_honoured_or_refused_never_ignored(case, path):
    honoured_or_refused(case, path)


def test_every_op_in_the_table_honours_its_attribute_tensors():
    """Every case above that Paddle runs is honoured here, by each path; only the inputs
    Paddle refuses too (a float shape, a two-element scale) are refused."""
    for case in CASES:
        for path in case.paths:
            pd.reset()
            want = "refused" if case.expected is REFUSED else "honoured"
            assert honoured_or_refused(case, path) == want, (case, path)
    honoured = [c for c in CASES if c.expected is not REFUSED]
    covered = {(c.op_type, slot) for c in honoured for slot in c.tensors()}
    table = {(op, t.slot) for op, ts in attr_tensors.ATTRIBUTE_TENSORS.items() for t in ts}
    fed_by_the_op_table = {(c.op, slot) for c in ops_table.CASES for slot in c.inputs}
    assert table - covered - fed_by_the_op_table == set()


@pytest.mark.parametrize("case", [c for c in CASES if c.expected is not REFUSED],
                         ids=lambda c: c.name)
def test_the_tensors_are_read_on_cuda_too(case):
    """The device keeps the tensor; its value comes to the host (one small copy)."""
    assert honoured_or_refused(case, case.paths[-1], pd.CUDAPlace(0)) == "honoured"


@pytest.fixture
def unread(monkeypatch):
    """``unread("fill_constant")``: the op forgets that it reads its attribute tensors, for
    the length of a test. Every op in the table reads them now; this is how the refusal of
    one that does not (a future op, declared before its kernels read them) is checked."""
    def forget(*op_types):
        for t in op_types:
            monkeypatch.setattr(registry.lookup(t), "reads_attr_tensors", ())
    return forget


def test_a_refused_tensor_is_refused_as_the_op_is_appended(unread):
    unread("fill_constant")
    a, b = _ints(4, 3)
    with pytest.raises(pd.ShapeError) as e:
        pd.op.fill_constant(ShapeTensorList=[a, b], shape=[2, 3], value=1.0)  # THIS LINE
    msg = str(e.value)
    assert msg.startswith("block 0 > op 2 fill_constant: slot ShapeTensorList: stands for "
                          "attribute shape, which Fluid reads from this tensor at run time; "
                          "paddle_nb does not yet read fill_constant's shape from a tensor")
    assert "expected: no ShapeTensorList input, the value given in attribute shape" in msg
    assert f"given:    ShapeTensorList ['{a.name}', '{b.name}']" in msg
    assert "THIS LINE" in msg
    assert [op.type for op in pd.default_main_program().global_block().ops] == \
        ["assign_value", "assign_value"]              # the refused op was taken out again


def test_validation_lists_every_unread_attribute_tensor_and_a_run_refuses_first(unread):
    unread("fill_constant", "concat")
    main, startup, slots, (out,) = _build(CASES[0], False)
    main = _with_inputs(main, "fill_constant", slots)
    with pd.program_guard(main, startup):              # and a concat's AxisTensor
        axis = _ints(1)[0]
        joined = pd.op.concat(X=[pd.var(X23), pd.var(X23)], axis=0)
    d = main.desc
    op = d.blocks[0].ops[-1]
    op.inputs.add(parameter="AxisTensor").arguments.append(axis.name)
    main = pd.Program.from_bytes(d.SerializeToString())
    problems = validate(main, raise_on_error=False)
    assert [(p.kind, p.message.split(" stands")[0]) for p in problems] == [
        ("attr-tensor", "input slot ShapeTensorList"), ("attr-tensor", "input slot AxisTensor")]
    assert problems[0].where.endswith("fill_constant") and "attribute shape" in \
        problems[0].message and "given ShapeTensorList" in problems[0].message
    assert "paddle_nb does not yet read concat's axis from a tensor" in problems[1].message
    scope = pd.Scope()
    with pytest.raises(ValidationError, match=r"(?s)2 problems.*AxisTensor.*nothing ran"):
        pd.Executor().run(main, fetch_list=[out.name, joined.name], scope=scope)
    with pytest.raises(ValidationError, match="does not yet read"):
        next(pd.Executor().steps(main, fetch_list=[out.name], scope=scope))


def test_a_gradient_op_carrying_an_unread_attribute_tensor_is_refused(unread):
    """Paddle's pad3d_grad carries the forward op's Paddings, which it reads as its
    forward op does (as slice_grad reads its bounds tensors: the recurrent fixtures have
    them); one that did not read them would be refused."""
    assert registry.lookup("pad3d_grad").reads_attr_tensors == ("Paddings",)
    assert registry.lookup("slice_grad").reads_attr_tensors == \
        registry.lookup("slice").reads_attr_tensors
    unread("pad3d_grad")
    main = pd.Program()
    with pd.program_guard(main):
        x = pd.data("x", [1, 1, 1, 1, 2])
        x.stop_gradient = False
        y = pd.op.pad3d(X=x, paddings=[1, 1, 0, 0, 0, 0])
        pd.append_backward(pd.mean(y))
        p = _const([1, 1, 0, 0, 0, 0], "int32")
    d = main.desc
    grad = next(o for o in d.blocks[0].ops if o.type == "pad3d_grad")
    grad.inputs.add(parameter="Paddings").arguments.append(p.name)
    problems = validate(pd.Program.from_bytes(d.SerializeToString()), raise_on_error=False)
    assert len(problems) == 1 and problems[0].where.endswith("pad3d_grad")
    assert "input slot Paddings stands for attribute paddings" in problems[0].message
    assert "does not yet read pad3d_grad's paddings" in problems[0].message


def test_an_edited_program_is_checked_again_before_it_runs(exe, unread):
    """A slot added to a built program in memory (no shape rule runs): the run's check."""
    unread("fill_constant")
    a = _ints(5)[0]
    out = pd.op.fill_constant(shape=[2], value=1.0)
    got, = exe.run(fetch_list=[out])
    assert got.shape == (2,)
    op = pd.default_main_program().global_block().ops[-1]
    op.desc.inputs.add(parameter="ShapeTensorList").arguments.append(a.name)
    op.block.table.touch()
    with pytest.raises(ValidationError, match=r"op 1 fill_constant: input slot "
                                              r"ShapeTensorList stands for attribute shape"):
        exe.run(fetch_list=[out])


def test_reshape2_reads_its_shape_tensor_as_paddle_saves_it(exe):
    """``paddle.reshape(x, t)`` with a tensor ``t`` saves no shape attribute: Out's dims are
    known when the kernel reads the tensor (declared -1, as Fluid's compile-time rule)."""
    x = pd.data("x", [None, 3])
    out = pd.op.reshape2(X=x, Shape=_const([3, 2], "int32"))
    assert out.shape == (-1, -1)
    got, = exe.run(feed={"x": X23}, fetch_list=[out])
    np.testing.assert_array_equal(got, X23.reshape(3, 2))
    with pytest.raises(pd.ExecutionError, match=r"block 0 > op \d+ reshape2"):
        exe.run(feed={"x": X23[:1]}, fetch_list=[out])       # 3 elements into [3, 2]


def test_the_debugger_shows_the_value_a_tensor_gave_the_op_that_ran():
    """The program shows the build-time placeholder (shape [2, -1, 16]); the status line
    after the step shows what the kernel read."""
    from paddle_nb.notebook.widgets import DebuggerView   # noqa: PLC0415 (front end)
    main = pd.Program()
    with pd.program_guard(main):
        x = pd.data("x", [None, 5])
        batch = pd.op.slice(Input=pd.op.shape(Input=x), axes=[0], starts=[0], ends=[1])
        state = pd.op.fill_constant(ShapeTensorList=[_const([2], "int64"), batch,
                                                     _const([16], "int64")],
                                    shape=[2, -1, 16], value=0.0)
    assert state.shape == (2, -1, 16)
    view = DebuggerView.from_program(main, feed={"x": np.ones((3, 5), np.float32)},
                                     fetch_list=[state])
    ops = main.global_block().ops
    fill = next(i for i, op in enumerate(ops) if op.type == "fill_constant")
    for _ in range(fill + 1):
        view.handle_message({"cmd": "step"})
    assert view.status.endswith("\n  shape = [2, 3, 16] (from ShapeTensorList)"), view.status
