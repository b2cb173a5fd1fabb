"""Values in the coverage table that Paddle 2.6.2 computed wrongly.

The table holds what real Paddle fetched; for the values below Paddle's own number is
wrong, so they are not compared with it (``run.py``): the API counts as covered when every
other value matches, and its outcome names the value left out and why. Each entry is
proved wrong, and ours right, by central differences of the program's own loss in
tests/test_coverage_paddle_wrong.py, so an entry cannot outlive the bug (if ours drifted
from central differences, or Paddle's value were right, that test fails).

Found with ``python -m paddle_nb coverage`` and judged by central differences:

- ``paddle.trapezoid`` / ``paddle.cumulative_trapezoid`` slice y with ``gather(axis=1)``,
  and Paddle 2.6.2's ``gather_grad`` along axis 1 gives every outer row the gradient of
  row 0 (the same bug as tests/test_paddle_fixtures.py's gather fixture shows): y@GRAD's
  second row repeats its first.
- ``paddle.static.nn.group_norm`` as the table's call saves it, without Scale and Bias:
  Paddle 2.6.2's ``group_norm_grad`` without Scale gives a wrong X@GRAD (off by up to
  0.98 here; the fixture test of the same case is
  ``test_paddles_group_norm_gradient_without_scale_is_wrong_and_ours_is_not``).
- ``nn.SpectralNorm`` / ``static.nn.spectral_norm``: Paddle 2.6.2's ``spectral_norm_grad``
  computes dOut * (1 - u v^T * sum(W / sigma)) / sigma elementwise, which is not the
  derivative of W / sigma with or without the power iteration's dependence on W (off by
  up to 3.9 here).
"""
from __future__ import annotations

GATHER_AXIS_1 = ("Paddle 2.6.2's gather_grad along axis 1 repeats row 0's gradient in "
                 "every row")
GROUP_NORM_NO_SCALE = "Paddle 2.6.2's group_norm_grad without Scale is wrong"
SPECTRAL_NORM_GRAD = ("Paddle 2.6.2's spectral_norm_grad is dOut * (1 - u v^T * "
                      "sum(W / sigma)) / sigma, no derivative (ops/spectral_norm.py)")

# API key -> {fetched variable: why Paddle's value is wrong}
PADDLE_WRONG: dict[str, dict[str, str]] = {
    "tensor.math.trapezoid": {"y@GRAD": GATHER_AXIS_1},
    "tensor.math.cumulative_trapezoid": {"y@GRAD": GATHER_AXIS_1},
    "static.nn.group_norm": {"x@GRAD": GROUP_NORM_NO_SCALE},
    # spectral_norm (ops/spectral_norm.py)
    "nn.SpectralNorm": {"x@GRAD": SPECTRAL_NORM_GRAD},
    "static.nn.spectral_norm": {"weight@GRAD": SPECTRAL_NORM_GRAD},
}


def wrong_in_paddle(key: str) -> dict[str, str]:
    """The fetched values of API ``key`` whose Paddle value is known wrong, with why."""
    return PADDLE_WRONG.get(key, {})


def note(key: str) -> str:
    """One line for an outcome: the values left out of the comparison, and why."""
    wrong = wrong_in_paddle(key)
    return "; ".join(f"Paddle's {name} not compared: {why} (central differences agree "
                     f"with ours)" for name, why in wrong.items())
