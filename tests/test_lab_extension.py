"""The JupyterLab extension's Python halves, without a browser: the install (JupyterLab and
the Jupyter server both list it, enabled and OK), and the server routes' work on program
files (paddle_nb/lab/program_file.py): a PaddlePaddle-saved model opened with its
parameters, paths kept inside the served folder, hostile files refused with the file named,
and the notebook the tab writes runs and opens the step debugger."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import numpy as np
import pytest

from paddle_nb.lab import program_file as pf

CNN = Path(__file__).resolve().parent.parent / "notebooks" / "data" / "paddle_cnn"
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
    with pytest.raises(pf.ProgramFileError, match="no trait bogus"):
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


def test_the_written_notebook_loads_runs_and_steps_the_model(served):
    from nbclient import NotebookClient
    opened = pf.OpenedPrograms(str(served)).get("cnn/cnn_infer.pdmodel")
    path = pf.write_notebook(opened)
    assert path == "cnn/cnn_infer.ipynb"
    nb = nbformat.read(served / path, as_version=4)
    nb.cells.append(nbformat.v4.new_code_cell(
        "dbg.debugger.step(); dbg.debugger.step()     # feed ops are not steps: conv2d, add\n"
        "print(dbg.debugger.location(), dbg.debugger.current.op.type)\n"
        "print(dbg.debugger.run_to_end()[0].shape)"))
    NotebookClient(nb, timeout=300, kernel_name="python3",
                   resources={"metadata": {"path": str(served / "cnn")}}).execute()
    printed = "".join(o.get("text", "") for o in nb.cells[-1].outputs)
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
    assert np.array_equal(opened.scope.find_var("fc_0.w_0").get(), w)
