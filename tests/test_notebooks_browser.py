"""Every teaching notebook opened in JupyterLab (and two in Notebook 7) in headless
Chromium, as a student would:
Run All Cells with the exercises unanswered. Each must run to its last cell, and each
widget it shows is screenshotted (``screenshots/nb<NN>_*.png``) for a person to look at.

Slow (a minute or more per notebook): ``python -m pytest -m slow tests/test_notebooks_browser.py``.
"""
from __future__ import annotations

import os
import shutil

import pytest

import lab_browser
import notebook_runner as runner

pytestmark = [
    pytest.mark.browser, pytest.mark.slow,
    pytest.mark.skipif(not os.path.exists(lab_browser.CHROMIUM),
                       reason="needs Debian's chromium (.ci/run installs it)"),
]
NOTEBOOKS = sorted(p.name for p in runner.NOTEBOOKS.glob("*.ipynb"))

# Every code cell shows an execution count once it ran: Run All stops at an error, so a
# cell without a count after the run means the notebook broke there.
ALL_RAN = """() => {
  const prompts = [...document.querySelectorAll('.jp-Notebook .jp-CodeCell .jp-InputPrompt')];
  return prompts.length > 0 && prompts.every((p) => /\\[\\d+\\]/.test(p.textContent));
}"""


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    root = tmp_path_factory.mktemp("course")
    shutil.copytree(runner.NOTEBOOKS, root / "notebooks")   # Lab saves into its copy
    with lab_browser.server(root) as url:
        yield url


@pytest.fixture(scope="module")
def browser_page():
    with lab_browser.browser_page(height=1200) as pg:
        yield pg


@pytest.fixture
def page(lab, browser_page):
    yield browser_page
    lab_browser.shut_down_kernels(lab)        # one notebook's kernel at a time


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_notebook_runs_in_jupyterlab_and_shows_its_widgets(lab, page, name):
    lab_browser.open_and_run_all(page, lab, f"notebooks/{name}", workspace=f"nb{name[:2]}")
    _ran_and_shows_widgets(page, name, f"nb{name[:2]}")


# The README promises JupyterLab 4 or Notebook 7: the [notebook] extra installs both, and
# Notebook 7 (the same server, /notebooks/) runs the notebooks whose widgets differ most:
# the live symbol table and program view (1), the debugger and the training curve (3).
@pytest.mark.parametrize("name", [n for n in NOTEBOOKS if n[:2] in ("01", "03")])
def test_notebook_runs_in_notebook_7_and_shows_its_widgets(lab, page, name):
    lab_browser.open_and_run_all(page, lab, f"notebooks/{name}", app="notebook")
    _ran_and_shows_widgets(page, name, f"nb7_{name[:2]}")


def _ran_and_shows_widgets(page, name: str, prefix: str) -> None:
    """Every code cell ran, each widget drew (screenshotted), no traceback on the page."""
    try:
        page.wait_for_function(ALL_RAN, timeout=240000, polling=1000)
    except Exception:
        lab_browser.shot(page, f"{prefix}_failed.png")
        raise
    page.wait_for_timeout(1500)            # let the widgets draw
    lab_browser.shot(page, f"{prefix}_top.png")
    outputs = page.query_selector_all(".jp-Cell-outputArea:has(.pd-widget)")
    assert outputs, f"{name}: no paddle_nb widget drew"
    for i, area in enumerate(outputs):
        area.scroll_into_view_if_needed()
        page.wait_for_timeout(300)
        area.screenshot(path=str(lab_browser.SHOTS / f"{prefix}_widget{i}.png"))
    errors = page.query_selector_all(".jp-OutputArea-output[data-mime-type="
                                     "'application/vnd.jupyter.stderr'] >> text=Traceback")
    assert not errors, f"{name}: a traceback in the page"
