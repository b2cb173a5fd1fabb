"""The README as a newcomer meets it: its commands work as written where they run (as root
in a container too) and it says how long the tests take. (Its Python blocks run in
test_first_hour.py and, the training recipe, in test_paddle_recipes.py.)"""
from __future__ import annotations

import os
import re
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"


def _bash_blocks() -> list[str]:
    return re.findall(r"```bash\n(.*?)```", README.read_text(), flags=re.S)


def test_the_readme_says_how_long_the_test_suite_takes():
    text = " ".join(README.read_text().split())
    assert re.search(r"test suite[^.]*takes about \d+ minutes", text), \
        "say how long the README's test command takes, and on what machine"


@pytest.mark.skipif(os.geteuid() != 0, reason="the root case needs root")
def test_the_course_command_starts_as_root_with_the_flag_the_readme_gives(tmp_path):
    """Jupyter exits at once as root (common in containers); the README says what to add."""
    setup = next(b for b in _bash_blocks() if "jupyter lab" in b)
    jupyter_part = setup.strip().split("&&")[-1].split()
    assert jupyter_part[:3] == [".venv/bin/jupyter", "lab", "notebooks/"]
    assert "--allow-root" in README.read_text()
    command = [str(Path(sys.executable).parent / "jupyter"), "lab", str(ROOT / "notebooks"),
               "--allow-root", "--no-browser", "--port=18931", "--ServerApp.token=t",
               f"--ServerApp.root_dir={ROOT / 'notebooks'}"]
    env = dict(os.environ, JUPYTER_RUNTIME_DIR=str(tmp_path),
               JUPYTERLAB_WORKSPACES_DIR=str(tmp_path))
    server = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            assert server.poll() is None, server.stderr.read().decode()[-2000:]
            try:
                with urllib.request.urlopen("http://127.0.0.1:18931/api/status?token=t",
                                            timeout=2) as answer:
                    assert answer.status == 200
                    return
            except OSError:
                time.sleep(0.5)
        pytest.fail("the server did not answer within 120 s")
    finally:
        server.terminate()
        server.wait(timeout=30)
