"""The JupyterLab extension in a real browser (JupyterLab 4 and Notebook 7 on one server,
Debian's headless Chromium driven by Playwright). In each app: the Paddle inspector in the
right sidebar follows a notebook's cells one by one; a model PaddlePaddle saved opens from
the file browser as a program tab (a click in its graph selects an op); its "Open in a
notebook" button writes a notebook whose debugger steps the model forward three ops and
back two, the values checked at each stop; and the sidebar follows that debugger.
Screenshots land in ``screenshots/inspector_*.png``."""
from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

import lab_browser
from browser_layout import assert_nothing_clipped, assert_stats_on_one_line, cut_lines
from lab_browser import CHROMIUM, click_and_wait, shot

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not os.path.exists(CHROMIUM),
                       reason="needs Debian's chromium (.ci/run installs it)"),
]

CNN = Path(__file__).resolve().parent.parent / "notebooks" / "data" / "paddle_cnn"
CELLS = [
    "import paddle_nb as pd\n%load_ext paddle_nb",
    "%%paddle\nx = pd.data('x', [None, 4])\nh = pd.layer.fc(x, 3, act='relu')",
    "%%paddle\nscore = pd.layer.fc(h, 2)\nloss = pd.layer.mean(score)",
]
SIDEBAR_TAB = ".jp-SideBar.jp-mod-right .lm-TabBar-tab[title='Paddle inspector']"
PANEL = ".pd-inspector-panel"


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    root = tmp_path_factory.mktemp("inspector")
    lab_browser.write_notebook(root / "follow.ipynb", CELLS)
    lab_browser.write_notebook(root / "follow_nb7.ipynb", CELLS)
    shutil.copytree(CNN, root / "cnn")
    with lab_browser.server(root) as url:
        yield url, root


page = lab_browser.page_fixture()


def _inspector_says(page, text: str) -> None:
    page.wait_for_function(
        "([sel, text]) => (document.querySelector(sel) || {}).textContent?.includes(text)",
        arg=[PANEL, text], timeout=60000)


def _step_three_and_back_two(page, debugger: str, shot_3: str, shot_back: str) -> None:
    """In the notebook "Open in a notebook" opened: Run All, step the CNN three ops (conv2d,
    elementwise_add, batch_norm: the feed op is not a step) and back two, checking the op
    that ran last, the op that runs next (the current line) and which values the scopes
    hold at each stop."""
    page.wait_for_selector(".jp-Notebook-ExecutionIndicator[data-status='idle']",
                           timeout=90000)
    page.wait_for_timeout(1000)
    lab_browser.menu(page, "Run", "Run All Cells")
    page.wait_for_selector(f"{debugger} [data-cmd='step']", timeout=120000)
    page.wait_for_timeout(500)
    # before the first step the current line is conv2d: the feed op is skipped (fed)
    page.wait_for_selector(f"{debugger} .pd-op.pd-current[data-op='b0:1']", timeout=30000)
    for n, op in ((1, "conv2d"), (2, "elementwise_add"), (3, "batch_norm")):
        click_and_wait(page, "step", f"ran block 0 > op {n} {op}", debugger)
    page.wait_for_selector(f"{debugger} .pd-op.pd-last-run[data-op='b0:3']", timeout=30000)
    page.wait_for_selector(f"{debugger} .pd-op.pd-current[data-op='b0:4']", timeout=30000)
    for made in ("conv2d_0.tmp_1", "batch_norm_0.tmp_3"):       # the three ops' outputs
        row = page.wait_for_selector(f"{debugger} .pd-scope [data-var='{made}']",
                                     timeout=30000)
        assert "pd-empty-var" not in row.get_attribute("class"), made
    _shoot_output(page, debugger, shot_3)
    assert_nothing_clipped(page, debugger)
    assert_stats_on_one_line(page, f"{debugger} .pd-scope")
    click_and_wait(page, "step_back", "ran block 0 > op 2 elementwise_add", debugger)
    click_and_wait(page, "step_back", "ran block 0 > op 1 conv2d", debugger)
    page.wait_for_selector(f"{debugger} .pd-op.pd-last-run[data-op='b0:1']", timeout=30000)
    page.wait_for_selector(f"{debugger} .pd-op.pd-current[data-op='b0:2']", timeout=30000)
    status = page.inner_text(f"{debugger} .pd-status")
    assert "2 steps behind the live run: stepping forward replays them" in status, status
    # conv2d's output has its value (6 channels of 8 x 8); what the two undone ops wrote
    # is back to no value, as before they ran
    conv = page.wait_for_selector(f"{debugger} .pd-scope [data-var='conv2d_0.tmp_0']")
    assert "pd-empty-var" not in conv.get_attribute("class") and "8" in conv.inner_text()
    for undone in ("conv2d_0.tmp_1", "batch_norm_0.tmp_3"):
        row = page.query_selector(f"{debugger} .pd-scope [data-var='{undone}']")
        assert row is None or "pd-empty-var" in row.get_attribute("class"), undone
    _shoot_output(page, debugger, shot_back)


def _shoot_output(page, selector: str, name: str) -> None:
    """A screenshot of one cell output (the debugger), scrolled into view first."""
    out = page.query_selector(selector)
    out.scroll_into_view_if_needed()
    lab_browser.SHOTS.mkdir(exist_ok=True)
    out.screenshot(path=str(lab_browser.SHOTS / name))


def _run_cell(page, index: int) -> None:
    page.click(f".jp-Notebook .jp-Cell:nth-child({index + 1}) .jp-InputArea-prompt")
    page.keyboard.press("Shift+Enter")


def test_the_sidebar_follows_two_cells_in_jupyterlab(lab, page):
    url, _ = lab
    page.goto(f"{url}/lab/workspaces/inspector/tree/follow.ipynb")
    page.wait_for_selector(".jp-Notebook-ExecutionIndicator[data-status='idle']",
                           timeout=90000)
    page.click(SIDEBAR_TAB)
    _inspector_says(page, "not imported paddle_nb")          # nothing imported into it
    _run_cell(page, 0)
    _run_cell(page, 1)
    _inspector_says(page, "3 ops in 1 block")
    code = page.inner_text(f"{PANEL} .pd-code")
    assert "relu" in code and "mean" not in code, code
    shot(page, "inspector_1_first_cell.png", full_page=False)
    # at the sidebar's default width a long line ends in an ellipsis, its title the line
    assert_nothing_clipped(page, PANEL)
    assert cut_lines(page, PANEL)
    _run_cell(page, 2)
    _inspector_says(page, "6 ops in 1 block")
    assert "mean" in page.inner_text(f"{PANEL} .pd-code")
    shot(page, "inspector_2_second_cell.png", full_page=False)
    lab_browser.shut_down_kernels(url)


def test_a_paddle_model_opens_from_the_file_browser_and_steps_back(lab, page):
    url, root = lab
    page.goto(f"{url}/lab/workspaces/model/tree/cnn")
    page.wait_for_selector(".jp-DirListing-item:has-text('cnn_infer.pdmodel')", timeout=60000)
    page.dblclick(".jp-DirListing-item:has-text('cnn_infer.pdmodel')")
    tab = page.wait_for_selector(".pd-program-file .pd-code [data-op='b0:1']", timeout=60000)
    assert "conv2d" in tab.inner_text()
    facts = page.inner_text(".pd-program-file-facts")
    assert "16 ops in 1 block" in facts and "image [?, 1, 8, 8] float32" in facts, facts
    assert "10 persistable tensors" in facts and "cnn_infer.pdiparams" in facts, facts
    page.click(".pd-program-file [data-op='b0:1']")               # the detail pane follows
    page.wait_for_selector(".pd-program-file .pd-detail :text('conv2d')", timeout=30000)
    shot(page, "inspector_3_pdmodel_tab.png", full_page=False)
    # the op's documentation once (the OpProto section has its slots, not its comment
    # again), and where the program came from instead of "(not recorded)"
    detail = page.inner_text(".pd-program-file .pd-detail")
    first = "Output = a 2-D convolution"
    assert detail.count(first) == 1 and "Inputs:" in detail, detail
    created = page.inner_text(".pd-program-file .pd-detail .pd-created")
    assert created.startswith("not recorded: ") and "(not recorded)" not in detail, created
    assert_nothing_clipped(page, ".pd-program-file")
    # the graph: a click on an op's node is the op shown in the code view
    page.click(".pd-program-file .pd-tab[data-tab='graph']")
    page.click(".pd-program-file .pd-graph g.node[id='b0:3']", timeout=30000)
    page.wait_for_selector(".pd-program-file .pd-detail :text('batch_norm')", timeout=30000)
    shot(page, "inspector_3b_pdmodel_graph.png", full_page=False)
    page.click(".pd-program-file .pd-tab[data-tab='code']")
    page.wait_for_selector(".pd-program-file .pd-code .pd-selected[data-op='b0:3']",
                           timeout=30000)
    page.click(".pd-open-notebook")
    debugger = ".jp-NotebookPanel:not(.lm-mod-hidden) .jp-OutputArea:has(.pd-debugger)"
    _step_three_and_back_two(page, debugger, "inspector_4_three_steps.png",
                             "inspector_5_stepped_back_output.png")
    assert (root / "cnn" / "cnn_infer.ipynb").is_file()
    # the sidebar follows the debugger the notebook opened
    page.click(SIDEBAR_TAB)
    _inspector_says(page, "ran block 0 > op 1 conv2d")
    page.wait_for_selector(f"{PANEL} .pd-op.pd-current[data-op='b0:2']", timeout=30000)
    shot(page, "inspector_5_stepped_back.png", full_page=False)
    # the sidebar at its default width: the scopes' feature maps and stats fit or scroll
    assert_nothing_clipped(page, PANEL)
    assert_stats_on_one_line(page, PANEL)
    lab_browser.shut_down_kernels(url)


def test_notebook_7_follows_two_cells_opens_a_model_and_steps_back(lab, page):
    url, root = lab
    page.goto(f"{url}/notebooks/follow_nb7.ipynb")
    page.wait_for_selector(".jp-Notebook-ExecutionIndicator[data-status='idle']",
                           timeout=90000)
    page.wait_for_timeout(1000)
    lab_browser.menu(page, "View", "Right Sidebar")
    page.click(".lm-Menu-itemLabel:text-is('Show Paddle inspector')", timeout=30000)
    _inspector_says(page, "not imported paddle_nb")
    _run_cell(page, 0)
    _run_cell(page, 1)
    _inspector_says(page, "3 ops in 1 block")
    _run_cell(page, 2)
    _inspector_says(page, "6 ops in 1 block")
    shot(page, "inspector_6_notebook7.png", full_page=False)
    lab_browser.shut_down_kernels(url)
    # the model, from Notebook 7's file browser: it opens in a tab of its own, and so does
    # the notebook its button writes
    shutil.copytree(CNN, root / "cnn7")
    page.goto(f"{url}/tree/cnn7")
    page.wait_for_selector(".jp-DirListing-item:has-text('cnn_infer.pdmodel')", timeout=60000)
    with page.context.expect_page() as opened:
        page.dblclick(".jp-DirListing-item:has-text('cnn_infer.pdmodel')")
    model = opened.value
    tab = model.wait_for_selector(".pd-program-file .pd-code [data-op='b0:3']", timeout=60000)
    assert "batch_norm" in tab.inner_text() and "/edit/cnn7/" in model.url
    shot(model, "inspector_7_notebook7_pdmodel.png", full_page=False)
    with page.context.expect_page() as written:
        model.click(".pd-open-notebook")
    notebook = written.value
    assert "/notebooks/cnn7/cnn_infer.ipynb" in notebook.url
    _step_three_and_back_two(notebook, ".jp-OutputArea:has(.pd-debugger)",
                             "inspector_8_notebook7_three_steps.png",
                             "inspector_9_notebook7_stepped_back.png")
    for p in (model, notebook):
        p.close()
    lab_browser.shut_down_kernels(url)
