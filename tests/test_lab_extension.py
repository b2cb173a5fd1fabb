"""The JupyterLab extension's Python halves, without a browser: the install (JupyterLab and
the Jupyter server both list it, enabled and OK), and the server routes' work on program
files (paddle_nb/lab/program_file.py): a PaddlePaddle-saved model opened with its
parameters, paths kept inside the served folder, hostile files refused with the file named,
and the notebook the tab writes runs and opens the step debugger; the same for a Paddle 3
PIR program (``X.json`` beside ``X.pdiparams``). At the end, in a real browser: a PIR
program double-clicked opens the program tab (a plain .json its usual viewer) and its
notebook steps it."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

import lab_browser
from lab_browser import CHROMIUM, click_and_wait, shot
from paddle_nb.lab import notebook_file, program_file as pf
from paddle_nb.lab.request_bodies import BadRequest

CNN = Path(__file__).resolve().parent.parent / "notebooks" / "data" / "paddle_cnn"
# Paddle 3's PIR files (model.json + model.pdiparams), saved by paddlepaddle 3.3.1, and the
# same model saved in the legacy format (legacy/model.pdmodel): tests/fixtures/pir/
PIR_MLP = Path(__file__).resolve().parent / "fixtures" / "pir" / "mlp"
JUPYTER = [sys.executable, "-m", "jupyter"]


def _listing(*args) -> str:
    done = subprocess.run(JUPYTER + list(args), capture_output=True, text=True, timeout=120)
    return done.stdout + done.stderr


def test_jupyterlab_lists_the_extension_enabled_and_ok():
    lines = [line for line in _listing("labextension", "list").splitlines()
             if "paddle-nb-inspector" in line]
    assert lines, _listing("labextension", "list")
    assert "enabled" in lines[0] and "OK" in lines[0], lines[0]
    assert "(python, paddle_nb)" in lines[0], lines[0]      # installed by pip, not by hand


def test_the_jupyter_server_loads_the_program_routes():
    text = _listing("server", "extension", "list")
    assert "paddle_nb.lab" in text and "enabled" in text.split("paddle_nb.lab", 1)[1][:40]
    assert "paddle_nb.lab  \x1b[32mOK" in text or "paddle_nb.lab  OK" in text, text


def test_the_built_extension_is_the_source_built():
    """The prebuilt assets ship in the package; their package.json is the source's."""
    import json
    root = Path(pf.__file__).resolve().parents[2]
    built = json.loads((root / "paddle_nb" / "labextension" / "package.json").read_text())
    source = json.loads((root / "extension" / "package.json").read_text())
    assert built["name"] == source["name"] and built["version"] == source["version"]
    assert built["jupyterlab"]["_build"]["load"].startswith("static/remoteEntry.")


@pytest.fixture()
def served(tmp_path):
    shutil.copytree(CNN, tmp_path / "cnn")
    return tmp_path


def test_a_paddle_saved_model_opens_with_its_parameters(served):
    opened = pf.OpenedPrograms(str(served)).get("cnn/cnn_infer.pdmodel")
    state = opened.state()
    assert state["feeds"] == [{"name": "image", "shape": [-1, 1, 8, 8], "dtype": "float32"}]
    assert state["fetches"] == ["save_infer_model/scale_0.tmp_0"]
    assert state["params_file"] == "cnn_infer.pdiparams" and len(state["params"]) == 10
    w = next(p for p in state["params"] if p["name"] == "conv2d_0.w_0")
    assert w["shape"] == [6, 1, 3, 3] and w["min"] < 0 < w["max"]
    ops = [op["type"] for op in state["traits"]["model"]["blocks"][0]["ops"]]
    assert ops[:3] == ["feed", "conv2d", "elementwise_add"] and ops[-1] == "fetch"
    # a click in the tab reaches the same view, which answers with its new traits
    opened.apply({"selected": [0, 1]})
    assert opened.state()["traits"]["selected"] == [0, 1]
    with pytest.raises(BadRequest, match='no trait "bogus"'):
        opened.apply({"bogus": 1})


def test_paths_stay_inside_the_served_folder(served, tmp_path_factory):
    outside = tmp_path_factory.mktemp("outside")
    shutil.copy(CNN / "cnn_infer.pdmodel", outside / "x.pdmodel")
    programs = pf.OpenedPrograms(str(served))
    for path in ("../" + outside.name + "/x.pdmodel", str(outside / "x.pdmodel")):
        with pytest.raises(pf.ProgramFileError, match="outside the folder|no such file"):
            programs.get(path)
    os.symlink(outside / "x.pdmodel", served / "link.pdmodel")
    with pytest.raises(pf.ProgramFileError, match="outside the folder"):
        programs.get("link.pdmodel")
    with pytest.raises(pf.ProgramFileError, match="not a program file"):
        programs.get("cnn/README.md")


@pytest.mark.parametrize("content", [b"", b"\x00" * 64, b"not a program at all",
                                     (CNN / "cnn_infer.pdmodel").read_bytes()[:200]])
def test_hostile_program_files_are_refused_with_the_file_named(served, content):
    (served / "bad.pdmodel").write_bytes(content)
    with pytest.raises(pf.ProgramFileError, match="bad.pdmodel"):
        pf.OpenedPrograms(str(served)).get("bad.pdmodel")


def test_parameters_that_do_not_fit_are_reported_not_fatal(served):
    (served / "cnn" / "cnn_infer.pdiparams").write_bytes(b"\x00" * 10)
    opened = pf.OpenedPrograms(str(served)).get("cnn/cnn_infer.pdmodel")
    assert opened.params == [] and opened.params_note.startswith("parameters not loaded:")


def test_the_tab_reopens_a_file_changed_on_disk(served):
    programs = pf.OpenedPrograms(str(served))
    first = programs.get("cnn/cnn_infer.pdmodel")
    assert programs.get("cnn/cnn_infer.pdmodel") is first
    target = served / "cnn" / "cnn_infer.pdmodel"
    os.utime(target, ns=(target.stat().st_atime_ns, target.stat().st_mtime_ns + 10**9))
    assert programs.get("cnn/cnn_infer.pdmodel") is not first


def _step_twice_and_run(nb, folder) -> str:
    """Run a written notebook with a cell that steps its debugger twice (feed ops are not
    steps), prints where it is, and runs to the end: what that cell printed."""
    from nbclient import NotebookClient
    nb.cells.append(nbformat.v4.new_code_cell(
        "dbg.debugger.step(); dbg.debugger.step()\n"
        "print(dbg.debugger.location(), dbg.debugger.current.op.type)\n"
        "print(dbg.debugger.run_to_end()[0].shape)"))
    NotebookClient(nb, timeout=300, kernel_name="python3",
                   resources={"metadata": {"path": str(folder)}}).execute()
    return "".join(o.get("text", "") for o in nb.cells[-1].outputs)


def test_the_written_notebook_loads_runs_and_steps_the_model(served):
    opened = pf.OpenedPrograms(str(served)).get("cnn/cnn_infer.pdmodel")
    path = pf.write_notebook(opened)
    assert path == "cnn/cnn_infer.ipynb"
    nb = nbformat.read(served / path, as_version=4)
    printed = _step_twice_and_run(nb, served / "cnn")    # conv2d, add
    assert "(0, 2) elementwise_add" in printed and "(1, 10)" in printed, printed
    # written once: the user's edits to it are never overwritten
    (served / path).write_text("mine")
    assert pf.write_notebook(opened) == path and (served / path).read_text() == "mine"


def test_a_fluid_model_folder_finds_its_parameter_files(tmp_path):
    """A __model__ with one file per variable beside it (Fluid's save_persistables without
    a filename): written here by paddle_nb, read back by the tab's loader."""
    import paddle_nb as pd
    main, startup = pd.Program(), pd.Program()
    with pd.program_guard(main, startup):
        x = pd.data("x", [-1, 3])
        pd.layer.fc(x, 2)
    exe, scope = pd.Executor(), pd.Scope()
    exe.run(startup, scope=scope)
    (tmp_path / "m").mkdir()
    pd.io.save_persistables(exe, str(tmp_path / "m"), main, scope=scope)   # a file each
    (tmp_path / "m" / "__model__").write_bytes(main.to_bytes())
    opened = pf.OpenedPrograms(str(tmp_path)).get("m/__model__")
    assert opened.params_file is None and {p["name"] for p in opened.params} == \
        {"fc_0.w_0", "fc_0.b_0"}
    w = scope.find_var("fc_0.w_0").get()
    listed = next(p for p in opened.params if p["name"] == "fc_0.w_0")
    assert listed["min"] == float(w.min()) and listed["max"] == float(w.max())
    assert listed["shape"] == [3, 2] and listed["bytes"] == w.nbytes


# --- "Open in a notebook" never writes through a link, nor over what is not a notebook ------
@pytest.mark.parametrize("leads_to", ["missing", "a file"])
def test_a_symlink_out_of_the_root_in_the_notebooks_place_is_not_followed(
        served, tmp_path_factory, leads_to):
    """Before: os.path.exists() is False for a dangling link, so the notebook was written
    through it, outside the served folder (HTTP 200)."""
    outside = tmp_path_factory.mktemp("outside") / "planted.ipynb"
    if leads_to == "a file":
        outside.write_text("theirs")
    os.symlink(outside, served / "cnn" / "cnn_infer.ipynb")
    opened = pf.OpenedPrograms(str(served)).get("cnn/cnn_infer.pdmodel")
    with pytest.raises(notebook_file.NotebookNotWritten,
                       match=r"cnn/cnn_infer.ipynb is a symlink to .*planted.ipynb, outside "
                             r"the folder this server serves: it is not followed") as caught:
        pf.write_notebook(opened)
    assert caught.value.status == 409
    assert (outside.read_text() == "theirs") if leads_to == "a file" else not outside.exists()
    assert os.path.islink(served / "cnn" / "cnn_infer.ipynb")          # left as it was


def test_a_dangling_symlink_inside_the_root_is_not_followed_either(served):
    os.symlink(served / "nowhere" / "x.ipynb", served / "cnn" / "cnn_infer.ipynb")
    opened = pf.OpenedPrograms(str(served)).get("cnn/cnn_infer.pdmodel")
    with pytest.raises(notebook_file.NotebookNotWritten, match="which is missing: it is not "
                                                               "followed"):
        pf.write_notebook(opened)
    assert not (served / "nowhere").exists()


def test_a_link_to_a_notebook_inside_the_root_is_the_users_notebook(served):
    (served / "mine.ipynb").write_text("mine")
    os.symlink(served / "mine.ipynb", served / "cnn" / "cnn_infer.ipynb")
    opened = pf.OpenedPrograms(str(served)).get("cnn/cnn_infer.pdmodel")
    assert pf.write_notebook(opened) == "cnn/cnn_infer.ipynb"
    assert (served / "mine.ipynb").read_text() == "mine"


def test_a_folder_named_like_the_notebook_is_not_an_existing_notebook(served):
    """Before: os.path.exists() was True, so the tab was told to open a folder as its
    notebook."""
    (served / "cnn" / "cnn_infer.ipynb").mkdir()
    opened = pf.OpenedPrograms(str(served)).get("cnn/cnn_infer.pdmodel")
    with pytest.raises(notebook_file.NotebookNotWritten,
                       match="cnn/cnn_infer.ipynb is a folder, not a notebook: nothing was "
                             "written") as caught:
        pf.write_notebook(opened)
    assert caught.value.status == 409 and os.listdir(served / "cnn" / "cnn_infer.ipynb") == []


# --- what the server holds ---------------------------------------------------------------------
def test_a_program_is_freed_when_its_last_tab_closes(served):
    """Before: OpenedPrograms evicted by count only, and a ProgramView is kept in
    ipywidgets' registry (and by anywidget's stylesheet signal) until closed: a closed
    tab's program, view and parameters stayed in the server."""
    import gc
    import weakref
    programs = pf.OpenedPrograms(str(served))
    opened = programs.get("cnn/cnn_infer.pdmodel", tab="a")
    assert programs.get("cnn/cnn_infer.pdmodel", tab="b") is opened     # one file, two tabs
    view, program = weakref.ref(opened.view), weakref.ref(opened.program)
    del opened
    assert programs.release("cnn/cnn_infer.pdmodel", "a") == 1          # b still shows it
    assert programs.held()["programs"] == 1
    assert programs.release("cnn/cnn_infer.pdmodel", "b") == 0
    gc.collect()
    assert programs.held() == {"programs": 0, "tabs": 0, "held_bytes": 0}
    assert view() is None and program() is None
    assert programs.release("cnn/cnn_infer.pdmodel", "b") == 0          # twice: harmless


def test_programs_no_tab_shows_go_first_and_the_held_bytes_are_bounded(served):
    for k in range(4):
        shutil.copy(served / "cnn" / "cnn_infer.pdmodel", served / f"m{k}.pdmodel")
    programs = pf.OpenedPrograms(str(served), keep=3)
    programs.get("m0.pdmodel", tab="t0")
    programs.get("m1.pdmodel")                       # no tab (a reload lost it): goes first
    programs.get("m2.pdmodel", tab="t2")
    programs.get("m3.pdmodel", tab="t3")
    assert programs.held()["programs"] == 3 and "m1.pdmodel" not in programs._opened
    one = programs.get("m0.pdmodel").held_bytes
    small = pf.OpenedPrograms(str(served), max_held_bytes=2 * one + one // 2)
    for k in range(4):
        small.get(f"m{k}.pdmodel", tab=f"t{k}")
    assert small.held()["programs"] == 2 and small.held()["held_bytes"] <= 2 * one + one // 2
    assert list(small._opened) == ["m2.pdmodel", "m3.pdmodel"]       # least recently used go


def test_parameters_are_listed_from_their_headers_and_large_ones_are_not_read(served,
                                                                           monkeypatch):
    """The tab holds no tensor: shapes and dtypes from the headers, min/max read in chunks
    for tensors up to SUMMARY_MAX_TENSOR_BYTES (a larger one says why it has none)."""
    from paddle_nb.lab import parameters
    opened = pf.OpenedPrograms(str(served)).get("cnn/cnn_infer.pdmodel")
    assert not hasattr(opened, "scope")
    w = next(p for p in opened.params if p["name"] == "conv2d_0.w_0")
    assert w["bytes"] == 6 * 9 * 4 and "note" not in w
    monkeypatch.setattr(parameters, "SUMMARY_MAX_TENSOR_BYTES", 100)
    w = next(p for p in pf.OpenedPrograms(str(served)).get("cnn/cnn_infer.pdmodel").params
             if p["name"] == "conv2d_0.w_0")
    assert "min" not in w and w["note"] == "min/max not read: 216 bytes, more than 100 bytes"


# --- Paddle 3's PIR programs: X.json beside X.pdiparams -------------------------------------
@pytest.fixture()
def pir_served(tmp_path):
    shutil.copytree(PIR_MLP, tmp_path / "mlp")
    return tmp_path


def test_a_pir_program_opens_with_its_parameters_as_its_legacy_save_does(pir_served):
    """The tab of model.json lists what the tab of the same model saved in the legacy
    format lists (the same parameter file format): inputs, outputs, each parameter's name,
    shape and range; its variables carry their PIR ids, the legacy program's none."""
    programs = pf.OpenedPrograms(str(pir_served))
    pir = programs.get("mlp/model.json").state()
    legacy = programs.get("mlp/legacy/model.pdmodel").state()
    assert pir["feeds"] == [{"name": "x", "shape": [-1, 4], "dtype": "float32"}]
    assert len(pir["fetches"]) == 1
    assert pir["params_file"] == "model.pdiparams"
    assert pir["params_note"] == "4 persistable tensors in model.pdiparams"
    assert pir["params"] == legacy["params"]
    w = next(p for p in pir["params"] if p["name"] == "linear_0.w_0")
    assert w["shape"] == [4, 16] and w["min"] < 0 < w["max"]
    ops = [op["type"] for op in pir["traits"]["model"]["blocks"][0]["ops"]]
    assert ops[:3] == ["feed", "matmul_v2", "elementwise_add"] and ops[-1] == "fetch"
    ids = {v["name"]: v.get("pir_id") for v in pir["traits"]["model"]["blocks"][0]["vars"]}
    assert isinstance(ids["linear_0.w_0"], int) and isinstance(ids["x"], int)
    assert len({i for i in ids.values() if i is not None}) == len(
        [i for i in ids.values() if i is not None])            # one id per value
    assert not any("pir_id" in v for b in legacy["traits"]["model"]["blocks"]
                   for v in b["vars"])                       # nothing new without PIR


def test_a_pir_program_without_its_parameter_file_still_opens(pir_served):
    (pir_served / "mlp" / "model.pdiparams").unlink()
    opened = pf.OpenedPrograms(str(pir_served)).get("mlp/model.json")
    assert opened.params == [] and opened.params_file is None
    assert opened.params_note == "no parameter file beside the program"


@pytest.mark.parametrize("content, says", [
    (b'{"a": [1, 2, 3]}', "not a PIR program"),
    (b'{"base_code": {"magic": "onnx", "version": 4}, "program": {}}', "magic"),
    (b"not json {", "not JSON"),
    (b"\xff\xfe\x00garbage", "UTF-8"),
    (b"", ""),
])
def test_a_json_that_is_not_a_pir_program_is_a_clear_error(pir_served, content, says):
    """Any .json may be opened with the tab (Open With): one that is not Paddle 3's
    model.json says what it was read as and what is wrong, the file named."""
    (pir_served / "data.json").write_bytes(content)
    with pytest.raises(pf.ProgramFileError,
                       match=r"^data.json \(read as a Paddle 3 PIR program, the model.json "
                             r"paddle.jit.save writes\): ") as caught:
        pf.OpenedPrograms(str(pir_served)).get("data.json")
    assert says in str(caught.value) and caught.value.status == 400


def test_a_pir_program_larger_than_its_limit_is_not_read(pir_served, monkeypatch):
    from paddle_nb.core import limits
    monkeypatch.setattr(limits, "MAX_PIR_BYTES", 100)
    with pytest.raises(pf.ProgramFileError, match=r"mlp/model.json: .*more than the limit "
                                                  r"paddle_nb.core.limits.MAX_PIR_BYTES"):
        pf.OpenedPrograms(str(pir_served)).get("mlp/model.json")


def test_the_notebook_written_for_a_pir_program_loads_runs_and_steps_it(pir_served):
    opened = pf.OpenedPrograms(str(pir_served)).get("mlp/model.json")
    path = pf.write_notebook(opened)
    assert path == "mlp/model.ipynb"
    nb = nbformat.read(pir_served / path, as_version=4)
    assert "model_filename='model.json', params_filename='model.pdiparams'" in \
        nb.cells[1].source
    printed = _step_twice_and_run(nb, pir_served / "mlp")   # matmul_v2, add
    assert "(0, 2) elementwise_add" in printed and "(1, 3)" in printed, printed


# --- in a real browser: JupyterLab picks the viewer by path -------------------------------------
# Marked as tests/test_browser_inspector.py marks its tests (Debian's chromium, Playwright).
needs_chromium = pytest.mark.skipif(not os.path.exists(CHROMIUM),
                                    reason="needs Debian's chromium (.ci/run installs it)")
SHOWN = ".jp-MainAreaWidget.jp-Document:not(.lm-mod-hidden)"      # the document in front


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    """A server over mlp/ (model.json beside model.pdiparams, and a data.json), and
    plain/model.json: the same file with no parameters beside it."""
    root = tmp_path_factory.mktemp("pir_lab")
    shutil.copytree(PIR_MLP, root / "mlp")
    (root / "mlp" / "data.json").write_text('{"rows": [1, 2, 3]}')
    (root / "plain").mkdir()
    shutil.copy(PIR_MLP / "model.json", root / "plain" / "model.json")
    with lab_browser.server(root) as url:
        yield url, root


page = lab_browser.page_fixture()


def _double_click(page, name: str) -> None:
    page.wait_for_selector(f".jp-DirListing-item:has-text('{name}')", timeout=60000)
    page.dblclick(f".jp-DirListing-item:has-text('{name}')")


@pytest.mark.browser
@needs_chromium
def test_a_pir_program_double_clicked_opens_its_program_tab_and_its_notebook_steps_it(
        lab, page):
    url, root = lab
    page.goto(f"{url}/lab/workspaces/pir/tree/mlp")
    _double_click(page, "model.json")
    line = page.wait_for_selector(f"{SHOWN} .pd-program-file .pd-code [data-op='b0:1']",
                                  timeout=60000)
    assert "matmul_v2" in line.inner_text()
    facts = page.inner_text(f"{SHOWN} .pd-program-file-facts")
    assert "8 ops in 1 block" in facts and "x [?, 4] float32" in facts, facts
    assert "4 persistable tensors in model.pdiparams" in facts, facts
    pir_id = page.text_content(f"{SHOWN} [data-block-var='linear_0.w_0'] .pd-pir-id")
    assert re.fullmatch(r"\s*%\d+", pir_id), pir_id            # "linear_0.w_0  %4"
    assert page.query_selector(f"{SHOWN} .jp-RenderedJSON, {SHOWN} .jp-FileEditor") is None
    shot(page, "pir_1_program_tab.png", full_page=False)
    # its notebook loads model.json and model.pdiparams and steps it, forward and back
    page.click(f"{SHOWN} .pd-open-notebook")
    notebook = ".jp-NotebookPanel:not(.lm-mod-hidden)"
    debugger = f"{notebook} .jp-OutputArea:has(.pd-debugger)"
    lab_browser.run_all_once_the_kernel_is_idle(page, notebook)
    page.wait_for_selector(f"{debugger} [data-cmd='step']", timeout=120000)
    page.wait_for_selector(f"{debugger} .pd-op.pd-current[data-op='b0:1']", timeout=30000)
    click_and_wait(page, "step", "ran block 0 > op 1 matmul_v2", debugger)
    click_and_wait(page, "step", "ran block 0 > op 2 elementwise_add", debugger)
    page.wait_for_selector(f"{debugger} .pd-op.pd-last-run[data-op='b0:2']", timeout=30000)
    page.wait_for_selector(f"{debugger} .pd-scope [data-var='add_0.tmp_0']"
                           f":not(.pd-empty-var)", timeout=30000)       # it has its value
    out = page.query_selector(debugger)                 # the debugger's output, in view
    out.scroll_into_view_if_needed()
    out.screenshot(path=str(lab_browser.SHOTS / "pir_2_stepped.png"))
    click_and_wait(page, "step_back", "ran block 0 > op 1 matmul_v2", debugger)
    page.wait_for_selector(f"{debugger} .pd-op.pd-current[data-op='b0:2']", timeout=30000)
    row = page.query_selector(f"{debugger} .pd-scope [data-var='add_0.tmp_0']")
    assert row is None or "pd-empty-var" in row.get_attribute("class")
    assert (root / "mlp" / "model.ipynb").is_file()
    lab_browser.shut_down_kernels(url)


@pytest.mark.browser
@needs_chromium
def test_other_json_files_keep_their_viewer_and_open_with_offers_the_program_tab(lab, page):
    url, _ = lab
    # beside the PIR program, a .json without a .pdiparams of its name: the JSON viewer
    page.goto(f"{url}/lab/workspaces/plain-json/tree/mlp")
    _double_click(page, "data.json")
    page.wait_for_selector(f"{SHOWN} .jp-RenderedJSON", timeout=60000)
    assert page.query_selector(f"{SHOWN} .pd-program-file") is None
    shot(page, "pir_3_plain_json.png", full_page=False)     # (and Lab's news prompt shut)
    # Open With > Paddle program works on any .json; this one says why it is no program
    page.click(".jp-DirListing-item:has-text('data.json')", button="right")
    page.click(".lm-Menu-itemLabel:text-is('Open With')")
    # (has-text: the label's first letter is a mnemonic's span of its own)
    page.click(".lm-Menu-itemLabel:has-text('Paddle program')", timeout=30000)
    error = page.wait_for_selector(f"{SHOWN} .pd-program-file-error", timeout=60000)
    assert "data.json (read as a Paddle 3 PIR program" in error.inner_text()
    assert "not a PIR program" in error.inner_text(), error.inner_text()
    shot(page, "pir_4_open_with_error.png", full_page=False)
    # the PIR program's very file, without its parameters beside it: the JSON viewer too
    page.goto(f"{url}/lab/workspaces/plain-json-2/tree/plain")
    _double_click(page, "model.json")
    page.wait_for_selector(f"{SHOWN} .jp-RenderedJSON", timeout=60000)
    assert page.query_selector(f"{SHOWN} .pd-program-file") is None


@pytest.mark.browser
@needs_chromium
def test_in_notebook_7_a_pir_program_opens_in_a_program_page_of_its_own(lab, page):
    """Notebook 7 opens a document in a page of its own (/edit/...), with no file browser
    there to say that model.json has its .pdiparams beside it: the page looks first."""
    url, _ = lab
    page.goto(f"{url}/tree/mlp")
    page.wait_for_selector(".jp-DirListing-item:has-text('model.json')", timeout=60000)
    with page.context.expect_page() as opened:
        page.dblclick(".jp-DirListing-item:has-text('model.json')")
    program = opened.value
    line = program.wait_for_selector(".pd-program-file .pd-code [data-op='b0:1']",
                                     timeout=60000)
    assert "matmul_v2" in line.inner_text() and "/edit/mlp/model.json" in program.url
    shot(program, "pir_5_notebook7_program.png", full_page=False)
    program.close()
