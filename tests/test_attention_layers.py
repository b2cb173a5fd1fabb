"""pd.layer.linear, multi_head_attention and transformer_encoder_layer
(paddle_nb/layers/attention.py) build the program Paddle 2.6.2 builds: the fixture
tests/fixtures/paddle/make_transformer_fixture.py saved two TransformerEncoderLayers
(post-norm gelu, pre-norm relu) with an attention mask; the same layers built here have
the same forward ops with the same attributes and the same parameters, and with Paddle's
initial values give Paddle's outputs."""
import os

import numpy as np
import pytest

import paddle_nb as pd

FIXTURES = os.path.join(os.path.dirname(__file__), "fixtures", "paddle")
SKIPPED_ATTRS = {"use_mkldnn", "mkldnn_data_type", "use_quantizer", "Scale_out", "Scale_x",
                 "Scale_y", "use_cudnn", "data_format", "is_test", "with_quant_attr"}


def _ours():
    main, startup = pd.Program(), pd.Program()
    with pd.program_guard(main, startup), pd.unique_name.guard():
        x = pd.data("x", [2, 5, 8])
        mask = pd.data("mask", [2, 1, 5, 5])
        h = pd.layer.transformer_encoder_layer(x, 2, 16, dropout=0.0, activation="gelu",
                                               src_mask=mask)
        out = pd.layer.transformer_encoder_layer(h, 2, 16, dropout=0.0, activation="relu",
                                                 normalize_before=True, src_mask=mask)
    return main, startup, h, out


def _paddle():
    program = pd.Program.from_bytes(open(os.path.join(FIXTURES, "transformer_ops.pdesc"),
                                         "rb").read())
    forward = []
    for op in program.global_block().ops:
        if op.type == "elementwise_mul":       # the fixture's sum(out * W) starts here
            break
        forward.append(op)
    return program, forward


def _attrs(op):
    return {k: v for k, v in op.attrs.items()
            if not k.startswith("op_") and k not in SKIPPED_ATTRS}


def test_the_encoder_layers_append_paddles_forward_ops_and_parameters():
    main, _, _, _ = _ours()
    paddle_program, paddle_ops = _paddle()
    ours = main.global_block().ops
    assert [op.type for op in ours] == [op.type for op in paddle_ops]
    for a, b in zip(ours, paddle_ops):
        want = _attrs(b)
        got = {k: v for k, v in _attrs(a).items() if k in want}
        assert got.keys() == want.keys(), a.type
        for key, value in want.items():
            assert got[key] == pytest.approx(value, rel=1e-6), (a.type, key)
    ours = {_paddles_name(p.name, main): list(p.shape)
            for p in main.global_block().all_parameters()}
    want = {p.name: list(p.shape) for p in paddle_program.global_block().all_parameters()}
    assert ours == want


def _paddles_name(name: str, main) -> str:
    """Our parameter's name in Paddle's program. They differ only for the second layer's
    norms: Paddle made both layers' sublayers before running either, so its norms are
    layer_norm_0 to _3; a builder that runs as it goes leaves the numbers its norm ops'
    outputs took (layer_norm_2 and _3) and names them _4 and _5. Numbered in order, the
    same."""
    if not name.startswith("layer_norm_"):
        return name
    layers = sorted({int(p.name.split("_")[2].split(".")[0])
                     for p in main.global_block().all_parameters()
                     if p.name.startswith("layer_norm_")})
    number, rest = name[len("layer_norm_"):].split(".", 1)
    return f"layer_norm_{layers.index(int(number))}.{rest}"


def test_with_paddles_initial_values_the_layers_give_paddles_outputs(exe):
    main, _, h, out = _ours()
    saved = np.load(os.path.join(FIXTURES, "transformer_io.npz"))
    scope = pd.Scope()
    for p in main.global_block().all_parameters():
        scope.var(p.name).set(saved[_paddles_name(p.name, main)])
    got_h, got_out = exe.run(main, feed={"x": saved["x"], "mask": saved["mask"]},
                             fetch_list=[h, out], scope=scope)
    np.testing.assert_allclose(got_h, saved["layer_norm_5.tmp_2"], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got_out, saved["tmp_7"], rtol=1e-5, atol=1e-6)


def test_dropout_appears_only_when_asked_and_heads_must_divide_the_width():
    main, startup = pd.Program(), pd.Program()
    with pd.program_guard(main, startup):
        x = pd.data("x", [2, 5, 8])
        pd.layer.multi_head_attention(x, num_heads=2, dropout=0.1)
        types = [op.type for op in main.global_block().ops]
        assert types.count("dropout") == 1 and types.index("dropout") > types.index("softmax")
        with pytest.raises(pd.BuildError, match="num_heads.*divisor of embed_dim"):
            pd.layer.multi_head_attention(x, num_heads=3)
