"""A real Jupyter server for the browser tests (JupyterLab, and Notebook 7 on the same
server): a server on localhost and Debian's headless
Chromium driven by Playwright (it cannot download a browser here; .ci/run installs
chromium). Screenshots land in ``screenshots/`` (git-ignored) for a person to look at."""
from __future__ import annotations

import contextlib
import json
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

CHROMIUM = "/usr/bin/chromium"
SHOTS = Path(__file__).resolve().parent.parent / "screenshots"


def _free_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


@contextlib.contextmanager
def server(root: Path):
    """JupyterLab serving ``root`` without a token, with its own workspaces and settings
    (under ``root/.lab``); yields its URL."""
    with served(root) as (url, _):
        yield url


@contextlib.contextmanager
def served(root: Path, lab: bool = True):
    """:func:`server`, yielding (its URL, its process); ``lab=False``: the bare Jupyter
    server (the same server extensions, no Lab pages: it starts sooner)."""
    port = _free_port()
    app = ["lab", "--no-browser"] if lab else ["server", "--no-browser"]
    lab_flags = [
        "--LabApp.news_url=None",
        # the layout (an open sidebar, tabs) and settings are kept per server, not in the
        # user's home, where one test's open sidebar would appear in the next test's page
        f"--LabApp.workspaces_dir={root / '.lab' / 'workspaces'}",
        f"--LabApp.user_settings_dir={root / '.lab' / 'settings'}",
        "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate"] if lab else []
    proc = subprocess.Popen(
        [sys.executable, "-m", "jupyter", *app, f"--port={port}",
         "--ServerApp.ip=127.0.0.1", "--ServerApp.token=", "--ServerApp.password=",
         "--allow-root", f"--ServerApp.root_dir={root}",
         "--ServerApp.disable_check_xsrf=True",       # shut_down_kernels uses the REST API
         *lab_flags],
        stdout=open(root / "server.log", "w"), stderr=subprocess.STDOUT)
    try:
        deadline = time.time() + 60
        while True:
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/api", timeout=2)
                break
            except OSError:
                if time.time() > deadline or proc.poll() is not None:
                    raise RuntimeError((root / "server.log").read_text()[-2000:])
                time.sleep(0.3)
        yield f"http://127.0.0.1:{port}", proc
    finally:
        proc.terminate()
        proc.wait(timeout=30)


@contextlib.contextmanager
def browser_page(width: int = 1500, height: int = 1000):
    from playwright.sync_api import sync_playwright   # noqa: PLC0415 ([dev] extra)
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=[
            "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
            "--disable-background-networking", "--disable-component-update", "--disable-sync"])
        try:
            yield browser.new_page(viewport={"width": width, "height": height})
        finally:
            browser.close()


def open_and_run_all(page, url: str, path: str, timeout_ms: int = 90000,
                     workspace: str | None = None, app: str = "lab") -> None:
    """Open a notebook, wait for its kernel, and click Run > Run All Cells. ``app`` is
    "lab" (JupyterLab) or "notebook" (Notebook 7, served by the same server at
    /notebooks/; its menus and cells are Lab's). A named ``workspace`` starts Lab from an
    empty layout (Lab reopens the tabs of the last one)."""
    if app == "notebook":
        page.goto(f"{url}/notebooks/{path}")
    else:
        page.goto(f"{url}/lab/workspaces/{workspace}/tree/{path}" if workspace
                  else f"{url}/lab/tree/{path}")
    page.wait_for_selector(".jp-Notebook-ExecutionIndicator[data-status='idle']",
                           timeout=timeout_ms)
    page.wait_for_timeout(1000)          # let the notebook finish settling
    menu(page, "Run", "Run All Cells")


def run_all_once_the_kernel_is_idle(page, notebook: str, timeout_ms: int = 90000) -> None:
    """Run > Run All Cells in the notebook ``notebook`` (a selector) once its kernel is
    connected and idle. Its execution indicator alone says "idle" too early: while the
    toolbar still says "No Kernel" (the session initializing), and a Run All then runs
    nothing and asks which kernel to use."""
    page.wait_for_function(
        """sel => {
          const idle = document.querySelector(
            `${sel} .jp-Notebook-ExecutionIndicator[data-status='idle']`);
          const kernel = document.querySelector(`${sel} .jp-Toolbar-kernelName`);
          return !!idle && !!kernel && kernel.textContent.trim() !== 'No Kernel';
        }""", arg=notebook, timeout=timeout_ms)
    menu(page, "Run", "Run All Cells")


def menu(page, top: str, item: str) -> None:
    """Click ``top`` in Lab's menu bar, then ``item`` (exact labels: a notebook's own text
    may say "Run All Cells" too)."""
    page.click(f".lm-MenuBar-itemLabel:text-is('{top}')", timeout=30000)
    page.click(f".lm-Menu-itemLabel:text-is('{item}')", timeout=30000)


def shut_down_kernels(url: str) -> None:
    """Stop every kernel the server runs (through its REST API: no dialog to click)."""
    with urllib.request.urlopen(f"{url}/api/kernels", timeout=10) as r:
        kernels = json.load(r)
    for k in kernels:
        req = urllib.request.Request(f"{url}/api/kernels/{k['id']}", method="DELETE")
        urllib.request.urlopen(req, timeout=30).close()


def shot(page, name: str, full_page: bool = True) -> Path:
    SHOTS.mkdir(exist_ok=True)
    news = page.query_selector(".jp-toast-button >> text=No")     # Lab's news prompt
    if news is not None:
        try:
            news.click(timeout=2000)
        except Exception:      # noqa: BLE001 (it may vanish on its own; only cosmetic)
            pass
    path = SHOTS / name
    page.screenshot(path=str(path), full_page=full_page)
    return path


# Click a debugger button and wait (in the page) until the status line says ``expect``:
# the time from the click to the updated view, through the kernel, in milliseconds.
CLICK_AND_WAIT = """async ([cmd, expect, root]) => {
  const scope = root ? document.querySelector(root) : document;
  const status = () => (scope.querySelector('.pd-status') || {}).textContent || '';
  const t0 = performance.now();
  scope.querySelector(`[data-cmd='${cmd}']`).click();
  await new Promise((resolve, reject) => {
    if (status().includes(expect)) { resolve(); return; }
    const obs = new MutationObserver(() => {
      if (status().includes(expect)) { obs.disconnect(); resolve(); } });
    obs.observe(document.body, {childList: true, characterData: true, subtree: true});
    setTimeout(() => { obs.disconnect(); reject(new Error('the status never said ' +
      expect + ': ' + status())); }, 60000);
  });
  return performance.now() - t0;
}"""


def click_and_wait(page, cmd: str, expect: str, root: str | None = None) -> float:
    """Click the debugger button ``data-cmd=cmd`` (in ``root``, a selector, if given) and
    wait until its status line contains ``expect``; returns the milliseconds it took."""
    return page.evaluate(CLICK_AND_WAIT, [cmd, expect, root])


def write_notebook(path: Path, cells: list[str]) -> None:
    """A notebook of code cells for the Python 3 kernel, as the browser tests open them."""
    import nbformat   # noqa: PLC0415
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3 (ipykernel)",
                                 "language": "python"}
    nbformat.write(nb, path)


def page_fixture():
    """A module-scoped ``page`` fixture: one headless Chromium page for a test module
    (whose ``lab`` fixture starts the server first)."""
    import pytest   # noqa: PLC0415

    @pytest.fixture(scope="module")
    def page(lab):
        with browser_page() as pg:
            yield pg
    return page
