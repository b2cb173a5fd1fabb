"""The tree passes ruff (pyproject.toml's [tool.ruff]): pyflakes' errors, line lengths, and
every import inside a function marked with why (PLC0415). The pre-commit hook runs the same
check on each commit (.pre-commit-config.yaml); this test is what CI sees."""
from __future__ import annotations

import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _ruff() -> str:
    """ruff from this interpreter's environment (the [dev] extra installs it)."""
    path = os.path.join(os.path.dirname(sys.executable), "ruff")
    assert os.path.exists(path), (f"ruff is not installed beside {sys.executable}: "
                                  f'pip install -e ".[dev]" installs it')
    return path


def test_the_tree_passes_ruff():
    result = subprocess.run([_ruff(), "check", "--output-format", "concise", "."], cwd=ROOT,
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
