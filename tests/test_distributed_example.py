"""``python -m paddle_nb distributed`` (paddle_nb/examples/distributed_digits.py): the digits
MLP trained in one process and by 2 trainers x 2 pservers on a local Ray cluster prints a
report in which the two agree, and the distributed model classifies the held-out digits;
without ray the command says what to install, in one line."""
from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ACCURACY = 0.90        # measured: 95.0% after the 40 Adam steps (seed 0)


def _run(*args: str, code: str | None = None, timeout: float = 240):
    cmd = [sys.executable, "-c", code] if code else [sys.executable, "-m", "paddle_nb", *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=ROOT)


def test_distributed_command_prints_equal_parameters_and_the_accuracy():
    pytest.importorskip("ray", reason="the Ray runtime needs the [distributed] extra")
    done = _run("distributed")
    assert done.returncode == 0, done.stderr[-3000:]
    out = done.stdout
    rows = re.findall(r"^\s*(\d+)\s+([\d.]+)\s+([\d.]+)\s+(\S+)$", out, re.M)
    assert [int(r[0]) for r in rows] == [1, 6, 11, 16, 21, 26, 31, 36, 40], out
    for _, single, distributed, _ in rows:                   # the same loss curve
        assert abs(float(single) - float(distributed)) < 1e-5, out
    assert float(rows[-1][1]) < 0.5 * float(rows[0][1]), out  # and it goes down
    diff = float(re.search(r"max \|parameter difference\| \(a\) vs \(b\): (\S+)", out)[1])
    assert diff < 1e-5, out
    accuracy = float(re.search(r"test accuracy of \(b\): ([\d.]+)%", out)[1]) / 100
    assert accuracy > ACCURACY, out
    assert "Traceback" not in done.stderr


def test_distributed_command_without_ray_says_what_to_install():
    code = ("import sys; sys.modules['ray'] = None\n"      # import ray: ImportError
            "from paddle_nb.__main__ import main; sys.exit(main(['distributed']))")
    done = _run(code=code, timeout=120)
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert "pip install 'paddle_nb[distributed]'" in done.stderr
    assert "Traceback" not in done.stderr and done.stdout == ""
