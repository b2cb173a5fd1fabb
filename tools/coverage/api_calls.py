"""How each public Paddle 2.6.2 API is called for the coverage table: the hand-written
calls (what the generic caller in make_paddle_api_table.py cannot guess from a signature),
the out-of-scope skips with their reasons, and the APIs that build no program at all.

DOCUMENTATION ONLY: imported by make_paddle_api_table.py in the scratch virtualenv that
has paddlepaddle, never by the project or pytest.

A call is ``fn(t)``: ``t`` (an ``Inputs`` of the maker) declares fed inputs the way a user
writes ``paddle.static.data`` (``t.f`` float, ``t.i`` integers, ``t.b`` bools, ``t.v`` a
given array, ``t.img`` an NCHW image batch, ``t.seq`` an NCL batch, ``t.vol`` NCDHW), and
the call returns what the API returns. Keys are ``<module>.<name>`` with the modules
shortened: ``nn``, ``F`` (paddle.nn.functional), ``tensor.<submodule>``, ``metric``,
``static.nn``.
"""
import numpy as np
import paddle
import paddle.nn as nn
import paddle.nn.functional as F

# Why an API is out of scope: only these reasons are allowed.
DISTRIBUTED = "distributed communication"
QUANT = "quantization"
SPARSE = "sparse tensors"
VISION = "detection/vision ops"
GPU_ONLY = "GPU- or cuDNN-only"
SKIP_REASONS = (DISTRIBUTED, QUANT, SPARSE, VISION, GPU_ONLY)

SKIPS = {
    "nn.SyncBatchNorm": (DISTRIBUTED, "batch statistics all-reduced across devices"),
    "F.margin_cross_entropy": (DISTRIBUTED, "model-parallel softmax, GPU collective"),
    "F.class_center_sample": (DISTRIBUTED, "model-parallel class sampling, GPU collective"),
    "F.sparse_attention": (SPARSE, "CSR-offset attention, CUDA-only kernel"),
    "static.nn.sparse_embedding": (DISTRIBUTED, "parameter-server lookup table"),
    "static.nn.deform_conv2d": (VISION, "deformable convolution (detection)"),
    "F.affine_grid": (VISION, "spatial transformer sampling grid"),
    "F.grid_sample": (VISION, "spatial transformer bilinear sampling"),
    "F.temporal_shift": (VISION, "video temporal shift module"),
    "F.scaled_dot_product_attention": (GPU_ONLY, "flash attention kernel, GPU only in 2.6"),
}

# Names that build no program: abstract bases, containers, and host-side (numpy) metrics
# and helpers. Reported apart; they are neither covered nor missing.
HOST = {
    "nn.Layer": "base class, no forward of its own",
    "nn.RNNCellBase": "base class, no forward of its own",
    "nn.LayerList": "container of layers, not callable",
    "nn.LayerDict": "container of layers, not callable",
    "nn.ParameterList": "container of parameters, not callable",
    "metric.Metric": "abstract base class",
    "metric.Precision": "accumulates in numpy (update takes arrays)",
    "metric.Recall": "accumulates in numpy (update takes arrays)",
    "metric.Auc": "accumulates in numpy (update takes arrays)",
    "tensor.math.broadcast_shape": "computes a Python list from shapes",
    "tensor.manipulation.tolist": "dygraph-only conversion to a Python list",
    "tensor.logic.is_tensor": "Python type check",
}
for _name in ("manipulation.as_strided", "manipulation.view", "manipulation.view_as",
              "manipulation.unfold", "random.normal_"):
    HOST[f"tensor.{_name}"] = "dygraph-only in Paddle 2.6.2 (it refuses static mode)"

# No call written yet, with why (counted as not covered).
NO_CALL = {
    "static.nn.py_func": "the program names a Python callable of Paddle's process",
    "static.nn.static_pylayer": "the pylayer op runs Python forward/backward functions",
}
for _name in ("sequence_conv", "sequence_softmax", "sequence_pool", "sequence_concat",
              "sequence_first_step", "sequence_last_step", "sequence_slice",
              "sequence_expand", "sequence_expand_as", "sequence_pad", "sequence_unpad",
              "sequence_reshape", "sequence_scatter", "sequence_enumerate",
              "sequence_reverse"):
    NO_CALL[f"static.nn.{_name}"] = "needs a LoD (lod_level=1) feed; not written yet"

# Random outputs: only shapes and dtypes can be compared, and no gradient is taken.
SHAPE_ONLY = {
    "F.dropout", "F.dropout2d", "F.dropout3d", "F.alpha_dropout", "F.rrelu",
    "F.gumbel_softmax", "nn.Dropout", "nn.Dropout2D", "nn.Dropout3D", "nn.AlphaDropout",
    "nn.RReLU", "static.nn.nce", "tensor.linalg.pca_lowrank",
    "tensor.random.bernoulli", "tensor.random.poisson", "tensor.random.multinomial",
    "tensor.random.standard_normal", "tensor.random.randn", "tensor.random.normal",
    "tensor.random.normal_", "tensor.random.uniform", "tensor.random.randint",
    "tensor.random.randint_like", "tensor.random.randperm", "tensor.random.rand",
}

# Calls whose outputs are not differentiated (an optimizer step inside, a decoding loop).
NO_GRAD = {"nn.ClipGradByNorm", "nn.ClipGradByValue", "nn.ClipGradByGlobalNorm",
           "nn.dynamic_decode", "nn.BeamSearchDecoder", "static.nn.while_loop"}


def _spd(n=3, seed=5):
    m = np.random.default_rng(seed).uniform(-1, 1, (n, n))
    return (m @ m.T + n * np.eye(n)).astype("float32")


def _sym(n=3, seed=6):
    m = np.random.default_rng(seed).uniform(-1, 1, (n, n))
    return ((m + m.T) / 2 + np.diag([1.0, 2.0, 3.0][:n])).astype("float32")


def _pm1(t, shape, name="label"):
    """Labels of +1 / -1 (hinge and soft-margin losses)."""
    return t.v(np.where(np.arange(np.prod(shape)).reshape(shape) % 2 == 0, 1.0, -1.0)
               .astype("float32"), name)


def _clip_step(clip):
    """A linear layer trained one SGD step with ``clip`` as its gradient clip."""
    def call(t):
        layer = nn.Linear(3, 2)
        loss = paddle.mean(layer(t.f()))
        paddle.optimizer.SGD(0.1, parameters=layer.parameters(), grad_clip=clip()).minimize(
            loss)
        return [loss, layer.weight, layer.bias]
    return call


def _beam_search(t):
    cell = nn.GRUCell(4, 4)
    decoder = nn.BeamSearchDecoder(cell, start_token=0, end_token=1, beam_size=2,
                                   embedding_fn=nn.Embedding(5, 4), output_fn=nn.Linear(4, 5))
    encoder_output = t.f((2, 4), "enc", grad=False)
    outputs, _ = nn.dynamic_decode(decoder, inits=cell.get_initial_states(encoder_output),
                                   max_step_num=3)
    return outputs


def _max_unpool(pool, unpool, x):
    out, mask = pool(x, 2, return_mask=True)
    return unpool(out, mask, 2)


def _unpool_layer(pool, layer, x):
    out, mask = pool(x, 2, return_mask=True)
    return layer(2)(out, mask)


CALLS = {
    # ---- paddle.nn layers
    "nn.BatchNorm": lambda t: nn.BatchNorm(3)(t.img()),
    "nn.GroupNorm": lambda t: nn.GroupNorm(3, 3)(t.img()),
    "nn.LayerNorm": lambda t: nn.LayerNorm(3)(t.f()),
    "nn.SpectralNorm": lambda t: nn.SpectralNorm([2, 3])(t.f()),
    "nn.BatchNorm1D": lambda t: nn.BatchNorm1D(3)(t.seq()),
    "nn.BatchNorm2D": lambda t: nn.BatchNorm2D(3)(t.img()),
    "nn.BatchNorm3D": lambda t: nn.BatchNorm3D(3)(t.vol()),
    "nn.InstanceNorm1D": lambda t: nn.InstanceNorm1D(3)(t.seq()),
    "nn.InstanceNorm2D": lambda t: nn.InstanceNorm2D(3)(t.img()),
    "nn.InstanceNorm3D": lambda t: nn.InstanceNorm3D(3)(t.vol()),
    "nn.LocalResponseNorm": lambda t: nn.LocalResponseNorm(3)(t.img()),
    "nn.Embedding": lambda t: nn.Embedding(10, 4)(t.i((2, 3), 10)),
    "nn.Linear": lambda t: nn.Linear(3, 4)(t.f()),
    "nn.Upsample": lambda t: nn.Upsample(scale_factor=2)(t.img()),
    "nn.UpsamplingNearest2D": lambda t: nn.UpsamplingNearest2D(scale_factor=2)(t.img()),
    "nn.UpsamplingBilinear2D": lambda t: nn.UpsamplingBilinear2D(scale_factor=2)(t.img()),
    "nn.Pad1D": lambda t: nn.Pad1D(1)(t.seq()),
    "nn.Pad2D": lambda t: nn.Pad2D(1)(t.img()),
    "nn.Pad3D": lambda t: nn.Pad3D(1)(t.vol()),
    "nn.Bilinear": lambda t: nn.Bilinear(3, 4, 5)(t.f((2, 3), "x1"), t.f((2, 4), "x2")),
    "nn.Unfold": lambda t: nn.Unfold([2, 2])(t.img()),
    "nn.Fold": lambda t: nn.Fold([4, 4], 2)(t.f((2, 12, 9))),
    "nn.SimpleRNNCell": lambda t: nn.SimpleRNNCell(3, 4)(t.f()),
    "nn.LSTMCell": lambda t: nn.LSTMCell(3, 4)(t.f()),
    "nn.GRUCell": lambda t: nn.GRUCell(3, 4)(t.f()),
    "nn.RNN": lambda t: nn.RNN(nn.SimpleRNNCell(3, 4))(t.f((2, 5, 3))),
    "nn.BiRNN": lambda t: nn.BiRNN(nn.GRUCell(3, 4), nn.GRUCell(3, 4))(t.f((2, 5, 3))),
    "nn.SimpleRNN": lambda t: nn.SimpleRNN(3, 4)(t.f((2, 5, 3))),
    "nn.LSTM": lambda t: nn.LSTM(3, 4)(t.f((2, 5, 3))),
    "nn.GRU": lambda t: nn.GRU(3, 4)(t.f((2, 5, 3))),
    "nn.dynamic_decode": _beam_search,
    "nn.BeamSearchDecoder": _beam_search,
    "nn.MultiHeadAttention": lambda t: nn.MultiHeadAttention(4, 2)(t.f((2, 3, 4))),
    "nn.Maxout": lambda t: nn.Maxout(2)(t.f((2, 4, 3, 3))),
    "nn.Transformer": lambda t: nn.Transformer(
        4, 2, 1, 1, 8, dropout=0.0)(t.f((2, 3, 4), "src"), t.f((2, 2, 4), "tgt")),
    "nn.ClipGradByNorm": _clip_step(lambda: nn.ClipGradByNorm(0.1)),
    "nn.ClipGradByValue": _clip_step(lambda: nn.ClipGradByValue(0.1)),
    "nn.ClipGradByGlobalNorm": _clip_step(lambda: nn.ClipGradByGlobalNorm(0.1)),
    "nn.BCEWithLogitsLoss": lambda t: nn.BCEWithLogitsLoss()(t.f(), t.f(name="label",
                                                                        grad=False)),
    "nn.MaxPool3D": lambda t: nn.MaxPool3D(2)(t.vol()),
    "nn.AdaptiveMaxPool2D": lambda t: nn.AdaptiveMaxPool2D(2)(t.img()),
    "nn.AvgPool2D": lambda t: nn.AvgPool2D(2)(t.img()),
    "nn.AvgPool1D": lambda t: nn.AvgPool1D(2)(t.seq()),
    "nn.AdaptiveAvgPool3D": lambda t: nn.AdaptiveAvgPool3D(2)(t.vol()),
    "nn.AdaptiveMaxPool3D": lambda t: nn.AdaptiveMaxPool3D(2)(t.vol()),
    "nn.NLLLoss": lambda t: nn.NLLLoss()(t.f(), t.i((2,), 3)),
    "nn.Conv1D": lambda t: nn.Conv1D(3, 2, 3)(t.seq()),
    "nn.Sequential": lambda t: nn.Sequential(nn.Linear(3, 4), nn.ReLU())(t.f()),
    "nn.Conv1DTranspose": lambda t: nn.Conv1DTranspose(3, 2, 3)(t.seq()),
    "nn.AdaptiveMaxPool1D": lambda t: nn.AdaptiveMaxPool1D(2)(t.seq()),
    "nn.TransformerEncoder": lambda t: nn.TransformerEncoder(
        nn.TransformerEncoderLayer(4, 2, 8, dropout=0.0), 2)(t.f((2, 3, 4))),
    "nn.Softmax2D": lambda t: nn.Softmax2D()(t.img()),
    "nn.Conv2D": lambda t: nn.Conv2D(3, 2, 3)(t.img()),
    "nn.TransformerDecoderLayer": lambda t: nn.TransformerDecoderLayer(4, 2, 8, dropout=0.0)(
        t.f((2, 2, 4), "tgt"), t.f((2, 3, 4), "memory")),
    "nn.CrossEntropyLoss": lambda t: nn.CrossEntropyLoss()(t.f(), t.i((2, 1), 3)),
    "nn.GLU": lambda t: nn.GLU()(t.f((2, 4))),
    "nn.Conv2DTranspose": lambda t: nn.Conv2DTranspose(3, 2, 3)(t.img()),
    "nn.CTCLoss": lambda t: nn.CTCLoss()(*_ctc_inputs(t)),
    "nn.RNNTLoss": lambda t: nn.RNNTLoss()(*_rnnt_inputs(t)),
    "nn.AdaptiveAvgPool2D": lambda t: nn.AdaptiveAvgPool2D(2)(t.img()),
    "nn.MaxPool1D": lambda t: nn.MaxPool1D(2)(t.seq()),
    "nn.TransformerDecoder": lambda t: nn.TransformerDecoder(
        nn.TransformerDecoderLayer(4, 2, 8, dropout=0.0), 2)(t.f((2, 2, 4), "tgt"),
                                                              t.f((2, 3, 4), "memory")),
    "nn.Conv3D": lambda t: nn.Conv3D(3, 2, 3)(t.vol()),
    "nn.Conv3DTranspose": lambda t: nn.Conv3DTranspose(3, 2, 3)(t.vol()),
    "nn.AdaptiveAvgPool1D": lambda t: nn.AdaptiveAvgPool1D(2)(t.seq()),
    "nn.HSigmoidLoss": lambda t: nn.HSigmoidLoss(3, 4)(t.f(), t.i((2, 1), 4)),
    "nn.TransformerEncoderLayer": lambda t: nn.TransformerEncoderLayer(4, 2, 8, dropout=0.0)(
        t.f((2, 3, 4))),
    "nn.AvgPool3D": lambda t: nn.AvgPool3D(2)(t.vol()),
    "nn.MaxPool2D": lambda t: nn.MaxPool2D(2)(t.img()),
    "nn.MarginRankingLoss": lambda t: nn.MarginRankingLoss()(
        t.f(name="input"), t.f(name="other"), _pm1(t, (2, 3))),
    "nn.PixelShuffle": lambda t: nn.PixelShuffle(2)(t.f((2, 4, 2, 2))),
    "nn.PixelUnshuffle": lambda t: nn.PixelUnshuffle(2)(t.f((2, 1, 4, 4))),
    "nn.ChannelShuffle": lambda t: nn.ChannelShuffle(2)(t.f((2, 4, 2, 2))),
    "nn.ZeroPad2D": lambda t: nn.ZeroPad2D(1)(t.img()),
    "nn.MaxUnPool1D": lambda t: _unpool_layer(F.max_pool1d, nn.MaxUnPool1D, t.seq()),
    "nn.MaxUnPool2D": lambda t: _unpool_layer(F.max_pool2d, nn.MaxUnPool2D, t.img()),
    "nn.MaxUnPool3D": lambda t: _unpool_layer(F.max_pool3d, nn.MaxUnPool3D, t.vol()),
    "nn.HingeEmbeddingLoss": lambda t: nn.HingeEmbeddingLoss()(t.f(), _pm1(t, (2, 3))),
    "nn.CosineEmbeddingLoss": lambda t: nn.CosineEmbeddingLoss()(
        t.f(name="input1"), t.f(name="input2"), t.v(np.array([1, -1], "int64"), "label")),
    "nn.MultiMarginLoss": lambda t: nn.MultiMarginLoss()(t.f(), t.i((2,), 3)),
    "nn.SoftMarginLoss": lambda t: nn.SoftMarginLoss()(t.f(), _pm1(t, (2, 3))),
    "nn.Unflatten": lambda t: nn.Unflatten(1, [3, 1])(t.f()),
    "nn.Dropout2D": lambda t: nn.Dropout2D()(t.img()),
    "nn.Dropout3D": lambda t: nn.Dropout3D()(t.vol()),
    "nn.Softmax": lambda t: nn.Softmax()(t.f()),
    # ---- paddle.nn.functional
    "F.dropout2d": lambda t: F.dropout2d(t.img()),
    "F.dropout3d": lambda t: F.dropout3d(t.vol()),
    "F.log_loss": lambda t: F.log_loss(t.f((2, 1)), t.f((2, 1), "label", grad=False)),
    "F.conv1d": lambda t: F.conv1d(t.seq(), t.f((2, 3, 3), "weight")),
    "F.conv1d_transpose": lambda t: F.conv1d_transpose(t.seq(), t.f((3, 2, 3), "weight")),
    "F.conv2d": lambda t: F.conv2d(t.img(), t.f((2, 3, 3, 3), "weight")),
    "F.conv2d_transpose": lambda t: F.conv2d_transpose(t.img(), t.f((3, 2, 3, 3), "weight")),
    "F.conv3d": lambda t: F.conv3d(t.vol(), t.f((2, 3, 3, 3, 3), "weight")),
    "F.conv3d_transpose": lambda t: F.conv3d_transpose(t.vol(),
                                                       t.f((3, 2, 3, 3, 3), "weight")),
    "F.maxout": lambda t: F.maxout(t.f((2, 4, 3, 3)), 2),
    "F.prelu": lambda t: F.prelu(t.f(), t.f((1,), "weight")),
    "F.glu": lambda t: F.glu(t.f((2, 4))),
    "F.sequence_mask": lambda t: F.sequence_mask(t.i((3,), 5), 5),
    "F.label_smooth": lambda t: F.label_smooth(t.f(name="label")),
    "F.linear": lambda t: F.linear(t.f(), t.f((3, 4), "weight"), t.f((4,), "bias")),
    "F.pad": lambda t: F.pad(t.img(), [1, 1, 1, 1]),
    "F.zeropad2d": lambda t: F.zeropad2d(t.img(), [1, 1, 1, 1]),
    "F.unfold": lambda t: F.unfold(t.img(), [2, 2]),
    "F.interpolate": lambda t: F.interpolate(t.img(), scale_factor=2),
    "F.upsample": lambda t: F.upsample(t.img(), scale_factor=2),
    "F.bilinear": lambda t: F.bilinear(t.f((2, 3), "x1"), t.f((2, 4), "x2"),
                                       t.f((5, 3, 4), "weight")),
    "F.avg_pool1d": lambda t: F.avg_pool1d(t.seq(), 2),
    "F.avg_pool2d": lambda t: F.avg_pool2d(t.img(), 2),
    "F.avg_pool3d": lambda t: F.avg_pool3d(t.vol(), 2),
    "F.max_pool1d": lambda t: F.max_pool1d(t.seq(), 2),
    "F.max_pool2d": lambda t: F.max_pool2d(t.img(), 2),
    "F.max_pool3d": lambda t: F.max_pool3d(t.vol(), 2),
    "F.max_unpool1d": lambda t: _max_unpool(F.max_pool1d, F.max_unpool1d, t.seq()),
    "F.max_unpool2d": lambda t: _max_unpool(F.max_pool2d, F.max_unpool2d, t.img()),
    "F.max_unpool3d": lambda t: _max_unpool(F.max_pool3d, F.max_unpool3d, t.vol()),
    "F.adaptive_avg_pool1d": lambda t: F.adaptive_avg_pool1d(t.seq(), 2),
    "F.adaptive_avg_pool2d": lambda t: F.adaptive_avg_pool2d(t.img(), 2),
    "F.adaptive_avg_pool3d": lambda t: F.adaptive_avg_pool3d(t.vol(), 2),
    "F.adaptive_max_pool1d": lambda t: F.adaptive_max_pool1d(t.seq(), 2),
    "F.adaptive_max_pool2d": lambda t: F.adaptive_max_pool2d(t.img(), 2),
    "F.adaptive_max_pool3d": lambda t: F.adaptive_max_pool3d(t.vol(), 2),
    "F.cross_entropy": lambda t: F.cross_entropy(t.f(), t.i((2, 1), 3)),
    "F.dice_loss": lambda t: F.dice_loss(t.f(), t.i((2, 1), 3)),
    "F.hsigmoid_loss": lambda t: F.hsigmoid_loss(t.f(), t.i((2, 1), 4), 4,
                                                 t.f((3, 3), "weight")),
    "F.margin_ranking_loss": lambda t: F.margin_ranking_loss(
        t.f(name="input"), t.f(name="other"), _pm1(t, (2, 3))),
    "F.nll_loss": lambda t: F.nll_loss(t.f(), t.i((2,), 3)),
    "F.npair_loss": lambda t: F.npair_loss(t.f(name="anchor"), t.f(name="positive"),
                                           t.v(np.array([0.0, 1.0], "float32"), "labels")),
    "F.softmax_with_cross_entropy": lambda t: F.softmax_with_cross_entropy(
        t.f(), t.i((2, 1), 3)),
    "F.ctc_loss": lambda t: F.ctc_loss(*_ctc_inputs(t)),
    "F.rnnt_loss": lambda t: F.rnnt_loss(*_rnnt_inputs(t)),
    "F.hinge_embedding_loss": lambda t: F.hinge_embedding_loss(t.f(), _pm1(t, (2, 3))),
    "F.local_response_norm": lambda t: F.local_response_norm(t.img(), 3),
    "F.pixel_shuffle": lambda t: F.pixel_shuffle(t.f((2, 4, 2, 2)), 2),
    "F.pixel_unshuffle": lambda t: F.pixel_unshuffle(t.f((2, 1, 4, 4)), 2),
    "F.channel_shuffle": lambda t: F.channel_shuffle(t.f((2, 4, 2, 2)), 2),
    "F.embedding": lambda t: F.embedding(t.i((2, 3), 10), t.f((10, 4), "weight")),
    "F.gather_tree": lambda t: F.gather_tree(t.i((3, 2, 2), 5, "ids"),
                                             t.i((3, 2, 2), 2, "parents")),
    "F.one_hot": lambda t: F.one_hot(t.i((2, 3), 4), 4),
    "F.batch_norm": lambda t: F.batch_norm(t.img(), t.f((3,), "mean", grad=False),
                                           t.f((3,), "var", low=0.5, high=1.5, grad=False),
                                           t.f((3,), "weight"), t.f((3,), "bias")),
    "F.layer_norm": lambda t: F.layer_norm(t.f(), [3]),
    "F.instance_norm": lambda t: F.instance_norm(t.img()),
    "F.fold": lambda t: F.fold(t.f((2, 12, 9)), [4, 4], 2),
    "F.cosine_embedding_loss": lambda t: F.cosine_embedding_loss(
        t.f(name="input1"), t.f(name="input2"), t.v(np.array([1, -1], "int64"), "label")),
    "F.multi_margin_loss": lambda t: F.multi_margin_loss(t.f(), t.i((2,), 3)),
    "F.soft_margin_loss": lambda t: F.soft_margin_loss(t.f(), _pm1(t, (2, 3))),
    "F.multi_label_soft_margin_loss": lambda t: F.multi_label_soft_margin_loss(
        t.f(), t.v(np.array([[1, 0, 1], [0, 1, 0]], "float32"), "label")),
    # ---- paddle.tensor.math
    "tensor.math.multiplex": lambda t: paddle.multiplex(
        [t.f(name="x"), t.f(name="y")], t.i((2, 1), 2, "index", dtype="int32")),
    "tensor.math.floor_divide": lambda t: paddle.floor_divide(t.i((2, 3), 9, "x", low=1),
                                                              t.i((2, 3), 4, "y", low=1)),
    "tensor.math.floor_divide_": lambda t: paddle.floor_divide_(t.i((2, 3), 9, "x", low=1),
                                                                t.i((2, 3), 4, "y", low=1)),
    "tensor.math.add_n": lambda t: paddle.add_n([t.f(name="x"), t.f(name="y")]),
    "tensor.math.mm": lambda t: paddle.mm(t.f(), t.f((3, 2), "mat2")),
    "tensor.math.addmm": lambda t: paddle.addmm(t.f((2, 2), "input"), t.f(), t.f((3, 2), "y")),
    "tensor.math.addmm_": lambda t: paddle.tensor.math.addmm_(
        t.f((2, 2), "input"), t.f(), t.f((3, 2), "y")),
    "tensor.math.renorm": lambda t: paddle.renorm(t.f(), 2.0, 0, 1.0),
    "tensor.math.renorm_": lambda t: paddle.tensor.math.renorm_(t.f(), 2.0, 0, 1.0),
    "tensor.math.increment": lambda t: paddle.increment(t.f((1,))),
    "tensor.math.all": lambda t: paddle.all(t.b((2, 3))),
    "tensor.math.any": lambda t: paddle.any(t.b((2, 3))),
    "tensor.math.multigammaln": lambda t: paddle.multigammaln(t.f(low=2.0, high=3.0), 2),
    "tensor.math.multigammaln_": lambda t: paddle.multigammaln_(t.f(low=2.0, high=3.0), 2),
    "tensor.math.gcd": lambda t: paddle.gcd(t.i((2, 3), 20, "x"), t.i((2, 3), 20, "y")),
    "tensor.math.gcd_": lambda t: paddle.gcd_(t.i((2, 3), 20, "x"), t.i((2, 3), 20, "y")),
    "tensor.math.lcm": lambda t: paddle.lcm(t.i((2, 3), 20, "x", low=1),
                                            t.i((2, 3), 20, "y", low=1)),
    "tensor.math.lcm_": lambda t: paddle.lcm_(t.i((2, 3), 20, "x", low=1),
                                              t.i((2, 3), 20, "y", low=1)),
    "tensor.math.take": lambda t: paddle.take(t.f(), t.i((2,), 6, "index")),
    "tensor.math.vander": lambda t: paddle.vander(t.f((3,))),
    "tensor.math.combinations": lambda t: paddle.combinations(t.f((4,))),
    "tensor.math.polygamma": lambda t: paddle.polygamma(t.f(), 1),
    "tensor.math.polygamma_": lambda t: paddle.polygamma_(t.f(), 1),
    "tensor.math.ldexp": lambda t: paddle.ldexp(t.f(), t.i((2, 3), 4, "y", dtype="int32")),
    "tensor.math.ldexp_": lambda t: paddle.ldexp_(t.f(), t.i((2, 3), 4, "y", dtype="int32")),
    "tensor.math.lerp": lambda t: paddle.lerp(t.f(name="x"), t.f(name="y"),
                                              t.f(name="weight")),
    "tensor.math.trace": lambda t: paddle.trace(t.f((3, 3))),
    "tensor.math.diagonal": lambda t: paddle.diagonal(t.f((3, 3))),
    "tensor.math.angle": lambda t: paddle.angle(t.f()),
    "tensor.math.cumprod": lambda t: paddle.cumprod(t.f(), 1),
    "tensor.math.cumprod_": lambda t: paddle.cumprod_(t.f(), 1),
    # ---- paddle.tensor.logic
    **{f"tensor.logic.bitwise_{op}": (lambda op: lambda t: getattr(paddle, f"bitwise_{op}")(
        t.i((2, 3), 16, "x"), t.i((2, 3), 16, "y")))(op)
       for op in ("and", "and_", "or", "or_", "xor", "xor_")},
    "tensor.logic.bitwise_not": lambda t: paddle.bitwise_not(t.i((2, 3), 16, "x")),
    "tensor.logic.bitwise_not_": lambda t: paddle.bitwise_not_(t.i((2, 3), 16, "x")),
    # ---- paddle.tensor.manipulation
    "tensor.manipulation.cast": lambda t: paddle.cast(t.f(), "float64"),
    "tensor.manipulation.cast_": lambda t: paddle.cast_(t.f(), "float64"),
    "tensor.manipulation.slice": lambda t: paddle.slice(t.f(), [1], [0], [2]),
    "tensor.manipulation.transpose": lambda t: paddle.transpose(t.f(), [1, 0]),
    "tensor.manipulation.shard_index": lambda t: paddle.shard_index(t.i((2, 1), 20), 20, 2, 0),
    "tensor.manipulation.crop": lambda t: paddle.crop(t.f(), [1, 2]),
    "tensor.manipulation.concat": lambda t: paddle.concat([t.f(name="x"), t.f(name="y")]),
    "tensor.manipulation.broadcast_tensors": lambda t: paddle.broadcast_tensors(
        [t.f(name="x"), t.f((1, 3), "y")]),
    "tensor.manipulation.flip": lambda t: paddle.flip(t.f(), [0]),
    "tensor.manipulation.roll": lambda t: paddle.roll(t.f(), 1),
    "tensor.manipulation.stack": lambda t: paddle.stack([t.f(name="x"), t.f(name="y")]),
    "tensor.manipulation.split": lambda t: paddle.split(t.f(), 3, axis=1),
    "tensor.manipulation.vsplit": lambda t: paddle.vsplit(t.f(), 2),
    "tensor.manipulation.squeeze": lambda t: paddle.squeeze(t.f((2, 1, 3))),
    "tensor.manipulation.squeeze_": lambda t: paddle.squeeze_(t.f((2, 1, 3))),
    "tensor.manipulation.unsqueeze": lambda t: paddle.unsqueeze(t.f(), 0),
    "tensor.manipulation.unsqueeze_": lambda t: paddle.unsqueeze_(t.f(), 0),
    "tensor.manipulation.gather": lambda t: paddle.gather(t.f(), t.v(np.array([1, 0]),
                                                                     "index")),
    "tensor.manipulation.scatter": lambda t: paddle.scatter(
        t.f((3, 2)), t.v(np.array([2, 0]), "index"), t.f((2, 2), "updates")),
    "tensor.manipulation.scatter_": lambda t: paddle.scatter_(
        t.f((3, 2)), t.v(np.array([2, 0]), "index"), t.f((2, 2), "updates")),
    "tensor.manipulation.scatter_nd_add": lambda t: paddle.scatter_nd_add(
        t.f((3, 2)), t.v(np.array([[2], [0]]), "index"), t.f((2, 2), "updates")),
    "tensor.manipulation.scatter_nd": lambda t: paddle.scatter_nd(
        t.v(np.array([[2], [0]]), "index"), t.f((2, 2), "updates"), [3, 2]),
    "tensor.manipulation.chunk": lambda t: paddle.chunk(t.f(), 3, axis=1),
    "tensor.manipulation.tile": lambda t: paddle.tile(t.f(), [2, 1]),
    "tensor.manipulation.expand_as": lambda t: paddle.expand_as(t.f((1, 3)), t.f(name="y")),
    "tensor.manipulation.broadcast_to": lambda t: paddle.broadcast_to(t.f((1, 3)), [2, 3]),
    "tensor.manipulation.expand": lambda t: paddle.expand(t.f((1, 3)), [2, 3]),
    "tensor.manipulation.reshape": lambda t: paddle.reshape(t.f(), [3, 2]),
    "tensor.manipulation.reshape_": lambda t: paddle.reshape_(t.f(), [3, 2]),
    "tensor.manipulation.atleast_1d": lambda t: paddle.atleast_1d(t.f()),
    "tensor.manipulation.atleast_2d": lambda t: paddle.atleast_2d(t.f((3,))),
    "tensor.manipulation.atleast_3d": lambda t: paddle.atleast_3d(t.f()),
    "tensor.manipulation.gather_nd": lambda t: paddle.gather_nd(
        t.f(), t.v(np.array([[0, 1], [1, 2]]), "index")),
    "tensor.manipulation.strided_slice": lambda t: paddle.strided_slice(
        t.f(), [1], [0], [3], [2]),
    "tensor.manipulation.tensordot": lambda t: paddle.tensordot(t.f(), t.f((3, 2), "y"), 1),
    "tensor.manipulation.as_complex": lambda t: paddle.as_complex(t.f((2, 3, 2))),
    "tensor.manipulation.as_real": lambda t: paddle.as_real(paddle.as_complex(t.f((2, 3, 2)))),
    "tensor.manipulation.repeat_interleave": lambda t: paddle.repeat_interleave(t.f(), 2),
    "tensor.manipulation.moveaxis": lambda t: paddle.moveaxis(t.f(), 0, 1),
    "tensor.manipulation.masked_fill": lambda t: paddle.masked_fill(t.f(), t.b((2, 3)), 0.5),
    "tensor.manipulation.masked_fill_": lambda t: paddle.masked_fill_(t.f(), t.b((2, 3)), 0.5),
    "tensor.manipulation.take_along_axis": lambda t: paddle.take_along_axis(
        t.f(name="arr"), t.i((2, 1), 3, "indices"), 1),
    "tensor.manipulation.put_along_axis": lambda t: paddle.put_along_axis(
        t.f(name="arr"), t.i((2, 1), 3, "indices"), t.f((2, 1), "values"), 1),
    "tensor.manipulation.index_add": lambda t: paddle.index_add(
        t.f(), t.v(np.array([1, 0]), "index"), 0, t.f((2, 3), "value")),
    "tensor.manipulation.index_add_": lambda t: paddle.index_add_(
        t.f(), t.v(np.array([1, 0]), "index"), 0, t.f((2, 3), "value")),
    "tensor.manipulation.index_put": lambda t: paddle.index_put(
        t.f(), (t.v(np.array([1, 0]), "i0"), t.v(np.array([2, 1]), "i1")), t.f((2,), "value")),
    "tensor.manipulation.index_put_": lambda t: paddle.index_put_(
        t.f(), (t.v(np.array([1, 0]), "i0"), t.v(np.array([2, 1]), "i1")), t.f((2,), "value")),
    "tensor.manipulation.unflatten": lambda t: paddle.unflatten(t.f(), 1, [3, 1]),
    "tensor.manipulation.as_strided": lambda t: paddle.as_strided(t.f(), [3, 2], [1, 3]),
    "tensor.manipulation.view": lambda t: paddle.view(t.f(), [3, 2]),
    "tensor.manipulation.view_as": lambda t: paddle.view_as(t.f(), t.f((3, 2), "other")),
    "tensor.manipulation.unfold": lambda t: paddle.unfold(t.f(), 1, 2, 1),
    "tensor.manipulation.index_fill": lambda t: paddle.index_fill(
        t.f(), t.v(np.array([0]), "index"), 0, 0.5),
    "tensor.manipulation.index_fill_": lambda t: paddle.index_fill_(
        t.f(), t.v(np.array([0]), "index"), 0, 0.5),
    "tensor.manipulation.diagonal_scatter": lambda t: paddle.diagonal_scatter(
        t.f((3, 3)), t.f((3,), "y")),
    "tensor.manipulation.select_scatter": lambda t: paddle.select_scatter(
        t.f(), t.f((3,), "values"), 0, 0),
    # ---- paddle.tensor.search
    "tensor.search.index_select": lambda t: paddle.index_select(
        t.f(), t.v(np.array([1, 0]), "index")),
    "tensor.search.where": lambda t: paddle.where(t.b((2, 3)), t.f(name="x"), t.f(name="y")),
    "tensor.search.where_": lambda t: paddle.where_(t.b((2, 3)), t.f(name="x"), t.f(name="y")),
    "tensor.search.index_sample": lambda t: paddle.index_sample(t.f(), t.i((2, 2), 3, "index")),
    "tensor.search.masked_select": lambda t: paddle.masked_select(t.f(), t.b((2, 3))),
    "tensor.search.topk": lambda t: paddle.topk(t.f(), 2),
    "tensor.search.bucketize": lambda t: paddle.bucketize(
        t.f(), t.v(np.array([0.2, 0.5, 0.8], "float32"), "sorted_sequence")),
    "tensor.search.searchsorted": lambda t: paddle.searchsorted(
        t.v(np.array([0.2, 0.5, 0.8], "float32"), "sorted_sequence"), t.f(name="values")),
    "tensor.search.kthvalue": lambda t: paddle.kthvalue(t.f(), 2),
    # ---- paddle.tensor.linalg
    "tensor.linalg.transpose": lambda t: paddle.transpose(t.f(), [1, 0]),
    "tensor.linalg.transpose_": lambda t: paddle.transpose_(t.f(), [1, 0]),
    "tensor.linalg.matmul": lambda t: paddle.matmul(t.f(), t.f((3, 2), "y")),
    "tensor.linalg.cond": lambda t: paddle.linalg.cond(t.v(_spd(), "x")),
    "tensor.linalg.cholesky": lambda t: paddle.linalg.cholesky(t.v(_spd(), "x")),
    "tensor.linalg.matrix_rank": lambda t: paddle.linalg.matrix_rank(t.v(_spd(), "x")),
    "tensor.linalg.bmm": lambda t: paddle.bmm(t.f((2, 2, 3)), t.f((2, 3, 2), "y")),
    "tensor.linalg.histogram": lambda t: paddle.histogram(t.f(name="input"), bins=4),
    "tensor.linalg.bincount": lambda t: paddle.bincount(t.i((5,), 4)),
    "tensor.linalg.mv": lambda t: paddle.mv(t.f(), t.f((3,), "vec")),
    "tensor.linalg.det": lambda t: paddle.linalg.det(t.v(_spd(), "x")),
    "tensor.linalg.slogdet": lambda t: paddle.linalg.slogdet(t.v(_spd(), "x")),
    "tensor.linalg.svd": lambda t: paddle.linalg.svd(t.v(_spd(), "x")),
    "tensor.linalg.pca_lowrank": lambda t: paddle.linalg.pca_lowrank(t.f((4, 3)), q=2),
    "tensor.linalg.matrix_power": lambda t: paddle.linalg.matrix_power(t.v(_spd(), "x"), 2),
    "tensor.linalg.qr": lambda t: paddle.linalg.qr(t.v(_spd(), "x")),
    "tensor.linalg.lu": lambda t: paddle.linalg.lu(t.v(_spd(), "x")),
    "tensor.linalg.lu_unpack": lambda t: paddle.linalg.lu_unpack(
        *paddle.linalg.lu(t.v(_spd(), "x"))),
    "tensor.linalg.eig": lambda t: paddle.linalg.eig(t.v(_sym(), "x")),
    "tensor.linalg.eigvals": lambda t: paddle.linalg.eigvals(t.v(_sym(), "x")),
    "tensor.linalg.multi_dot": lambda t: paddle.linalg.multi_dot([t.f(), t.f((3, 2), "y")]),
    "tensor.linalg.eigh": lambda t: paddle.linalg.eigh(t.v(_sym(), "x")),
    "tensor.linalg.eigvalsh": lambda t: paddle.linalg.eigvalsh(t.v(_sym(), "x")),
    "tensor.linalg.pinv": lambda t: paddle.linalg.pinv(t.v(_spd(), "x")),
    "tensor.linalg.solve": lambda t: paddle.linalg.solve(t.v(_spd(), "x"), t.f((3, 2), "y")),
    "tensor.linalg.triangular_solve": lambda t: paddle.linalg.triangular_solve(
        t.v(np.triu(_spd()), "x"), t.f((3, 2), "y")),
    "tensor.linalg.cholesky_solve": lambda t: paddle.linalg.cholesky_solve(
        t.f((3, 2)), t.v(np.linalg.cholesky(_spd()).astype("float32"), "y"), upper=False),
    "tensor.linalg.lstsq": lambda t: paddle.linalg.lstsq(t.f((3, 2)), t.f((3, 1), "y")),
    "tensor.linalg.householder_product": lambda t: paddle.linalg.householder_product(
        t.f((3, 2)), t.f((2,), "tau")),
    "tensor.linalg.cross": lambda t: paddle.cross(t.f(name="x"), t.f(name="y")),
    # ---- paddle.tensor.random
    "tensor.random.multinomial": lambda t: paddle.multinomial(t.f(), 2),
    "tensor.random.standard_normal": lambda t: paddle.standard_normal([2, 3]),
    "tensor.random.randn": lambda t: paddle.randn([2, 3]),
    "tensor.random.normal": lambda t: paddle.normal(shape=[2, 3]),
    "tensor.random.uniform": lambda t: paddle.uniform([2, 3]),
    "tensor.random.randint": lambda t: paddle.randint(0, 5, [2, 3]),
    "tensor.random.randint_like": lambda t: paddle.randint_like(t.f(), 0, 5),
    "tensor.random.randperm": lambda t: paddle.randperm(5),
    "tensor.random.rand": lambda t: paddle.rand([2, 3]),
    # ---- paddle.tensor.stat
    "tensor.stat.quantile": lambda t: paddle.quantile(t.f(), 0.5),
    "tensor.stat.nanquantile": lambda t: paddle.nanquantile(t.f(), 0.5),
    # ---- paddle.metric
    "metric.Accuracy": lambda t: paddle.metric.Accuracy().compute(t.f((4, 3), "pred"),
                                                                  t.i((4, 1), 3)),
    "metric.accuracy": lambda t: paddle.metric.accuracy(t.f((4, 3), "input"), t.i((4, 1), 3)),
    # ---- paddle.static.nn
    "static.nn.fc": lambda t: paddle.static.nn.fc(t.f(), 4),
    "static.nn.batch_norm": lambda t: paddle.static.nn.batch_norm(t.img()),
    "static.nn.bilinear_tensor_product": lambda t: paddle.static.nn.bilinear_tensor_product(
        t.f(name="x"), t.f((2, 4), "y"), 5),
    "static.nn.embedding": lambda t: paddle.static.nn.embedding(t.i((2, 1), 10), [10, 4]),
    "static.nn.case": lambda t: _case(t),
    "static.nn.cond": lambda t: _cond(t),
    "static.nn.switch_case": lambda t: _switch_case(t),
    "static.nn.while_loop": lambda t: _while_loop(t),
    "static.nn.conv2d": lambda t: paddle.static.nn.conv2d(t.img(), 2, 3),
    "static.nn.conv2d_transpose": lambda t: paddle.static.nn.conv2d_transpose(
        t.img(), 2, filter_size=3),
    "static.nn.conv3d": lambda t: paddle.static.nn.conv3d(t.vol(), 2, 3),
    "static.nn.conv3d_transpose": lambda t: paddle.static.nn.conv3d_transpose(
        t.vol(), 2, filter_size=3),
    "static.nn.data_norm": lambda t: paddle.static.nn.data_norm(t.f()),
    "static.nn.group_norm": lambda t: paddle.static.nn.group_norm(t.img(), 3),
    "static.nn.instance_norm": lambda t: paddle.static.nn.instance_norm(t.img()),
    "static.nn.layer_norm": lambda t: paddle.static.nn.layer_norm(t.f()),
    "static.nn.nce": lambda t: paddle.static.nn.nce(t.f(), t.i((2, 1), 5), 5),
    "static.nn.prelu": lambda t: paddle.static.nn.prelu(t.f(), "all"),
    "static.nn.row_conv": lambda t: paddle.static.nn.row_conv(t.f((2, 4, 3)), 2),
    "static.nn.spectral_norm": lambda t: paddle.static.nn.spectral_norm(t.f(name="weight")),
}


def _ctc_inputs(t):
    return (t.f((5, 2, 4), "log_probs"), t.v(np.array([[1, 2], [3, 1]], "int32"), "labels"),
            t.v(np.array([5, 5], "int64"), "input_lengths"),
            t.v(np.array([2, 2], "int64"), "label_lengths"))


def _rnnt_inputs(t):
    return (t.f((2, 4, 3, 5), "input"), t.v(np.array([[1, 2], [3, 1]], "int32"), "label"),
            t.v(np.array([4, 4], "int32"), "input_lengths"),
            t.v(np.array([2, 2], "int32"), "label_lengths"))


def _pred(t):
    return paddle.mean(t.f(name="p", grad=False)) > 0.5


def _cond(t):
    x = t.f()
    return paddle.static.nn.cond(_pred(t), lambda: x * 2.0, lambda: x - 1.0)


def _case(t):
    x = t.f()
    pred = _pred(t)
    return paddle.static.nn.case([(pred, lambda: x * 2.0)], default=lambda: x - 1.0)


def _switch_case(t):
    x = t.f()
    index = t.v(np.array([1], "int64"), "index")
    return paddle.static.nn.switch_case(index, {0: lambda: x * 2.0, 1: lambda: x - 1.0})


def _while_loop(t):
    i = paddle.full([1], 0, "int64")
    x = t.f(grad=False)
    _, out = paddle.static.nn.while_loop(lambda i, s: i < 3,
                                         lambda i, s: [i + 1, s * 2.0], [i, x])
    return out
