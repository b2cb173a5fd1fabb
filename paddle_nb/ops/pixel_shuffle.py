"""pixel_shuffle, pixel_unshuffle and channel_shuffle, and their gradients (Fluid's slots
and attributes, as ``F.pixel_shuffle``, ``F.pixel_unshuffle`` and ``F.channel_shuffle``
save them).

All three move elements between the channel dim and the spatial dims without computing
anything, and each is the same three steps: X seen as a finer shape (a reshape, no copy),
those dims permuted (one copy: ``arrays.transpose``, numpy on the CPU, a CUDA copy kernel
on the device), and the result seen as Out's shape. With r the factor and g the groups
(NCHW; NHWC keeps the channels last):

- pixel_shuffle: [N, C*r*r, H, W] -> [N, C, r, r, H, W] -> [N, C, H, r, W, r]
  -> [N, C, H*r, W*r] (each group of r*r channels becomes an r x r block of pixels);
- pixel_unshuffle: its inverse, [N, C, H*r, W*r] -> [N, C*r*r, H, W];
- channel_shuffle: [N, C, H, W] -> [N, g, C/g, H, W] -> [N, C/g, g, H, W] -> [N, C, H, W].

A permutation's gradient is the inverse permutation, which is again one of these: dX of
pixel_shuffle is pixel_unshuffle of dOut (and back), dX of channel_shuffle with g groups is
channel_shuffle of dOut with C/g groups. Paddle's gradient ops read Out@GRAD alone.
"""
from __future__ import annotations

from ..core import attrs as A
from ..core.grad_maker import Grad
from ..core.registry import Attr, OpDef, register
from . import arrays
from .batch_norm import require_float
from ..kernels.cpu.layout import block_groups, shuffled
from ..kernels.lowered import Call
from .common import OUT, X, build_fail, numba_holds, run_fail

FORMATS = ("NCHW", "NHWC")


def _format_check(value):
    return None if value in FORMATS else f"expected one of {', '.join(FORMATS)}"


def _positive(value):
    if isinstance(value, int) and not isinstance(value, bool) and value <= 0:
        return "expected a positive integer"
    return None


def _split(total: int, factor: int) -> int:
    return total // factor if total >= 0 else -1


def plan(op_type: str, shape, factor: int, data_format: str, fail):
    """(view, perm, out): X [rank 4] seen as ``view``, permuted by ``perm``, seen as
    ``out``; -1 (unknown at build time) stays -1. ``fail(message, expected, given)``."""
    if len(shape) != 4:
        fail(f"{op_type} takes 4-D images", "a rank-4 X", f"shape {list(shape)}")
    if factor <= 0:
        fail("the factor must be positive", "a factor > 0", f"{factor}")
    nchw = data_format == "NCHW"
    n, c, h, w = (shape[0], shape[1], shape[2], shape[3]) if nchw else \
        (shape[0], shape[3], shape[1], shape[2])
    r = factor
    if op_type == "pixel_shuffle":
        if c >= 0 and c % (r * r):
            fail("the channels must split into upscale_factor**2 groups",
                 f"channels divisible by {r * r}", f"{c} channels")
        oc, oh, ow = _split(c, r * r), h * r if h >= 0 else -1, w * r if w >= 0 else -1
        view = [n, oc, r, r, h, w] if nchw else [n, h, w, oc, r, r]
        perm = [0, 1, 4, 2, 5, 3] if nchw else [0, 1, 4, 2, 5, 3]
        out = [n, oc, oh, ow] if nchw else [n, oh, ow, oc]
    elif op_type == "pixel_unshuffle":
        for name, d in (("height", h), ("width", w)):
            if d >= 0 and d % r:
                fail(f"the {name} must be a multiple of downscale_factor",
                     f"a {name} divisible by {r}", f"{name} {d}")
        oh, ow, oc = _split(h, r), _split(w, r), c * r * r if c >= 0 else -1
        view = [n, c, oh, r, ow, r] if nchw else [n, oh, r, ow, r, c]
        perm = [0, 1, 3, 5, 2, 4] if nchw else [0, 1, 3, 5, 2, 4]
        out = [n, oc, oh, ow] if nchw else [n, oh, ow, oc]
    else:                                            # channel_shuffle, r = groups
        if c >= 0 and c % r:
            fail("the channels must split into groups", f"channels divisible by {r}",
                 f"{c} channels")
        view = [n, r, _split(c, r), h, w] if nchw else [n, h, w, r, _split(c, r)]
        perm = [0, 2, 1, 3, 4] if nchw else [0, 1, 2, 4, 3]
        out = list(shape)
    return view, perm, out


def _factor(ctx, op_type: str) -> int:
    return int(ctx.attr({"pixel_shuffle": "upscale_factor", "pixel_unshuffle":
                         "downscale_factor", "channel_shuffle": "groups"}[op_type]))


def _inverse(op_type: str, factor: int, shape, data_format: str):
    """(the op, factor) whose plan undoes ``op_type``'s, given the OUT shape it made."""
    if op_type == "channel_shuffle":
        c = shape[1] if data_format == "NCHW" else shape[-1]
        return "channel_shuffle", (c // factor if c >= 0 and factor > 0 else 1)
    return ("pixel_unshuffle" if op_type == "pixel_shuffle" else "pixel_shuffle"), factor


def _infer(op_type: str):
    def infer(ctx):
        require_float(ctx, "X")
        fail = build_fail(ctx, "X")
        _, _, out = plan(op_type, ctx.shape("X"), _factor(ctx, op_type),
                         ctx.attr("data_format"), fail)
        ctx.set_output("Out", out, ctx.dtype("X"))
    return infer


def _grad_infer(op_type: str):
    """X@GRAD has the shape the inverse plan gives dOut (Paddle's grad op reads no X)."""
    def infer(ctx):
        require_float(ctx, "Out@GRAD")
        shape = ctx.shape("Out@GRAD")
        fail = build_fail(ctx, "Out@GRAD")
        if len(shape) != 4:
            fail(f"{op_type}_grad takes a 4-D Out@GRAD", "rank 4", f"shape {list(shape)}")
        back, factor = _inverse(op_type, _factor(ctx, op_type), shape,
                                ctx.attr("data_format"))
        _, _, dx = plan(back, shape, factor, ctx.attr("data_format"), fail)
        ctx.set_output("X@GRAD", dx, ctx.dtype("Out@GRAD"))
    return infer


def rearranged(op_type: str, x, factor: int, data_format: str):
    """x moved by ``op_type``'s plan: a reshape, one permuting copy, a reshape."""
    view, perm, out = plan(op_type, [int(d) for d in x.shape], factor, data_format,
                           run_fail(op_type))
    return arrays.transpose(x.reshape(tuple(view)), perm).reshape(tuple(out))


def _kernel(op_type: str):
    def run(ctx):
        ctx.set_output("Out", rearranged(op_type, ctx.input("X"), _factor(ctx, op_type),
                                         ctx.attr("data_format")))
    return run


def _grad_kernel(op_type: str):
    def run(ctx):
        dout = ctx.input("Out@GRAD")
        fmt = ctx.attr("data_format")
        back, factor = _inverse(op_type, _factor(ctx, op_type),
                                [int(d) for d in dout.shape], fmt)
        ctx.set_output("X@GRAD", rearranged(back, dout, factor, fmt))
    return run


# --- in a compiled block (kernels/lowered.py): kernels/cpu/layout.shuffled --------------------
def _lowered(op_type: str, grad: bool):
    """The plan for the shape the interpreter's run saw, its views as groups of the dims
    before them (layout.block_groups): the batch and the image's sizes are read when the
    block runs, the channel splits and the factor are in the source."""
    def lowered(info):
        src, dst = ("Out@GRAD", "X@GRAD") if grad else ("X", "Out")
        if not numba_holds(info.dtype(src)) or info.ndim(src) != 4:
            return None
        fmt, shape = info.attr("data_format"), [int(d) for d in info.shape(src)]
        kind, factor = op_type, _factor(info, op_type)
        if grad:
            kind, factor = _inverse(op_type, factor, shape, fmt)
        view, perm, out = plan(kind, shape, factor, fmt, run_fail(kind))
        moved = [view[p] for p in perm]
        return Call(shuffled, (src,), (dst,),
                    (block_groups(shape, view), len(view), tuple(perm),
                     block_groups(moved, out), len(out)))
    return lowered


def _declare(op_type: str, factor: Attr, format_default: str, comment: str) -> None:
    kernel, grad = _kernel(op_type), _grad_kernel(op_type)
    register(OpDef(
        op_type, [X], [OUT],
        [factor, Attr("data_format", A.STRING, format_default,
                      "NCHW (channels second) or NHWC (channels last)", check=_format_check)],
        comment=comment, infer_shape=_infer(op_type),
        kernels={"cpu": kernel, "cuda": kernel}, lowered=_lowered(op_type, grad=False),
        grad=Grad(reads=[], grads_of=["Out"], writes=["X"], kernel=grad, cuda_kernel=grad,
                  infer_shape=_grad_infer(op_type), lowered=_lowered(op_type, grad=True))))


_declare("pixel_shuffle",
         Attr("upscale_factor", A.INT, 1, "r: each r*r channels become an r x r block",
              check=_positive), "NCHW",
         "Out = X's channels in groups of r*r rearranged into r x r blocks of pixels "
         "([N, C*r*r, H, W] -> [N, C, H*r, W*r]).")
_declare("pixel_unshuffle",
         Attr("downscale_factor", A.INT, 1, "r: each r x r block becomes r*r channels",
              check=_positive), "NCHW",
         "Out = X's r x r blocks of pixels rearranged into channels ([N, C, H*r, W*r] -> "
         "[N, C*r*r, H, W]); pixel_shuffle's inverse.")
_declare("channel_shuffle",
         Attr("groups", A.INT, 1, "the number of channel groups interleaved",
              check=_positive), "NCHW",
         "Out = X's channels, in groups, interleaved: channel i*(C/g) + j goes to "
         "j*g + i.")
