"""pd.passes: fc_fuse rewrites mul + elementwise_add (+ relu) into Paddle's fc op, on a
copy, only where nothing else reads the intermediates; the fused program gives the same
bits."""
import numpy as np
import pytest

import paddle_nb as pd
from paddle_nb.examples import digits


def _types(program, block=0):
    return [op.type for op in program.block(block).ops]


@pytest.fixture(scope="module")
def trained():
    model = digits.build()
    exe, scope = pd.Executor(), pd.Scope()
    exe.run(model.startup, scope=scope)
    x, y, _, _ = digits.load_data()
    for i in range(3):
        exe.run(model.main, feed={"x": x[i * 32:(i + 1) * 32], "label": y[i * 32:(i + 1) * 32]},
                scope=scope)
    return model, exe, scope, x[:100]


def test_an_inference_program_is_fused_into_fc_ops(trained):
    model, exe, scope, x = trained
    before = model.test.to_bytes()
    fused = pd.passes.apply(model.test)
    assert _types(model.test) == ["mul", "elementwise_add", "relu", "mul", "elementwise_add",
                                  "softmax"]
    assert _types(fused) == ["fc", "fc", "softmax"]
    assert model.test.to_bytes() == before                  # the original is untouched
    first, second = fused.global_block().ops[:2]
    assert first.attr("activation_type") == "relu" and second.attr("activation_type") == ""
    assert first.input("W") == ["fc_0.w_0"] and first.input("Bias") == ["fc_0.b_0"]
    # the fused op still points at the user's line, and the intermediates are gone
    assert "pd.layer.fc(x, hidden" in first.created_at
    assert not fused.global_block().has_var("fc_0.tmp_0")
    want, = exe.run(model.test, feed={"x": x}, fetch_list=[model.prob], scope=scope)
    got, = exe.run(fused, feed={"x": x}, fetch_list=[model.prob.name], scope=scope)
    assert np.array_equal(got, want)
    # and stepped, one fc at a time
    dbg = pd.Debugger(fused, feed={"x": x}, scope=scope)
    assert dbg.step().op.type == "fc"


def test_the_fused_program_saves_and_loads(trained):
    model, exe, scope, x = trained
    fused = pd.passes.apply(model.test)
    loaded = pd.Program.from_bytes(fused.to_bytes())
    assert _types(loaded) == ["fc", "fc", "softmax"]
    want, = exe.run(fused, feed={"x": x}, fetch_list=[model.prob.name], scope=scope)
    got, = exe.run(loaded, feed={"x": x}, fetch_list=[model.prob.name], scope=scope)
    assert np.array_equal(got, want)


def test_a_training_program_is_left_as_it_is(trained):
    """Gradient ops read mul's product: fusing it away would break them."""
    model = trained[0]
    assert _types(pd.passes.apply(model.main)) == _types(model.main)


def test_kept_intermediates_are_not_fused_away(trained):
    """Keeping the sum before relu leaves relu out of the fc (and keeps the sum);
    keeping mul's product leaves that layer unfused."""
    model = trained[0]
    product = model.test.global_block().ops[0].output("Out")[0]
    pre = model.test.global_block().ops[1].output("Out")[0]          # the sum before relu
    fused = pd.passes.apply(model.test, keep=[pre])
    assert _types(fused) == ["fc", "relu", "fc", "softmax"]
    first = fused.global_block().ops[0]
    assert first.output("Out") == [pre] and first.attr("activation_type") == ""
    fused = pd.passes.apply(model.test, keep=[product])
    assert _types(fused) == ["mul", "elementwise_add", "relu", "fc", "softmax"]


def test_only_weights_and_biases_that_are_parameters_fuse():
    main = pd.Program()
    with pd.program_guard(main, pd.Program()):
        x = pd.data("x", [-1, 3])
        w = pd.data("w", [3, 4])              # weights fed, not a parameter
        y = pd.relu(pd.layers.elementwise_add(pd.matmul(x, w), pd.data("b", [4])))
    assert pd.passes.apply(main).global_block().ops[0].type != "fc"
    assert y is not None


def test_bad_arguments_say_what_is_wrong():
    with pytest.raises(ValueError, match="unknown pass.*fc_fuse"):
        pd.passes.apply(pd.Program(), passes=["fc_fusion"])
    with pytest.raises(TypeError, match="needs a Program"):
        pd.passes.apply("main")
