"""row_conv on the device: kernels/cpu/row_conv.py's scalar functions (read it first), one
thread per value written (each sums its own taps: no atomics)."""
from __future__ import annotations

from numba import cuda

from ..cpu import row_conv as cpu
from .device import empty, launch

# compiled as device functions from their Python code (numba's CUDA simulator cannot hand
# its arrays to a CPU-compiled function)
out_at = cuda.jit(device=True)(cpu.out_at.py_func)
dx_at = cuda.jit(device=True)(cpu.dx_at.py_func)
dfilter_at = cuda.jit(device=True)(cpu.dfilter_at.py_func)


@cuda.jit(cache=True)
def _each_position(a, w, backward, out):
    """kernels/cpu/row_conv.py's each_position, one thread per position."""
    steps, dims = out.shape[1], out.shape[2]
    for k in range(cuda.grid(1), out.size, cuda.gridsize(1)):
        b, rest = k // (steps * dims), k % (steps * dims)
        t, d = rest // dims, rest % dims
        out[b, t, d] = dx_at(a, w, b, t, d) if backward else out_at(a, w, b, t, d)


@cuda.jit(cache=True)
def _row_conv_dfilter(x, dout, dw):
    dims = dw.shape[1]
    for k in range(cuda.grid(1), dw.size, cuda.gridsize(1)):
        dw[k // dims, k % dims] = dfilter_at(x, dout, k // dims, k % dims)


def _launch(kernel, shape, dtype, *args):
    out = empty(tuple(int(d) for d in shape), dtype)
    launch(kernel, out.size, *args, out)
    return out


def row_conv(x, w):
    return _launch(_each_position, x.shape, x.dtype, x, w, False)


def row_conv_dx(dout, w):
    return _launch(_each_position, dout.shape, dout.dtype, dout, w, True)


def row_conv_dfilter(x, dout, filter_shape):
    return _launch(_row_conv_dfilter, filter_shape, x.dtype, x, dout)
