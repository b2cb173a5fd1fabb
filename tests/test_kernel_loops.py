"""The loops kernels are generated or launched with: kernels/cpu/twins.py (a serial and a
``prange`` loop around one item's body) and kernels/cuda/device.launch (every CUDA launch)."""
from __future__ import annotations

import numpy as np
import pytest

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
