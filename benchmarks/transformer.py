"""One SGD training step of a 2-layer transformer encoder (d_model 64, 4 heads, feed-forward
256, relu, post-norm, dropout 0) on a float32 batch [16, 32, 64], the loss the mean of
the output squared:

    x -> transformer_encoder_layer -> transformer_encoder_layer -> mean(out * out) -> SGD

paddle_nb runs the program ``pd.layer.transformer_encoder_layer`` builds (Paddle's ops:
matmul_v2, reshape2, transpose2, scale, softmax, layer_norm) through ``Executor.run``;
torch is eager autograd on two ``nn.TransformerEncoderLayer(batch_first=True)`` holding
the same parameters (its fused in_proj is our q, k and v weights, transposed). No numpy
contender: attention's backward by hand is what is under test."""
from __future__ import annotations

import numpy as np

import paddle_nb as pd

from .common import rng, row, torch_sgd, training_step_times

B, T, E, HEADS, FF, LAYERS, LR = 16, 32, 64, 4, 256, 2, 0.01
TARGET_TORCH = 1.5      # paddle_nb / torch (the target)


def build(b=B, t=T, e=E, heads=HEADS, ff=FF, lr=LR, seed=1):
    main, startup = pd.Program(), pd.Program()
    startup.random_seed = seed
    with pd.program_guard(main, startup), pd.unique_name.guard():
        h = pd.data("x", [b, t, e])
        for _ in range(LAYERS):
            h = pd.layer.transformer_encoder_layer(h, heads, ff, dropout=0.0)
        loss = pd.mean(h * h)
        pd.optimizer.SGD(lr).minimize(loss)
    return main, startup, loss


def params(main) -> list[str]:
    return [p.name for p in main.global_block().all_parameters()]


def batch(b=B, t=T, e=E):
    return {"x": rng().standard_normal((b, t, e)).astype(np.float32)}


def torch_layers(t, values: dict, names: list[str], heads=HEADS, ff=FF):
    """Two torch encoder layers holding our parameters ``values`` (name -> array, names in
    the order the builder made them: per layer q, k, v, out projections, norm1, the two
    feed-forward layers, norm2)."""
    layers = []
    per_layer = len(names) // LAYERS
    for i in range(LAYERS):
        n = names[i * per_layer:(i + 1) * per_layer]
        v = [values[k] for k in n]
        (wq, bq, wk, bk, wv, bv, wo, bo, g1, b1, w1, c1, w2, c2, g2, b2) = v
        e = wq.shape[0]
        layer = t.nn.TransformerEncoderLayer(e, heads, ff, dropout=0.0, batch_first=True)
        with t.no_grad():
            attn = layer.self_attn
            attn.in_proj_weight.copy_(t.from_numpy(np.concatenate([wq.T, wk.T, wv.T])))
            attn.in_proj_bias.copy_(t.from_numpy(np.concatenate([bq, bk, bv])))
            attn.out_proj.weight.copy_(t.from_numpy(wo.T.copy()))
            attn.out_proj.bias.copy_(t.from_numpy(bo))
            layer.norm1.weight.copy_(t.from_numpy(g1))
            layer.norm1.bias.copy_(t.from_numpy(b1))
            layer.linear1.weight.copy_(t.from_numpy(w1.T.copy()))
            layer.linear1.bias.copy_(t.from_numpy(c1))
            layer.linear2.weight.copy_(t.from_numpy(w2.T.copy()))
            layer.linear2.bias.copy_(t.from_numpy(c2))
            layer.norm2.weight.copy_(t.from_numpy(g2))
            layer.norm2.bias.copy_(t.from_numpy(b2))
        layers.append(layer)
    return layers


def torch_step(t, layers, x, lr=LR):
    h = x
    for layer in layers:
        h = layer(h)
    loss = (h * h).mean()
    return torch_sgd(t, {f"{i}.{k}": p for i, layer in enumerate(layers)
                         for k, p in layer.named_parameters()}, loss, lr)


def run(quick: bool = False) -> list[dict]:
    main, startup, loss = build()
    feed = batch()
    names = params(main)
    holder = {}

    def inputs(t):
        holder["layers"] = None
        return (t.from_numpy(feed["x"]),)

    def step(t, tp, x):
        if holder.get("layers") is None:      # our start parameters, once
            holder["layers"] = torch_layers(t, {k: v.detach().numpy() for k, v in tp.items()},
                                            names)
        return torch_step(t, holder["layers"], x)

    ours, _, torch_s = training_step_times(main, startup, loss, feed, names, None, step,
                                           inputs, quick)
    return [row(f"transformer encoder x{LAYERS} d{E} h{HEADS} T{T} B{B}: SGD training step",
                ours, None, torch_s, vs_torch=TARGET_TORCH,
                note="pd.layer.transformer_encoder_layer vs nn.TransformerEncoderLayer")]
