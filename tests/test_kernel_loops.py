"""The loops kernels are generated or launched with: kernels/cpu/twins.py (a serial and a
``prange`` loop around one item's body), kernels/place_loops.py (a CPU loop and a CUDA
kernel around one item's body) and kernels/cuda/device.launch (every CUDA launch)."""
from __future__ import annotations

import numpy as np
import pytest
from numba.core.caching import NullCache

from paddle_nb.kernels import ctc, place_loops
from paddle_nb.kernels.cpu import direct_conv, reduce, twins
from paddle_nb.kernels.cuda import device


def test_twins_generate_the_two_loops_around_one_body():
    serial, parallel = reduce._row_sum_serial, reduce._row_sum_parallel
    assert serial.py_func.source == (
        "def _row_sum_serial(a):\n"
        "    out = np.empty(a.shape[0], dtype=a.dtype)\n"
        "    for i in range(a.shape[0]):\n"
        "        BODY(a, out, i)\n"
        "    return out")
    assert "for i in prange(a.shape[0]):" in parallel.py_func.source
    assert parallel.targetoptions["parallel"] and not serial.targetoptions.get("parallel")
    assert serial.targetoptions["fastmath"] == reduce._sum_row.targetoptions["fastmath"]
    a = np.arange(12, dtype=np.float64).reshape(3, 4)
    np.testing.assert_array_equal(serial(a), a.sum(axis=1))
    np.testing.assert_array_equal(parallel(a), a.sum(axis=1))


def test_a_scratch_array_is_made_once_serially_and_once_per_item_in_parallel():
    serial = direct_conv._input_grad_serial.py_func.source.splitlines()
    parallel = direct_conv._input_grad_parallel.py_func.source.splitlines()
    assert serial[1].strip().startswith("acc = np.empty") and "range(" in serial[2]
    assert "prange(" in parallel[1] and parallel[2].strip().startswith("acc = np.empty")


def test_twins_refuse_a_body_they_cannot_inline_or_feed():
    with pytest.raises(ValueError, match="must be @njit\\(inline='always'\\)"):
        twins.twins(reduce._row_sum_serial, "_x", items="a.shape[0]")
    with pytest.raises(ValueError, match="no parameter 'buffer'"):
        twins.twins(reduce._sum_row, "_x", items="a.shape[0]",
                    allocate={"buffer": "np.empty(1)"})


def test_place_loops_generate_a_cpu_loop_and_a_cuda_kernel_around_one_body():
    assert ctc.ctc_batch.py_func.source == (
        "def ctc_batch(logits, labels, steps, lengths, blank, logp, alpha, beta, grad, loss):\n"
        "    for b in range(logits.shape[1]):\n"
        "        BODY(logits, labels, steps, lengths, blank, logp, alpha, beta, grad, loss, b)")
    assert ("for b in range(cuda.grid(1), logits.shape[1], cuda.gridsize(1)):"
            in ctc.ctc_kernel.py_func.source)
    assert ctc.ctc_kernel.py_func.__qualname__ == "ctc_kernel"    # the compile test's key
    assert ctc.ctc_batch.targetoptions["error_model"] == "numpy"
    assert not isinstance(ctc.ctc_batch._cache, NullCache)
    grad, dloss = np.arange(6, dtype=np.float64), np.array([2.0, 3.0])
    out = np.empty(6)
    ctc.scale_by_sequence(grad, dloss, np.array([1, 2]), True, 2, 3, out)
    np.testing.assert_array_equal(out, grad * np.repeat(dloss / [1, 2], 3))
    out = device.empty((6,), np.float64)
    device.launch(ctc.scale_by_sequence_kernel, 6, device.to_device(grad),
                  device.to_device(dloss), device.to_device(np.array([1, 2])), True, 2, 3, out)
    np.testing.assert_array_equal(device.to_host(out), grad * np.repeat(dloss / [1, 2], 3))


def test_place_loops_refuse_a_compiled_body():
    with pytest.raises(ValueError, match="must be a register_jitable function"):
        place_loops.place_loops(reduce._sum_row, "a.shape[0]", "_x", "_y")


class _Kernel:
    """Stands in for a CUDA kernel: records the grid it was launched on."""
    def __init__(self):
        self.grids = []

    def __getitem__(self, grid):
        self.grids.append(grid)
        return lambda *args: None


def test_launch_runs_a_kernel_on_launch_1ds_grid_and_skips_an_empty_one():
    kernel = _Kernel()
    device.launch(kernel, 0, "unused")
    assert kernel.grids == []                 # CUDA refuses a grid of 0 blocks
    device.launch(kernel, 1000, "args")
    assert kernel.grids == [device.launch_1d(1000)]
