"""What paddlepaddle 3.3.1 writes for each PIR op: operands, attributes (in its order,
with their JSON kinds), results, and the constants it feeds to operands.

GENERATED DATA: made by tests/fixtures/pir/derive_signatures.py, run with paddlepaddle
3.3.1 over 165 programs Paddle made and serialized itself: the fixtures it saved
(tests/fixtures/pir/*/model.json), its own translation of their legacy programs and of
the course's Paddle 2 models, and its translation of one-op legacy programs (one per
Fluid op the writer knows). Do not edit by hand: re-run the script.

A signature says, for one op (``1.matmul``, ``0.combine``):

* ``operands``: the operand names of Paddle's op definition, in order (empty where
  the op was only seen inside a region);
* ``attrs``: ``(name, kind, value seen)`` in the order Paddle writes them; an array's
  kind is ``0.a_array:<element kind>`` (``?``: only seen empty). The writer takes the
  value from the Fluid op and the value seen for an attribute Fluid has no name for;
* ``results``: the kind of each result's type (``0.t_dtensor``, ``0.t_vec``, ``NULL``
  for an optional result left empty); the writer writes as many results;
* ``constants``: operand index -> ``(maker, dtype, shape)``: Paddle feeds that operand
  a constant made by ``1.full_int_array`` (shape None: as long as the list) or
  ``1.full`` (that shape), so a Fluid attribute goes there the same way;
* ``source``: the first program it was seen in.
"""
from __future__ import annotations

from typing import NamedTuple


class Signature(NamedTuple):
    operands: tuple
    attrs: tuple
    results: tuple
    constants: dict
    source: str


SIGNATURES = {
    '0.combine': Signature(
        operands=(),
        attrs=(),
        results=('0.t_vec',),
        constants={},
        source='tests/fixtures/pir/gru/model.json'),
    '0.slice': Signature(
        operands=(),
        attrs=(
            ('index', '0.a_i32', 0),
        ),
        results=('0.t_dtensor',),
        constants={},
        source="Paddle's translation of notebooks/data/paddle_lstm/lstm_infer.pdmodel"),
    '0.split': Signature(
        operands=(),
        attrs=(),
        results=('0.t_dtensor', '0.t_dtensor'),
        constants={},
        source='tests/fixtures/pir/ops/concat_split/model.json'),
    '1.abs': Signature(
        operands=('x',),
        attrs=(),
        results=('0.t_dtensor',),
        constants={},
        source='tests/fixtures/pir/ops/indexing_more/model.json'),
    '1.acos': Signature(
        operands=('x',),
        attrs=(),
        results=('0.t_dtensor',),
        constants={},
        source='tests/fixtures/pir/ops/trigonometric/model.json'),
    '1.acosh': Signature(
        operands=('x',),
        attrs=(),
        results=('0.t_dtensor',),
        constants={},
        source='tests/fixtures/pir/ops/trigonometric/model.json'),
    '1.add': Signature(
        operands=('x', 'y'),
        attrs=(),
        results=('0.t_dtensor',),
        constants={},
        source='tests/fixtures/pir/cnn/model.json'),
    '1.all': Signature(
        operands=('x',),
        attrs=(
            ('axis', '0.a_array:0.a_i64', [-1]),
            ('keepdim', '0.a_bool', False),
        ),
        results=('0.t_dtensor',),
        constants={},
        source='tests/fixtures/pir/ops/compare_logic/model.json'),
    '1.allclose': Signature(
        operands=('x', 'y', 'rtol', 'atol'),
        attrs=(
            ('equal_nan', '0.a_bool', False),
        ),
        results=('0.t_dtensor',),
        constants={2: ('1.full', 'float64', [1]), 3: ('1.full', 'float64', [1])},
        source='tests/fixtures/pir/ops/logic_more/model.json'),
    '1.amax': Signature(
        operands=('x',),
        attrs=(
            ('axis', '0.a_array:0.a_i64', [1]),
            ('keepdim', '0.a_bool', False),
        ),
        results=('0.t_dtensor',),
        constants={},
        source='tests/fixtures/pir/ops/norms/model.json'),
    '1.amin': Signature(
        operands=('x',),
        attrs=(
            ('axis', '0.a_array:0.a_i64', [-1]),
            ('keepdim', '0.a_bool', False),
        ),
        results=('0.t_dtensor',),
        constants={},
        source='tests/fixtures/pir/ops/norms/model.json'),
    '1.any': Signature(
        operands=('x',),
        attrs=(
            ('axis', '0.a_array:0.a_i64', [1]),
            ('keepdim', '0.a_bool', False),
        ),
        results=('0.t_dtensor',),
        constants={},
        source='tests/fixtures/pir/ops/compare_logic/model.json'),
    '1.arange': Signature(
        operands=('start', 'end', 'step'),
        attrs=(
            ('dtype', '1.a_dtype', 'int64'),
            ('place', '1.a_place', [0, 0, '']),
        ),
        results=('0.t_dtensor',),
        constants={0: ('1.full', 'int64', [1]), 2: ('1.full', 'int64', [1])},
        source='tests/fixtures/pir/ops/arange_dynamic/model.json'),
    '1.argmax': Signature(
        operands=('x', 'axis'),
        attrs=(
            ('keepdims', '0.a_bool', False),
            ('flatten', '0.a_bool', False),
            ('dtype', '1.a_dtype', 'int64'),
        ),
        results=('0.t_dtensor',),
        constants={1: ('1.full', 'int64', [1])},
        source='tests/fixtures/pir/ops/arg_topk_sort/model.json'),
    '1.argmin': Signature(
        operands=('x', 'axis'),
        attrs=(
            ('keepdims', '0.a_bool', True),
            ('flatten', '0.a_bool', False),
            ('dtype', '1.a_dtype', 'int64'),
        ),
        results=('0.t_dtensor',),
        constants={1: ('1.full', 'int64', [1])},
        source='tests/fixtures/pir/ops/arg_topk_sort/model.json'),
    '1.argsort': Signature(
        operands=('x',),
        attrs=(
            ('axis', '0.a_i32', -1),
            ('descending', '0.a_bool', False),
            ('stable', '0.a_bool', False),
        ),
        results=('0.t_dtensor', '0.t_dtensor'),
        constants={},
        source='tests/fixtures/pir/ops/arg_topk_sort/model.json'),
    '1.asin': Signature(
        operands=('x',),
        attrs=(),
        results=('0.t_dtensor',),
        constants={},
        source='tests/fixtures/pir/ops/trigonometric/model.json'),
    '1.asinh': Signature(
        operands=('x',),
        attrs=(),
        results=('0.t_dtensor',),
        constants={},
        source='tests/fixtures/pir/ops/trigonometric/model.json'),
    '1.assign': Signature(
        operands=('x',),
        attrs=(),
        results=('0.t_dtensor',),
        constants={},
        source='tests/fixtures/pir/ops/conv/model.json'),
    '1.assign_out_': Signature(
        operands=(),
        attrs=(),
        results=('0.t_dtensor',),
        constants={},
        source="Paddle's translation of tests/fixtures/pir/while_cond/legacy/model.pdmodel"),
    '1.assign_value_': Signature(
        operands=('output',),
        attrs=(
            ('shape', '0.a_array:0.a_i32', [2, 2]),
            ('dtype', '1.a_dtype', 'int64'),
            ('values', '0.a_array:0.a_f64', [1.0, 2.0, 0.0, 4.0]),
            ('place', '1.a_place', [0, 0, '']),
        ),
        results=('0.t_dtensor',),
        constants={0: ('1.full', 'int64', [2, 2])},
        source='tests/fixtures/pir/ops/gather/model.json'),
    '1.atan': Signature(
        operands=('x',),
        attrs=(),
        results=('0.t_dtensor',),
        constants={},
        source='tests/fixtures/pir/ops/trigonometric/model.json'),
    '1.atan2': Signature(
        operands=('x', 'y'),
        attrs=(),
        results=('0.t_dtensor',),
        constants={},
        source='tests/fixtures/pir/ops/math_more/model.json'),
    '1.atanh': Signature(
        operands=('x',),
        attrs=(),
        results=('0.t_dtensor',),
        constants={},
        source='tests/fixtures/pir/ops/trigonometric/model.json'),
    '1.batch_norm_': Signature(
        operands=('x', 'mean', 'variance', 'scale', 'bias'),
        attrs=(
            ('is_test', '0.a_bool', True),
            ('momentum', '0.a_f32', 0.8999999761581421),
            ('epsilon', '0.a_f32', 9.999999747378752e-06),
            ('data_format', '0.a_str', 'NCHW'),
            ('use_global_stats', '0.a_bool', True),
            ('trainable_statistics', '0.a_bool', False),
        ),
        results=(
            '0.t_dtensor',
            '0.t_dtensor',
            '0.t_dtensor',
            '0.t_dtensor',
            '0.t_dtensor',
            '0.t_dtensor',
        ),
        constants={},
        source='tests/fixtures/pir/cnn/model.json'),
    '1.bce_loss': Signature(
        operands=('input', 'label'),
        attrs=(),
        results=('0.t_dtensor',),
        constants={},
        source='tests/fixtures/pir/ops/losses_reg/model.json'),
    '1.bilinear_interp': Signature(
        operands=('x', 'out_size', 'size_tensor', 'scale_tensor'),
        attrs=(
            ('data_format', '0.a_str', 'NCHW'),
            ('out_d', '0.a_i32', -1),
            ('out_h', '0.a_i32', 5),
            ('out_w', '0.a_i32', 4),
            ('scale', '0.a_array:0.a_f64', [1.5, 1.5]),
            ('interp_method', '0.a_str', 'bilinear'),
            ('align_corners', '0.a_bool', True),
            ('align_mode', '0.a_i32', 0),
        ),
        results=('0.t_dtensor',),
        constants={},
        source='tests/fixtures/pir/ops/interpolate/model.json'),
    '1.bitwise_and': Signature(
        operands=('x', 'y'),
        attrs=(),
        results=('0.t_dtensor',),
        constants={},
        source='tests/fixtures/pir/ops/logic_more/model.json'),
    '1.bitwise_not': Signature(
        operands=('x',),
        attrs=(),
        results=('0.t_dtensor',),
        constants={},
        source='tests/fixtures/pir/ops/logic_more/model.json'),
    '1.bitwise_or': Signature(
        operands=('x', 'y'),
        attrs=(),
        results=('0.t_dtensor',),
        constants={},
        source='tests/fixtures/pir/ops/logic_more/model.json'),
    '1.bitwise_xor': Signature(
        operands=('x', 'y'),
        attrs=(),
        results=('0.t_dtensor',),
        constants={},
        source='tests/fixtures/pir/ops/logic_more/model.json'),
    '1.bmm': Signature(
        operands=('x', 'y'),
        attrs=(),
        results=('0.t_dtensor',),
        constants={},
        source='tests/fixtures/pir/ops/matmul/model.json'),
    '1.broadcast_tensors': Signature(
        operands=('input',),
        attrs=(),
        results=('0.t_vec',),
        constants={},
        source='tests/fixtures/pir/ops/shape_more/model.json'),
    '1.cast': Signature(
        operands=('x',),
        attrs=(
            ('dtype', '1.a_dtype', 'float32'),
        ),
        results=('0.t_dtensor',),
        constants={},
        source='tests/fixtures/pir/transformer/model.json'),
    '1.ceil': Signature(
        operands=('x',),
        attrs=(),
        results=('0.t_dtensor',),
        constants={},
        source='tests/fixtures/pir/ops/math_unary/model.json'),
    '1.celu': Signature(
        operands=('x',),
        attrs=(
            ('alpha', '0.a_f32', 1.5),
        ),
        results=('0.t_dtensor',),
        constants={},
        source='tests/fixtures/pir/ops/act_param/model.json'),
    '1.channel_shuffle': Signature(
        operands=('x',),
        attrs=(
            ('groups', '0.a_i32', 2),
            ('data_format', '0.a_str', 'NCHW'),
        ),
        results=('0.t_dtensor',),
        constants={},
        source='tests/fixtures/pir/ops/nn_more/model.json'),
    '1.clip': Signature(
        operands=('x', 'min', 'max'),
        attrs=(),
        results=('0.t_dtensor',),
        constants={1: ('1.full', 'float32', [1]), 2: ('1.full', 'float32', [1])},
        source='tests/fixtures/pir/ops/nn_more/model.json'),
    '1.concat': Signature(
        operands=('x', 'axis'),
        attrs=(),
        results=('0.t_dtensor',),
        constants={1: ('1.full', 'int32', [1])},
        source='tests/fixtures/pir/ops/concat_split/model.json'),
    '1.conv2d': Signature(
        operands=('input', 'filter'),
        attrs=(
            ('strides', '0.a_array:0.a_i32', [1, 1]),
            ('paddings', '0.a_array:0.a_i32', [1, 1]),
            ('padding_algorithm', '0.a_str', 'EXPLICIT'),
            ('dilations', '0.a_array:0.a_i32', [1, 1]),
            ('groups', '0.a_i32', 1),
            ('data_format', '0.a_str', 'NCHW'),
        ),
        results=('0.t_dtensor',),
        constants={},
        source='tests/fixtures/pir/cnn/model.json'),
    '1.conv2d_transpose': Signature(
        operands=('x', 'filter', 'output_size'),
        attrs=(
            ('strides', '0.a_array:0.a_i32', [2, 2]),
            ('paddings', '0.a_array:0.a_i32', [1, 1]),
            ('output_padding', '0.a_array:?', []),
            ('padding_algorithm', '0.a_str', 'EXPLICIT'),
            ('groups', '0.a_i32', 1),
            ('dilations', '0.a_array:0.a_i32', [1, 1]),
            ('data_format', '0.a_str', 'NCHW'),
        ),
        results=('0.t_dtensor',),
        constants={2: ('1.full_int_array', 'int64', None)},
        source='tests/fixtures/pir/ops/conv_transpose/model.json'),
    '1.cos': Signature(
        operands=('x',),
        attrs=(),
        results=('0.t_dtensor',),
        constants={},
        source='tests/fixtures/pir/ops/trigonometric/model.json'),
    '1.cosh': Signature(
        operands=('x',),
        attrs=(),
        results=('0.t_dtensor',),
        constants={},
        source='tests/fixtures/pir/ops/trigonometric/model.json'),
    '1.cross': Signature(
        operands=('x', 'y'),
        attrs=(
            ('axis', '0.a_i32', 1),
        ),
        results=('0.t_dtensor',),
        constants={},
        source='tests/fixtures/pir/ops/math_more/model.json'),
    '1.cross_entropy_with_softmax': Signature(
        operands=('input', 'label'),
        attrs=(
            ('soft_label', '0.a_bool', False),
            ('use_softmax', '0.a_bool', True),
            ('numeric_stable_mode', '0.a_bool', True),
            ('ignore_index', '0.a_i32', -100),
            ('axis', '0.a_i32', -1),
        ),
        results=('0.t_dtensor', '0.t_dtensor'),
        constants={},
        source='tests/fixtures/pir/ops/losses_ce/model.json'),
    '1.cummax': Signature(
        operands=('x',),
        attrs=(
            ('axis', '0.a_i32', 1),
            ('dtype', '1.a_dtype', 'int64'),
        ),
        results=('0.t_dtensor', '0.t_dtensor'),
        constants={},
        source='tests/fixtures/pir/ops/order_more/model.json'),
    '1.cummin': Signature(
        operands=('x',),
        attrs=(
            ('axis', '0.a_i32', -1),
            ('dtype', '1.a_dtype', 'int64'),
        ),
        results=('0.t_dtensor', '0.t_dtensor'),
        constants={},
        source='tests/fixtures/pir/ops/order_more/model.json'),
    '1.cumprod': Signature(
        operands=('x',),
        attrs=(
            ('dim', '0.a_i32', -1),
            ('exclusive', '0.a_bool', False),
            ('reverse', '0.a_bool', False),
        ),
        results=('0.t_dtensor',),
        constants={},
        source='tests/fixtures/pir/ops/cumulative/model.json'),
    '1.cumsum': Signature(
        operands=('x', 'axis'),
        attrs=(
            ('flatten', '0.a_bool', True),
            ('exclusive', '0.a_bool', False),
            ('reverse', '0.a_bool', False),
        ),
        results=('0.t_dtensor',),
        constants={1: ('1.full', 'int32', [1])},
        source='tests/fixtures/pir/ops/cumsum_flat/model.json'),
    '1.data': Signature(
        operands=(),
        attrs=(
            ('name', '0.a_str', 'x'),
            ('shape', '1.a_intarray', [-1, 1, 8, 8]),
            ('dtype', '1.a_dtype', 'float32'),
            ('place', '1.a_place', [0, 0, '']),
        ),
        results=('0.t_dtensor',),
        constants={},
        source='tests/fixtures/pir/cnn/model.json'),
    '1.depthwise_conv2d': Signature(
        operands=('input', 'filter'),
        attrs=(
            ('strides', '0.a_array:0.a_i32', [1, 1]),
            ('paddings', '0.a_array:0.a_i32', [1, 1]),
            ('padding_algorithm', '0.a_str', 'EXPLICIT'),
            ('groups', '0.a_i32', 4),
            ('dilations', '0.a_array:0.a_i32', [1, 1]),
            ('data_format', '0.a_str', 'NCHW'),
        ),
        results=('0.t_dtensor',),
        constants={},
        source='tests/fixtures/pir/ops/conv/model.json'),
    '1.diag': Signature(
        operands=('x',),
        attrs=(
            ('offset', '0.a_i32', 0),
            ('padding_value', '0.a_f32', 0.0),
        ),
        results=('0.t_dtensor',),
        constants={},
        source='tests/fixtures/pir/ops/math_more/model.json'),
    '1.diagonal': Signature(
        operands=('x',),
        attrs=(
            ('offset', '0.a_i32', 0),
            ('axis1', '0.a_i32', 0),
            ('axis2', '0.a_i32', 1),
        ),
        results=('0.t_dtensor',),
        constants={},
        source='tests/fixtures/pir/ops/indexing_more/model.json'),
    '1.divide': Signature(
        operands=('x', 'y'),
        attrs=(),
        results=('0.t_dtensor',),
        constants={},
        source='tests/fixtures/pir/ops/math_binary/model.json'),
    '1.dot': Signature(
        operands=('x', 'y'),
        attrs=(),
        results=('0.t_dtensor',),
        constants={},
        source='tests/fixtures/pir/ops/matmul/model.json'),
    '1.dropout': Signature(
        operands=('x', 'seed_tensor', 'p'),
        attrs=(
            ('is_test', '0.a_bool', True),
            ('mode', '0.a_str', 'upscale_in_train'),
            ('seed', '0.a_i32', 0),
            ('fix_seed', '0.a_bool', False),
        ),
        results=('0.t_dtensor', '0.t_dtensor'),
        constants={2: ('1.full', 'float32', [1])},
        source='tests/fixtures/pir/ops/dropout/model.json'),
    '1.einsum': Signature(
        operands=('x',),
        attrs=(
            ('equation', '0.a_str', 'bij,bkj->bik'),
        ),
        results=('0.t_dtensor', '0.t_vec', '0.t_vec'),
        constants={},
        source='tests/fixtures/pir/ops/no_counterpart/model.json'),
    '1.elementwise_pow': Signature(
        operands=('x', 'y'),
        attrs=(),
        results=('0.t_dtensor',),
        constants={},
        source='tests/fixtures/pir/ops/math_binary/model.json'),
    '1.elu': Signature(
        operands=('x',),
        attrs=(
            ('alpha', '0.a_f32', 0.699999988079071),
        ),
        results=('0.t_dtensor',),
        constants={},
        source='tests/fixtures/pir/ops/act_param/model.json'),
    '1.embedding': Signature(
        operands=('x', 'weight'),
        attrs=(
            ('padding_idx', '0.a_i64', -1),
            ('sparse', '0.a_bool', False),
        ),
        results=('0.t_dtensor',),
        constants={},
        source='tests/fixtures/pir/ops/embedding/model.json'),
    '1.equal': Signature(
        operands=('x', 'y'),
        attrs=(),
        results=('0.t_dtensor',),
        constants={},
        source='tests/fixtures/pir/while_cond/model.json'),
    '1.equal_all': Signature(
        operands=('x', 'y'),
        attrs=(),
        results=('0.t_dtensor',),
        constants={},
        source='tests/fixtures/pir/ops/logic_more/model.json'),
    '1.erf': Signature(
        operands=('x',),
        attrs=(),
        results=('0.t_dtensor',),
        constants={},
        source='tests/fixtures/pir/ops/trigonometric/model.json'),
    '1.erfinv': Signature(
        operands=('x',),
        attrs=(),
        results=('0.t_dtensor',),
        constants={},
        source='tests/fixtures/pir/ops/math_more/model.json'),
    '1.exp': Signature(
        operands=('x',),
        attrs=(),
        results=('0.t_dtensor',),
        constants={},
        source='tests/fixtures/pir/ops/math_unary/model.json'),
    '1.expand': Signature(
        operands=('x', 'shape'),
        attrs=(),
        results=('0.t_dtensor',),
        constants={1: ('1.full_int_array', 'int64', None)},
        source='tests/fixtures/pir/ops/gather/model.json'),
    '1.expand_as': Signature(
        operands=('x', 'y'),
        attrs=(
            ('target_shape', '0.a_array:0.a_i64', [-1, 3, 4]),
        ),
        results=('0.t_dtensor',),
        constants={},
        source='tests/fixtures/pir/ops/tile_expand/model.json'),
    '1.expm1': Signature(
        operands=('x',),
        attrs=(),
        results=('0.t_dtensor',),
        constants={},
        source='tests/fixtures/pir/ops/trigonometric/model.json'),
    '1.eye': Signature(
        operands=('num_rows', 'num_columns'),
        attrs=(
            ('dtype', '1.a_dtype', 'float32'),
            ('place', '1.a_place', [0, 0, '']),
        ),
        results=('0.t_dtensor',),
        constants={0: ('1.full', 'float32', [1]), 1: ('1.full', 'float32', [1])},
        source='tests/fixtures/pir/ops/creation/model.json'),
    '1.feed': Signature(
        operands=(),
        attrs=(
            ('name', '0.a_str', 'x'),
            ('col', '0.a_i32', 0),
        ),
        results=('0.t_dtensor',),
        constants={},
        source="Paddle's translation of tests/fixtures/pir/cnn/legacy/model.pdmodel"),
    '1.fetch': Signature(
        operands=('x',),
        attrs=(
            ('name', '0.a_str', 'fetch_name_0'),
            ('col', '0.a_i32', 0),
        ),
        results=('0.t_dtensor',),
        constants={},
        source='tests/fixtures/pir/cnn/model.json'),
    '1.flatten': Signature(
        operands=('x',),
        attrs=(
            ('start_axis', '0.a_i32', 1),
            ('stop_axis', '0.a_i32', 3),
        ),
        results=('0.t_dtensor',),
        constants={},
        source='tests/fixtures/pir/cnn/model.json'),
    '1.flip': Signature(
        operands=('x',),
        attrs=(
            ('axis', '0.a_array:0.a_i32', [1, 2]),
        ),
        results=('0.t_dtensor',),
        constants={},
        source='tests/fixtures/pir/ops/roll_flip/model.json'),
    '1.floor': Signature(
        operands=('x',),
        attrs=(),
        results=('0.t_dtensor',),
        constants={},
        source='tests/fixtures/pir/ops/math_unary/model.json'),
    '1.floor_divide': Signature(
        operands=('x', 'y'),
        attrs=(),
        results=('0.t_dtensor',),
        constants={},
        source='tests/fixtures/pir/ops/math_binary/model.json'),
    '1.fmax': Signature(
        operands=('x', 'y'),
        attrs=(),
        results=('0.t_dtensor',),
        constants={},
        source='tests/fixtures/pir/ops/math_more/model.json'),
    '1.fmin': Signature(
        operands=('x', 'y'),
        attrs=(),
        results=('0.t_dtensor',),
        constants={},
        source='tests/fixtures/pir/ops/math_more/model.json'),
    '1.full': Signature(
        operands=(),
        attrs=(
            ('shape', '1.a_intarray', []),
            ('value', '0.a_f64', 2.0),
            ('dtype', '1.a_dtype', 'int64'),
            ('place', '1.a_place', [1, 0, '']),
        ),
        results=('0.t_dtensor',),
        constants={},
        source='tests/fixtures/pir/gru/model.json'),
    '1.full_int_array': Signature(
        operands=(),
        attrs=(
            ('value', '0.a_array:0.a_i64', [1, -1, 1, 1]),
            ('dtype', '1.a_dtype', 'int64'),
            ('place', '1.a_place', [1, 0, '']),
        ),
        results=('0.t_dtensor',),
        constants={},
        source='tests/fixtures/pir/cnn/model.json'),
    '1.full_like': Signature(
        operands=('x', 'value'),
        attrs=(
            ('dtype', '1.a_dtype', 'float32'),
            ('place', '1.a_place', [0, 0, '']),
        ),
        results=('0.t_dtensor',),
        constants={1: ('1.full', 'float32', [1])},
        source='tests/fixtures/pir/while_cond/model.json'),
    '1.full_with_tensor': Signature(
        operands=('value', 'shape'),
        attrs=(
            ('dtype', '1.a_dtype', 'float32'),
        ),
        results=('0.t_dtensor',),
        constants={0: ('1.full', 'float32', [1])},
        source='tests/fixtures/pir/gru/model.json'),
    '1.gather': Signature(
        operands=('x', 'index', 'axis'),
        attrs=(),
        results=('0.t_dtensor',),
        constants={2: ('1.full', 'int32', [1])},
        source='tests/fixtures/pir/ops/gather/model.json'),
    '1.gather_nd': Signature(
        operands=('x', 'index'),
        attrs=(),
        results=('0.t_dtensor',),
        constants={},
        source='tests/fixtures/pir/ops/gather/model.json'),
    '1.gelu': Signature(
        operands=('x',),
        attrs=(
            ('approximate', '0.a_bool', False),
        ),
        results=('0.t_dtensor',),
        constants={},
        source='tests/fixtures/pir/ops/act_gelu/model.json'),
    '1.greater_equal': Signature(
        operands=('x', 'y'),
        attrs=(),
        results=('0.t_dtensor',),
        constants={},
        source='tests/fixtures/pir/ops/compare_logic/model.json'),
    '1.greater_than': Signature(
        operands=('x', 'y'),
        attrs=(),
        results=('0.t_dtensor',),
        constants={},
        source='tests/fixtures/pir/if_layer/model.json'),
    '1.group_norm': Signature(
        operands=('x', 'scale', 'bias'),
        attrs=(
            ('epsilon', '0.a_f64', 1e-05),
            ('groups', '0.a_i32', 2),
            ('data_format', '0.a_str', 'NCHW'),
        ),
        results=('0.t_dtensor', '0.t_dtensor', '0.t_dtensor'),
        constants={},
        source='tests/fixtures/pir/ops/norm_layers/model.json'),
    '1.hardshrink': Signature(
        operands=('x',),
        attrs=(
            ('threshold', '0.a_f32', 0.6000000238418579),
        ),
        results=('0.t_dtensor',),
        constants={},
        source='tests/fixtures/pir/ops/act_hard/model.json'),
    '1.hardsigmoid': Signature(
        operands=('x',),
        attrs=(
            ('slope', '0.a_f32', 0.16666670143604279),
            ('offset', '0.a_f32', 0.5),
        ),
        results=('0.t_dtensor',),
        constants={},
        source='tests/fixtures/pir/ops/act_hard/model.json'),
    '1.hardswish': Signature(
        operands=('x',),
        attrs=(),
        results=('0.t_dtensor',),
        constants={},
        source='tests/fixtures/pir/ops/act_hard/model.json'),
    '1.hardtanh': Signature(
        operands=('x',),
        attrs=(
            ('t_min', '0.a_f32', -0.5),
            ('t_max', '0.a_f32', 0.5),
        ),
        results=('0.t_dtensor',),
        constants={},
        source='tests/fixtures/pir/ops/act_hard/model.json'),
    '1.heaviside': Signature(
        operands=('x', 'y'),
        attrs=(),
        results=('0.t_dtensor',),
        constants={},
        source='tests/fixtures/pir/ops/math_more/model.json'),
    '1.huber_loss': Signature(
        operands=('input', 'label'),
        attrs=(
            ('delta', '0.a_f32', 1.0),
        ),
        results=('0.t_dtensor', '0.t_dtensor'),
        constants={},
        source='tests/fixtures/pir/ops/losses_reg/model.json'),
    '1.if': Signature(
        operands=(),
        attrs=(),
        results=('0.t_dtensor',),
        constants={},
        source='tests/fixtures/pir/if_layer/model.json'),
    '1.index_add': Signature(
        operands=('x', 'index', 'add_value'),
        attrs=(
            ('axis', '0.a_i32', 0),
        ),
        results=('0.t_dtensor',),
        constants={2: ('1.full', 'float32', [3, 5])},
        source='tests/fixtures/pir/ops/indexing_more/model.json'),
    '1.index_sample': Signature(
        operands=('x', 'index'),
        attrs=(),
        results=('0.t_dtensor',),
        constants={},
        source='tests/fixtures/pir/ops/indexing_more/model.json'),
    '1.index_select': Signature(
        operands=('x', 'index'),
        attrs=(
            ('axis', '0.a_i32', 2),
        ),
        results=('0.t_dtensor',),
        constants={},
        source='tests/fixtures/pir/ops/gather/model.json'),
    '1.instance_norm': Signature(
        operands=('x', 'scale', 'bias'),
        attrs=(
            ('epsilon', '0.a_f32', 9.999999747378752e-06),
        ),
        results=('0.t_dtensor', '0.t_dtensor', '0.t_dtensor'),
        constants={},
        source='tests/fixtures/pir/ops/instance_norm/model.json'),
    '1.isclose': Signature(
        operands=('x', 'y', 'rtol', 'atol'),
        attrs=(
            ('equal_nan', '0.a_bool', False),
        ),
        results=('0.t_dtensor',),
        constants={2: ('1.full', 'float64', [1]), 3: ('1.full', 'float64', [1])},
        source='tests/fixtures/pir/ops/logic_more/model.json'),
    '1.isfinite': Signature(
        operands=('x',),
        attrs=(),
        results=('0.t_dtensor',),
        constants={},
        source='tests/fixtures/pir/ops/nan_checks/model.json'),
    '1.isinf': Signature(
        operands=('x',),
        attrs=(),
        results=('0.t_dtensor',),
        constants={},
        source='tests/fixtures/pir/ops/nan_checks/model.json'),
    '1.isnan': Signature(
        operands=('x',),
        attrs=(),
        results=('0.t_dtensor',),
        constants={},
        source='tests/fixtures/pir/ops/nan_checks/model.json'),
    '1.kldiv_loss': Signature(
        operands=('x', 'label'),
        attrs=(
            ('reduction', '0.a_str', 'none'),
            ('log_target', '0.a_bool', False),
        ),
        results=('0.t_dtensor',),
        constants={},
        source='tests/fixtures/pir/ops/losses_reg/model.json'),
    '1.kron': Signature(
        operands=('x', 'y'),
        attrs=(),
        results=('0.t_dtensor',),
        constants={},
        source='tests/fixtures/pir/ops/math_more/model.json'),
    '1.kthvalue': Signature(
        operands=('x',),
        attrs=(
            ('k', '0.a_i64', 2),
            ('axis', '0.a_i32', 1),
            ('keepdim', '0.a_bool', False),
        ),
        results=('0.t_dtensor', '0.t_dtensor'),
        constants={},
        source='tests/fixtures/pir/ops/order_more/model.json'),
    '1.label_smooth': Signature(
        operands=('label', 'prior_dist'),
        attrs=(
            ('epsilon', '0.a_f32', 0.10000000149011612),
        ),
        results=('0.t_dtensor',),
        constants={},
        source='tests/fixtures/pir/ops/nn_more/model.json'),
    '1.layer_norm': Signature(
        operands=('x', 'scale', 'bias'),
        attrs=(
            ('epsilon', '0.a_f32', 9.999999747378752e-06),
            ('begin_norm_axis', '0.a_i32', 2),
        ),
        results=('0.t_dtensor', '0.t_dtensor', '0.t_dtensor'),
        constants={},
        source='tests/fixtures/pir/transformer/model.json'),
    '1.leaky_relu': Signature(
        operands=('x',),
        attrs=(
            ('negative_slope', '0.a_f64', 0.1),
        ),
        results=('0.t_dtensor',),
        constants={},
        source='tests/fixtures/pir/ops/act_param/model.json'),
    '1.lerp': Signature(
        operands=('x', 'y', 'weight'),
        attrs=(),
        results=('0.t_dtensor',),
        constants={2: ('1.full', 'float32', [])},
        source='tests/fixtures/pir/ops/math_more/model.json'),
    '1.less_equal': Signature(
        operands=('x', 'y'),
        attrs=(),
        results=('0.t_dtensor',),
        constants={},
        source='tests/fixtures/pir/ops/compare_logic/model.json'),
    '1.less_than': Signature(
        operands=('x', 'y'),
        attrs=(),
        results=('0.t_dtensor',),
        constants={},
        source='tests/fixtures/pir/while_cond/model.json'),
    '1.linspace': Signature(
        operands=('start', 'stop', 'number'),
        attrs=(
            ('dtype', '1.a_dtype', 'float32'),
            ('place', '1.a_place', [0, 0, '']),
        ),
        results=('0.t_dtensor',),
        constants={
            0: ('1.full', 'float32', [1]),
            1: ('1.full', 'float32', [1]),
            2: ('1.full', 'int32', [1]),
        },
        source='tests/fixtures/pir/ops/creation/model.json'),
    '1.log': Signature(
        operands=('x',),
        attrs=(),
        results=('0.t_dtensor',),
        constants={},
        source='tests/fixtures/pir/ops/math_unary/model.json'),
    '1.log10': Signature(
        operands=('x',),
        attrs=(),
        results=('0.t_dtensor',),
        constants={},
        source='tests/fixtures/pir/ops/math_unary2/model.json'),
    '1.log1p': Signature(
        operands=('x',),
        attrs=(),
        results=('0.t_dtensor',),
        constants={},
        source='tests/fixtures/pir/ops/math_unary2/model.json'),
    '1.log2': Signature(
        operands=('x',),
        attrs=(),
        results=('0.t_dtensor',),
        constants={},
        source='tests/fixtures/pir/ops/math_unary2/model.json'),
    '1.log_softmax': Signature(
        operands=('x',),
        attrs=(
            ('axis', '0.a_i32', -1),
        ),
        results=('0.t_dtensor',),
        constants={},
        source='tests/fixtures/pir/ops/losses_ce/model.json'),
    '1.logcumsumexp': Signature(
        operands=('x',),
        attrs=(
            ('axis', '0.a_i32', 1),
            ('flatten', '0.a_bool', False),
            ('exclusive', '0.a_bool', False),
            ('reverse', '0.a_bool', False),
        ),
        results=('0.t_dtensor',),
        constants={},
        source='tests/fixtures/pir/ops/order_more/model.json'),
    '1.logical_and': Signature(
        operands=('x', 'y'),
        attrs=(),
        results=('0.t_dtensor',),
        constants={},
        source='tests/fixtures/pir/ops/compare_logic/model.json'),
    '1.logical_not': Signature(
        operands=('x',),
        attrs=(),
        results=('0.t_dtensor',),
        constants={},
        source='tests/fixtures/pir/ops/compare_logic/model.json'),
    '1.logical_or': Signature(
        operands=('x', 'y'),
        attrs=(),
        results=('0.t_dtensor',),
        constants={},
        source='tests/fixtures/pir/ops/compare_logic/model.json'),
    '1.logical_xor': Signature(
        operands=('x', 'y'),
        attrs=(),
        results=('0.t_dtensor',),
        constants={},
        source='tests/fixtures/pir/ops/compare_logic/model.json'),
    '1.logit': Signature(
        operands=('x',),
        attrs=(
            ('eps', '0.a_f64', 0.0),
        ),
        results=('0.t_dtensor',),
        constants={},
        source='tests/fixtures/pir/ops/math_more/model.json'),
    '1.logsigmoid': Signature(
        operands=('x',),
        attrs=(),
        results=('0.t_dtensor',),
        constants={},
        source='tests/fixtures/pir/ops/act_misc/model.json'),
    '1.logsumexp': Signature(
        operands=('x',),
        attrs=(
            ('axis', '0.a_array:0.a_i32', [-1]),
            ('keepdim', '0.a_bool', False),
            ('reduce_all', '0.a_bool', False),
        ),
        results=('0.t_dtensor',),
        constants={},
        source='tests/fixtures/pir/ops/norms/model.json'),
    '1.masked_fill': Signature(
        operands=('x', 'mask', 'value'),
        attrs=(),
        results=('0.t_dtensor',),
        constants={2: ('1.full', 'float32', [])},
        source='tests/fixtures/pir/ops/no_counterpart/model.json'),
    '1.masked_select': Signature(
        operands=('x', 'mask'),
        attrs=(),
        results=('0.t_dtensor',),
        constants={},
        source='tests/fixtures/pir/ops/where_mask/model.json'),
    '1.matmul': Signature(
        operands=('x', 'y'),
        attrs=(
            ('transpose_x', '0.a_bool', False),
            ('transpose_y', '0.a_bool', False),
        ),
        results=('0.t_dtensor',),
        constants={},
        source='tests/fixtures/pir/cnn/model.json'),
    '1.max': Signature(
        operands=('x', 'axis'),
        attrs=(
            ('keepdim', '0.a_bool', False),
        ),
        results=('0.t_dtensor',),
        constants={1: ('1.full_int_array', 'int64', None)},
        source='tests/fixtures/pir/ops/reductions/model.json'),
    '1.max_pool2d_with_index': Signature(
        operands=('x',),
        attrs=(
            ('kernel_size', '0.a_array:0.a_i32', [3, 3]),
            ('strides', '0.a_array:0.a_i32', [1, 1]),
            ('paddings', '0.a_array:0.a_i32', [0, 0]),
            ('global_pooling', '0.a_bool', False),
            ('adaptive', '0.a_bool', True),
            ('ceil_mode', '0.a_bool', False),
        ),
        results=('0.t_dtensor', '0.t_dtensor'),
        constants={},
        source='tests/fixtures/pir/ops/pool/model.json'),
    '1.maximum': Signature(
        operands=('x', 'y'),
        attrs=(),
        results=('0.t_dtensor',),
        constants={},
        source='tests/fixtures/pir/ops/math_binary/model.json'),
    '1.mean': Signature(
        operands=('x', 'axis'),
        attrs=(
            ('keepdim', '0.a_bool', False),
        ),
        results=('0.t_dtensor',),
        constants={1: ('1.full_int_array', 'int64', None)},
        source='tests/fixtures/pir/if_layer/model.json'),
    '1.mean_all': Signature(
        operands=('x',),
        attrs=(),
        results=('0.t_dtensor',),
        constants={},
        source='tests/fixtures/pir/ops/losses_reg/model.json'),
    '1.median': Signature(
        operands=('x',),
        attrs=(
            ('axis', '1.a_intarray', [-1]),
            ('keepdim', '0.a_bool', False),
            ('mode', '0.a_str', 'avg'),
        ),
        results=('0.t_dtensor', '0.t_dtensor'),
        constants={},
        source='tests/fixtures/pir/ops/no_counterpart/model.json'),
    '1.meshgrid': Signature(
        operands=('inputs',),
        attrs=(),
        results=('0.t_vec',),
        constants={},
        source='tests/fixtures/pir/ops/shape_more/model.json'),
    '1.min': Signature(
        operands=('x', 'axis'),
        attrs=(
            ('keepdim', '0.a_bool', False),
        ),
        results=('0.t_dtensor',),
        constants={1: ('1.full_int_array', 'int64', None)},
        source='tests/fixtures/pir/ops/reductions/model.json'),
    '1.minimum': Signature(
        operands=('x', 'y'),
        attrs=(),
        results=('0.t_dtensor',),
        constants={},
        source='tests/fixtures/pir/ops/math_binary/model.json'),
    '1.mish': Signature(
        operands=('x',),
        attrs=(
            ('lambda', '0.a_f32', 20.0),
        ),
        results=('0.t_dtensor',),
        constants={},
        source='tests/fixtures/pir/ops/act_misc/model.json'),
    '1.mode': Signature(
        operands=('x',),
        attrs=(
            ('axis', '0.a_i32', -1),
            ('keepdim', '0.a_bool', False),
        ),
        results=('0.t_dtensor', '0.t_dtensor'),
        constants={},
        source='tests/fixtures/pir/ops/order_more/model.json'),
    '1.multiply': Signature(
        operands=('x', 'y'),
        attrs=(),
        results=('0.t_dtensor',),
        constants={},
        source='tests/fixtures/pir/transformer/model.json'),
    '1.nearest_interp': Signature(
        operands=('x', 'out_size', 'size_tensor', 'scale_tensor'),
        attrs=(
            ('data_format', '0.a_str', 'NCHW'),
            ('out_d', '0.a_i32', -1),
            ('out_h', '0.a_i32', -1),
            ('out_w', '0.a_i32', -1),
            ('scale', '0.a_array:0.a_f64', [2.0, 2.0]),
            ('interp_method', '0.a_str', 'nearest'),
            ('align_corners', '0.a_bool', False),
            ('align_mode', '0.a_i32', 0),
        ),
        results=('0.t_dtensor',),
        constants={},
        source='tests/fixtures/pir/ops/interpolate/model.json'),
    '1.nll_loss': Signature(
        operands=('input', 'label', 'weight'),
        attrs=(
            ('ignore_index', '0.a_i64', -100),
            ('reduction', '0.a_str', 'mean'),
        ),
        results=('0.t_dtensor', '0.t_dtensor'),
        constants={},
        source='tests/fixtures/pir/ops/losses_ce/model.json'),
    '1.nonzero': Signature(
        operands=('condition',),
        attrs=(),
        results=('0.t_dtensor',),
        constants={},
        source='tests/fixtures/pir/ops/indexing_more/model.json'),
    '1.not_equal': Signature(
        operands=('x', 'y'),
        attrs=(),
        results=('0.t_dtensor',),
        constants={},
        source='tests/fixtures/pir/ops/compare_logic/model.json'),
    '1.numel': Signature(
        operands=('x',),
        attrs=(),
        results=('0.t_dtensor',),
        constants={},
        source='tests/fixtures/pir/ops/misc/model.json'),
    '1.one_hot': Signature(
        operands=('x', 'num_classes'),
        attrs=(),
        results=('0.t_dtensor',),
        constants={1: ('1.full', 'int32', [1])},
        source='tests/fixtures/pir/ops/one_hot/model.json'),
    '1.p_norm': Signature(
        operands=('x',),
        attrs=(
            ('porder', '0.a_f32', 2.0),
            ('axis', '0.a_i32', 1),
            ('epsilon', '0.a_f32', 9.999999960041972e-13),
            ('keepdim', '0.a_bool', True),
            ('asvector', '0.a_bool', False),
        ),
        results=('0.t_dtensor',),
        constants={},
        source='tests/fixtures/pir/ops/misc/model.json'),
    '1.pad': Signature(
        operands=('x', 'pad_value'),
        attrs=(
            ('paddings', '0.a_array:0.a_i32', [1, 1, 0, 2]),
        ),
        results=('0.t_dtensor',),
        constants={1: ('1.full', 'float32', [1])},
        source='tests/fixtures/pir/ops/pad/model.json'),
    '1.pad3d': Signature(
        operands=('x', 'paddings'),
        attrs=(
            ('mode', '0.a_str', 'constant'),
            ('pad_value', '0.a_f64', 0.5),
            ('data_format', '0.a_str', 'NCDHW'),
        ),
        results=('0.t_dtensor',),
        constants={1: ('1.full_int_array', 'int64', None)},
        source='tests/fixtures/pir/ops/pad/model.json'),
    '1.pixel_shuffle': Signature(
        operands=('x',),
        attrs=(
            ('upscale_factor', '0.a_i32', 2),
            ('data_format', '0.a_str', 'NCHW'),
        ),
        results=('0.t_dtensor',),
        constants={},
        source='tests/fixtures/pir/ops/misc/model.json'),
    '1.pixel_unshuffle': Signature(
        operands=('x',),
        attrs=(
            ('downscale_factor', '0.a_i32', 2),
            ('data_format', '0.a_str', 'NCHW'),
        ),
        results=('0.t_dtensor',),
        constants={},
        source='tests/fixtures/pir/ops/nn_more/model.json'),
    '1.pool2d': Signature(
        operands=('x', 'kernel_size'),
        attrs=(
            ('strides', '0.a_array:0.a_i64', [2, 2]),
            ('paddings', '0.a_array:0.a_i64', [0, 0]),
            ('ceil_mode', '0.a_bool', False),
            ('exclusive', '0.a_bool', True),
            ('data_format', '0.a_str', 'NCHW'),
            ('pooling_type', '0.a_str', 'max'),
            ('global_pooling', '0.a_bool', False),
            ('adaptive', '0.a_bool', False),
            ('padding_algorithm', '0.a_str', 'EXPLICIT'),
        ),
        results=('0.t_dtensor',),
        constants={1: ('1.full_int_array', 'int64', None)},
        source='tests/fixtures/pir/cnn/model.json'),
    '1.pow': Signature(
        operands=('x',),
        attrs=(
            ('y', '0.a_f32', 2.0),
        ),
        results=('0.t_dtensor',),
        constants={},
        source='tests/fixtures/pir/ops/math_binary/model.json'),
    '1.prelu': Signature(
        operands=('x', 'alpha'),
        attrs=(
            ('data_format', '0.a_str', 'NCHW'),
            ('mode', '0.a_str', 'channel'),
        ),
        results=('0.t_dtensor',),
        constants={},
        source='tests/fixtures/pir/ops/prelu/model.json'),
    '1.prod': Signature(
        operands=('x', 'axis'),
        attrs=(
            ('keepdim', '0.a_bool', False),
            ('reduce_all', '0.a_bool', False),
        ),
        results=('0.t_dtensor',),
        constants={1: ('1.full_int_array', 'int64', None)},
        source='tests/fixtures/pir/ops/reductions/model.json'),
    '1.put_along_axis': Signature(
        operands=('arr', 'indices', 'values'),
        attrs=(
            ('axis', '0.a_i32', 0),
            ('reduce', '0.a_str', 'assign'),
            ('include_self', '0.a_bool', True),
        ),
        results=('0.t_dtensor',),
        constants={},
        source='tests/fixtures/pir/ops/indexing_more/model.json'),
    '1.reciprocal': Signature(
        operands=('x',),
        attrs=(),
        results=('0.t_dtensor',),
        constants={},
        source='tests/fixtures/pir/ops/math_unary/model.json'),
    '1.relu': Signature(
        operands=('x',),
        attrs=(),
        results=('0.t_dtensor',),
        constants={},
        source='tests/fixtures/pir/cnn/model.json'),
    '1.relu6': Signature(
        operands=('x',),
        attrs=(),
        results=('0.t_dtensor',),
        constants={},
        source='tests/fixtures/pir/ops/act_basic/model.json'),
    '1.remainder': Signature(
        operands=('x', 'y'),
        attrs=(),
        results=('0.t_dtensor',),
        constants={},
        source='tests/fixtures/pir/while_cond/model.json'),
    '1.repeat_interleave': Signature(
        operands=('x',),
        attrs=(
            ('repeats', '0.a_i32', 2),
            ('axis', '0.a_i32', 1),
            ('output_size', '0.a_i64', -1),
        ),
        results=('0.t_dtensor',),
        constants={},
        source='tests/fixtures/pir/ops/misc/model.json'),
    '1.reshape': Signature(
        operands=('x', 'shape'),
        attrs=(),
        results=('0.t_dtensor',),
        constants={},
        source='tests/fixtures/pir/cnn/model.json'),
    '1.rnn': Signature(
        operands=('x', 'pre_state', 'weight_list', 'sequence_length', 'dropout_state_in'),
        attrs=(
            ('dropout_prob', '0.a_f32', 0.0),
            ('is_bidirec', '0.a_bool', True),
            ('input_size', '0.a_i32', 5),
            ('hidden_size', '0.a_i32', 6),
            ('num_layers', '0.a_i32', 1),
            ('mode', '0.a_str', 'GRU'),
            ('seed', '0.a_i32', 0),
            ('is_test', '0.a_bool', True),
        ),
        results=('0.t_dtensor', '0.t_dtensor', '0.t_vec', '0.t_dtensor'),
        constants={4: ('1.full', 'uint8', [])},
        source='tests/fixtures/pir/gru/model.json'),
    '1.roll': Signature(
        operands=('x', 'shifts'),
        attrs=(
            ('axis', '0.a_array:0.a_i64', [2]),
        ),
        results=('0.t_dtensor',),
        constants={1: ('1.full_int_array', 'int64', None)},
        source='tests/fixtures/pir/ops/roll_flip/model.json'),
    '1.round': Signature(
        operands=('x',),
        attrs=(
            ('decimals', '0.a_i32', 0),
        ),
        results=('0.t_dtensor',),
        constants={},
        source='tests/fixtures/pir/ops/math_unary/model.json'),
    '1.rsqrt': Signature(
        operands=('x',),
        attrs=(),
        results=('0.t_dtensor',),
        constants={},
        source='tests/fixtures/pir/ops/math_unary/model.json'),
    '1.scale': Signature(
        operands=('x', 'scale'),
        attrs=(
            ('bias', '0.a_f32', 0.0),
            ('bias_after_scale', '0.a_bool', True),
        ),
        results=('0.t_dtensor',),
        constants={1: ('1.full', 'float32', [1])},
        source='tests/fixtures/pir/if_layer/model.json'),
    '1.scatter': Signature(
        operands=('x', 'index', 'updates'),
        attrs=(
            ('overwrite', '0.a_bool', True),
        ),
        results=('0.t_dtensor',),
        constants={2: ('1.full', 'float32', [3, 5])},
        source='tests/fixtures/pir/ops/indexing_more/model.json'),
    '1.searchsorted': Signature(
        operands=('sorted_sequence', 'values'),
        attrs=(
            ('out_int32', '0.a_bool', False),
            ('right', '0.a_bool', False),
        ),
        results=('0.t_dtensor',),
        constants={},
        source='tests/fixtures/pir/ops/order_more/model.json'),
    '1.select_input': Signature(
        operands=(),
        attrs=(),
        results=('0.t_dtensor',),
        constants={},
        source="Paddle's translation of tests/fixtures/pir/if_layer/legacy/model.pdmodel"),
    '1.selu': Signature(
        operands=('x',),
        attrs=(
            ('scale', '0.a_f32', 1.0507010221481323),
            ('alpha', '0.a_f32', 1.6732631921768188),
        ),
        results=('0.t_dtensor',),
        constants={},
        source='tests/fixtures/pir/ops/act_param/model.json'),
    '1.sequence_mask': Signature(
        operands=('x', 'max_len'),
        attrs=(
            ('out_dtype', '1.a_dtype', 'float32'),
        ),
        results=('0.t_dtensor',),
        constants={1: ('1.full', 'int32', [1])},
        source='tests/fixtures/pir/ops/sequence_mask/model.json'),
    '1.shape': Signature(
        operands=('input',),
        attrs=(),
        results=('0.t_dtensor',),
        constants={},
        source="Paddle's translation of tests/fixtures/pir/gru/legacy/model.pdmodel"),
    '1.shape64': Signature(
        operands=('input',),
        attrs=(),
        results=('0.t_dtensor',),
        constants={},
        source='tests/fixtures/pir/gru/model.json'),
    '1.sigmoid': Signature(
        operands=('x',),
        attrs=(),
        results=('0.t_dtensor',),
        constants={},
        source='tests/fixtures/pir/ops/act_basic/model.json'),
    '1.sigmoid_cross_entropy_with_logits': Signature(
        operands=('x', 'label', 'pos_weight'),
        attrs=(
            ('normalize', '0.a_bool', False),
            ('ignore_index', '0.a_i32', -100),
        ),
        results=('0.t_dtensor',),
        constants={},
        source='tests/fixtures/pir/ops/losses_reg/model.json'),
    '1.sign': Signature(
        operands=('x',),
        attrs=(),
        results=('0.t_dtensor',),
        constants={},
        source='tests/fixtures/pir/ops/math_unary/model.json'),
    '1.silu': Signature(
        operands=('x',),
        attrs=(),
        results=('0.t_dtensor',),
        constants={},
        source='tests/fixtures/pir/ops/act_basic/model.json'),
    '1.sin': Signature(
        operands=('x',),
        attrs=(),
        results=('0.t_dtensor',),
        constants={},
        source='tests/fixtures/pir/ops/trigonometric/model.json'),
    '1.sinh': Signature(
        operands=('x',),
        attrs=(),
        results=('0.t_dtensor',),
        constants={},
        source='tests/fixtures/pir/ops/trigonometric/model.json'),
    '1.slice': Signature(
        operands=('input', 'starts', 'ends'),
        attrs=(
            ('axes', '0.a_array:0.a_i64', [0]),
            ('infer_flags', '0.a_array:0.a_i64', [1]),
            ('decrease_axis', '0.a_array:0.a_i64', [0]),
        ),
        results=('0.t_dtensor',),
        constants={
            1: ('1.full_int_array', 'int64', None),
            2: ('1.full_int_array', 'int64', None),
        },
        source='tests/fixtures/pir/gru/model.json'),
    '1.softmax': Signature(
        operands=('x',),
        attrs=(
            ('axis', '0.a_i32', -1),
        ),
        results=('0.t_dtensor',),
        constants={},
        source='tests/fixtures/pir/mlp/model.json'),
    '1.softplus': Signature(
        operands=('x',),
        attrs=(
            ('beta', '0.a_f64', 2.0),
            ('threshold', '0.a_f64', 10.0),
        ),
        results=('0.t_dtensor',),
        constants={},
        source='tests/fixtures/pir/ops/act_param/model.json'),
    '1.softshrink': Signature(
        operands=('x',),
        attrs=(
            ('threshold', '0.a_f32', 0.4000000059604645),
        ),
        results=('0.t_dtensor',),
        constants={},
        source='tests/fixtures/pir/ops/act_hard/model.json'),
    '1.softsign': Signature(
        operands=('x',),
        attrs=(),
        results=('0.t_dtensor',),
        constants={},
        source='tests/fixtures/pir/ops/act_basic/model.json'),
    '1.split': Signature(
        operands=('x', 'sections', 'axis'),
        attrs=(),
        results=('0.t_vec',),
        constants={1: ('1.full_int_array', 'int64', None), 2: ('1.full', 'int32', [1])},
        source='tests/fixtures/pir/ops/concat_split/model.json'),
    '1.split_with_num': Signature(
        operands=('x', 'axis'),
        attrs=(
            ('num', '0.a_i32', 2),
        ),
        results=('0.t_vec',),
        constants={1: ('1.full', 'int32', [1])},
        source='tests/fixtures/pir/ops/concat_split/model.json'),
    '1.sqrt': Signature(
        operands=('x',),
        attrs=(),
        results=('0.t_dtensor',),
        constants={},
        source='tests/fixtures/pir/ops/math_unary/model.json'),
    '1.square': Signature(
        operands=('x',),
        attrs=(),
        results=('0.t_dtensor',),
        constants={},
        source='tests/fixtures/pir/ops/act_basic/model.json'),
    '1.squeeze': Signature(
        operands=('x', 'axis'),
        attrs=(),
        results=('0.t_dtensor',),
        constants={1: ('1.full_int_array', 'int64', None)},
        source='tests/fixtures/pir/ops/conv/model.json'),
    '1.stack': Signature(
        operands=('x',),
        attrs=(
            ('axis', '0.a_i32', 0),
        ),
        results=('0.t_dtensor',),
        constants={},
        source='tests/fixtures/pir/gru/model.json'),
    '1.strided_slice': Signature(
        operands=('x', 'starts', 'ends', 'strides'),
        attrs=(
            ('axes', '0.a_array:0.a_i32', [0, 1]),
        ),
        results=('0.t_dtensor',),
        constants={
            1: ('1.full_int_array', 'int64', None),
            2: ('1.full_int_array', 'int64', None),
            3: ('1.full_int_array', 'int64', None),
        },
        source='tests/fixtures/pir/ops/slicing/model.json'),
    '1.subtract': Signature(
        operands=('x', 'y'),
        attrs=(),
        results=('0.t_dtensor',),
        constants={},
        source='tests/fixtures/pir/while_cond/model.json'),
    '1.sum': Signature(
        operands=('x', 'axis'),
        attrs=(
            ('dtype', '1.a_dtype', 'Undefined(ALL_DTYPE)'),
            ('keepdim', '0.a_bool', False),
        ),
        results=('0.t_dtensor',),
        constants={1: ('1.full_int_array', 'int64', None)},
        source='tests/fixtures/pir/transformer/model.json'),
    '1.swish': Signature(
        operands=('x',),
        attrs=(),
        results=('0.t_dtensor',),
        constants={},
        source='tests/fixtures/pir/ops/act_misc/model.json'),
    '1.take_along_axis': Signature(
        operands=('arr', 'indices'),
        attrs=(
            ('axis', '0.a_i32', 1),
        ),
        results=('0.t_dtensor',),
        constants={},
        source='tests/fixtures/pir/ops/gather/model.json'),
    '1.tan': Signature(
        operands=('x',),
        attrs=(),
        results=('0.t_dtensor',),
        constants={},
        source='tests/fixtures/pir/ops/trigonometric/model.json'),
    '1.tanh': Signature(
        operands=('x',),
        attrs=(),
        results=('0.t_dtensor',),
        constants={},
        source='tests/fixtures/pir/ops/act_basic/model.json'),
    '1.tanh_shrink': Signature(
        operands=('x',),
        attrs=(),
        results=('0.t_dtensor',),
        constants={},
        source='tests/fixtures/pir/ops/act_misc/model.json'),
    '1.thresholded_relu': Signature(
        operands=('x',),
        attrs=(
            ('threshold', '0.a_f32', 0.30000001192092896),
            ('value', '0.a_f32', 0.0),
        ),
        results=('0.t_dtensor',),
        constants={},
        source='tests/fixtures/pir/ops/act_misc/model.json'),
    '1.tile': Signature(
        operands=('x', 'repeat_times'),
        attrs=(),
        results=('0.t_dtensor',),
        constants={1: ('1.full_int_array', 'int64', None)},
        source='tests/fixtures/pir/ops/tile_expand/model.json'),
    '1.topk': Signature(
        operands=('x', 'k'),
        attrs=(
            ('axis', '0.a_i32', -1),
            ('largest', '0.a_bool', True),
            ('sorted', '0.a_bool', True),
        ),
        results=('0.t_dtensor', '0.t_dtensor'),
        constants={1: ('1.full', 'int32', [1])},
        source='tests/fixtures/pir/ops/arg_topk_sort/model.json'),
    '1.trace': Signature(
        operands=('x',),
        attrs=(
            ('offset', '0.a_i32', 0),
            ('axis1', '0.a_i32', 0),
            ('axis2', '0.a_i32', 1),
        ),
        results=('0.t_dtensor',),
        constants={},
        source='tests/fixtures/pir/ops/math_more/model.json'),
    '1.transpose': Signature(
        operands=('x',),
        attrs=(
            ('perm', '0.a_array:0.a_i32', [1, 0, 2]),
        ),
        results=('0.t_dtensor',),
        constants={},
        source='tests/fixtures/pir/gru/model.json'),
    '1.tril': Signature(
        operands=('x',),
        attrs=(
            ('diagonal', '0.a_i32', 0),
        ),
        results=('0.t_dtensor',),
        constants={},
        source='tests/fixtures/pir/ops/tril_triu/model.json'),
    '1.triu': Signature(
        operands=('x',),
        attrs=(
            ('diagonal', '0.a_i32', 1),
        ),
        results=('0.t_dtensor',),
        constants={},
        source='tests/fixtures/pir/ops/attention/model.json'),
    '1.trunc': Signature(
        operands=('input',),
        attrs=(),
        results=('0.t_dtensor',),
        constants={},
        source='tests/fixtures/pir/ops/math_unary2/model.json'),
    '1.unbind': Signature(
        operands=('input',),
        attrs=(
            ('axis', '0.a_i32', 2),
        ),
        results=('0.t_vec',),
        constants={},
        source='tests/fixtures/pir/ops/concat_split/model.json'),
    '1.unfold': Signature(
        operands=('x',),
        attrs=(
            ('kernel_sizes', '0.a_array:0.a_i32', [2, 2]),
            ('strides', '0.a_array:0.a_i32', [1, 1]),
            ('paddings', '0.a_array:0.a_i32', [0, 0, 0, 0]),
            ('dilations', '0.a_array:0.a_i32', [1, 1]),
        ),
        results=('0.t_dtensor',),
        constants={},
        source='tests/fixtures/pir/ops/nn_more/model.json'),
    '1.unsqueeze': Signature(
        operands=('x', 'axis'),
        attrs=(),
        results=('0.t_dtensor',),
        constants={1: ('1.full_int_array', 'int64', None)},
        source='tests/fixtures/pir/transformer/model.json'),
    '1.unstack': Signature(
        operands=('x',),
        attrs=(
            ('axis', '0.a_i32', 1),
            ('num', '0.a_i32', 3),
        ),
        results=('0.t_vec',),
        constants={},
        source='tests/fixtures/pir/ops/shape_more/model.json'),
    '1.where': Signature(
        operands=('condition', 'x', 'y'),
        attrs=(),
        results=('0.t_dtensor',),
        constants={},
        source='tests/fixtures/pir/ops/order_more/model.json'),
    '1.while': Signature(
        operands=(),
        attrs=(),
        results=('0.t_dtensor', '0.t_dtensor'),
        constants={},
        source='tests/fixtures/pir/while_cond/model.json'),
    '2.yield': Signature(
        operands=(),
        attrs=(),
        results=(),
        constants={},
        source='tests/fixtures/pir/if_layer/model.json'),
}
