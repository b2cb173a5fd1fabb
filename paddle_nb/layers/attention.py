"""Attention as a block of ops: the builders of ``pd.layer`` that append what Paddle 2.6.2's
``nn.Linear``, ``nn.MultiHeadAttention`` and ``nn.TransformerEncoderLayer`` append in a
static program, op for op (``matmul_v2`` and ``elementwise_add`` for a linear layer, no
fused attention op), so a learner can step through attention and a program built here
reads like one Paddle saved (tests/test_attention_layers.py compares the two). The layer
norms of ``transformer_encoder_layer`` are ``norm.layer_norm``.

Multi-head attention on [batch, T, E] with H heads of d = E / H:

    q, k, v = linear(query), linear(key), linear(value)      each [B, T, E]
    each -> reshape2 [B, T, H, d] -> transpose2 [B, H, T, d]
    weights = softmax(scale(q, d ** -0.5) @ k^T + attn_mask)  [B, H, T, T]
    out = linear(reshape2(transpose2(dropout(weights) @ v), [B, T, E]))

``attn_mask`` is added to the scores (0 where a position may look, a large negative
number where it may not), broadcast as numpy does. A dropout of 0 appends no op, as in
Paddle.
"""
from __future__ import annotations

from ..builders import arg_checks as check
from ..builders.initializer import Constant, XavierUniform
from ..builders.op_creators import op
from ..core import unique_name
from .base import first_output, parameter, reshape, transpose
from .norm import layer_norm
from .param_attr import ParamAttr


def linear(x, out_features: int, weight_attr=None, bias_attr=None, name=None):
    """``x @ W + b`` over x's last dim, as ``paddle.nn.Linear``: W [in, out] Xavier-uniform,
    b zeros (``bias_attr=False``: none); a ``matmul_v2`` and an ``elementwise_add``."""
    b = "linear"
    check.variable(b, "x", x, dtype="float")
    in_features = x.shape[-1] if x.shape else None
    if in_features is None or in_features < 1:
        raise check.refuse(b, "x", "a known last dim (the features)", x)
    out_features = check.integer(b, "out_features", out_features, low=1)
    layer = check.text(b, "name", name, optional=True) or unique_name.generate("linear")
    w = parameter(ParamAttr.of(weight_attr, b, "weight_attr"), [in_features, out_features],
                  x.dtype, f"{layer}.w_0", initializer=XavierUniform())
    y = first_output(op.matmul_v2(X=x, Y=w, trans_x=False, trans_y=False))
    if bias_attr is False:
        return y
    bias = parameter(ParamAttr.of(bias_attr, b, "bias_attr"), [out_features], x.dtype,
                     f"{layer}.b_0", initializer=Constant(0.0))
    return first_output(op.elementwise_add(X=y, Y=bias, axis=-1))


def _dropout(x, p: float):
    if p == 0:
        return x
    return first_output(op.dropout(X=x, dropout_prob=p, is_test=False,
                                   dropout_implementation="upscale_in_train"))


def _heads(x, num_heads: int, head_dim: int):
    return transpose(reshape(x, [0, 0, num_heads, head_dim]), [0, 2, 1, 3])


def multi_head_attention(query, key=None, value=None, num_heads: int = 1, attn_mask=None,
                         dropout: float = 0.0, name=None):
    """Attention of ``query`` [B, T, E] over ``key`` and ``value`` (default: the query:
    self-attention) with ``num_heads`` heads, as ``paddle.nn.MultiHeadAttention(E,
    num_heads, dropout)(query, key, value, attn_mask)`` builds it (module docstring)."""
    b = "multi_head_attention"
    check.variable(b, "query", query, dtype="float")
    key = query if key is None else check.variable(b, "key", key, dtype="float")
    value = query if value is None else check.variable(b, "value", value, dtype="float")
    if len(query.shape) != 3:
        raise check.refuse(b, "query", "a 3-d tensor [batch, length, embed_dim]", query)
    embed_dim = query.shape[-1]
    num_heads = check.integer(b, "num_heads", num_heads, low=1)
    if embed_dim is None or embed_dim % num_heads:
        raise check.refuse(b, "num_heads", f"a divisor of embed_dim ({embed_dim})", num_heads)
    dropout = check.number(b, "dropout", dropout, low=0, high=1)
    if attn_mask is not None:
        check.variable(b, "attn_mask", attn_mask, dtype="float")
    check.text(b, "name", name, optional=True)
    head_dim = embed_dim // num_heads
    q = _heads(linear(query, embed_dim), num_heads, head_dim)
    k, v = linear(key, embed_dim), linear(value, embed_dim)
    k, v = _heads(k, num_heads, head_dim), _heads(v, num_heads, head_dim)
    scaled = first_output(op.scale(X=q, scale=head_dim ** -0.5))
    scores = first_output(op.matmul_v2(X=scaled, Y=k, trans_x=False, trans_y=True))
    if attn_mask is not None:
        scores = first_output(op.elementwise_add(X=scores, Y=attn_mask, axis=-1))
    weights = _dropout(first_output(op.softmax(X=scores, axis=-1)), dropout)
    out = first_output(op.matmul_v2(X=weights, Y=v, trans_x=False, trans_y=False))
    return linear(reshape(transpose(out, [0, 2, 1, 3]), [0, 0, embed_dim]), embed_dim)


def transformer_encoder_layer(src, nhead: int, dim_feedforward: int, dropout: float = 0.1,
                              activation: str = "relu", attn_dropout=None, act_dropout=None,
                              normalize_before: bool = False, src_mask=None):
    """One encoder layer as ``paddle.nn.TransformerEncoderLayer(E, nhead, dim_feedforward,
    dropout, activation, attn_dropout, act_dropout, normalize_before)(src, src_mask)``:
    self-attention and a two-layer feed-forward block, each added to its input (the
    residual) and layer-normalised after it (post-norm) or its input before it
    (``normalize_before``: pre-norm)."""
    b = "transformer_encoder_layer"
    check.variable(b, "src", src, dtype="float")
    activation = check.one_of(b, "activation", activation, ("relu", "gelu"))
    dropout = check.number(b, "dropout", dropout, low=0, high=1)
    attn_dropout = dropout if attn_dropout is None else attn_dropout
    act_dropout = dropout if act_dropout is None else act_dropout
    dim_feedforward = check.integer(b, "dim_feedforward", dim_feedforward, low=1)
    pre = check.boolean(b, "normalize_before", normalize_before)
    axis = len(src.shape) - 1
    # The two norms' names are taken first, as Paddle's layer makes its sublayers (and so
    # names its parameters) before it runs: a norm op's outputs take a name too.
    names = iter([unique_name.generate("layer_norm"), unique_name.generate("layer_norm")])

    def norm(x):
        return layer_norm(x, begin_norm_axis=axis, name=next(names))

    residual, x = src, src
    if pre:
        x = norm(x)
    x = multi_head_attention(x, num_heads=nhead, attn_mask=src_mask, dropout=attn_dropout)
    x = first_output(op.elementwise_add(X=residual, Y=_dropout(x, dropout), axis=-1))
    if not pre:
        x = norm(x)
    residual = x
    if pre:
        x = norm(x)
    hidden = first_output(getattr(op, activation)(X=linear(x, dim_feedforward)))
    x = linear(_dropout(hidden, act_dropout), src.shape[-1])
    x = first_output(op.elementwise_add(X=residual, Y=_dropout(x, dropout), axis=-1))
    return x if pre else norm(x)
