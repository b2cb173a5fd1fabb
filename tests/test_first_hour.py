"""What a new student trips on in the first hour (issue: "The first hour"), each checked
as the student meets it: the message they read, the exit code they get."""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import nbformat
import numpy as np
import pytest
from nbclient import NotebookClient

import paddle_nb as pd
from paddle_nb.__main__ import main as pd_main


def _cli(*args):
    return subprocess.run([sys.executable, "-m", "paddle_nb", *args], capture_output=True,
                          text=True, timeout=600)


# --- python -m paddle_nb ops ------------------------------------------------------------------
def test_ops_of_a_layer_name_points_to_the_layer():
    done = _cli("ops", "square_error_cost")
    assert done.returncode == 0 and "Traceback" not in done.stderr
    assert "square_error_cost is a layer, not an op: pd.layer.square_error_cost" in done.stdout


def test_ops_of_fc_shows_the_op_and_the_layer():
    """fc is both, as in Paddle: the fused op a pass makes, and the layer that builds mul
    and elementwise_add."""
    done = _cli("ops", "fc")
    assert done.returncode == 0 and "Traceback" not in done.stderr
    assert "fc is also a layer: pd.layer.fc" in done.stdout and "pd.passes.apply" in done.stdout
    assert "mul" in done.stdout and "elementwise_add" in done.stdout and "Input" in done.stdout


@pytest.mark.parametrize("name", ["conv2d", "dropout", "batch_norm", "layer_norm"])
def test_ops_of_a_layer_that_emits_its_op_says_so(name, capsys):
    """Said of every layer with an op's name: "builds other ops; the op is what a pass
    makes of them". pd.layer.conv2d emits conv2d itself; only fc is built of other ops."""
    assert pd_main(["ops", name]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert f"{name} is also a layer: pd.layer.{name} builds this op (a program as built " \
           f"holds {name}" in out
    assert "what a pass makes" not in out and "pass makes" not in out


def test_ops_of_fc_says_which_pass_makes_the_op_of_what_the_layer_builds(capsys):
    assert pd_main(["ops", "fc"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert ("pd.layer.fc builds mul, elementwise_add (what a program holds as built), not "
            "this op; the fc op is what the fc_fuse pass makes of them") in out


def test_every_layer_named_like_an_op_is_built_to_say_which_ops_it_makes():
    """The sentence comes from building the layer (LAYER_CALLS), so each layer with an
    op's name needs a way to call it; building it leaves the default programs alone."""
    from paddle_nb.cli.ops import LAYER_CALLS, layer_and_op as _layer_and_op   # noqa: PLC0415
    named = sorted(n for n in dir(pd.layers) if not n.startswith("_") and
                   callable(getattr(pd.layers, n)) and getattr(pd.layers, n).__doc__ and
                   pd.core.registry.is_registered(n))
    assert named == sorted(LAYER_CALLS)
    for name in named:
        assert "builds" in _layer_and_op(name) and "not checked" not in _layer_and_op(name)
    assert pd.default_main_program().global_block().ops == []
    assert pd.default_startup_program().global_block().ops == []
    assert "builds softmax_with_cross_entropy, reduce_mean, not this op; no pass makes " \
           "it of them" in _layer_and_op("cross_entropy")


def test_ops_of_an_unknown_name_is_a_message_and_exit_code_2():
    done = _cli("ops", "fcx")
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "unknown op type 'fcx'" in done.stderr and "pd.layer.fc" in done.stderr


def test_the_readme_says_how_many_op_types_there_are():
    text = " ".join(README.read_text().split())
    forward = len(pd.registered_ops(include_grad=False))
    total = len(pd.registered_ops())
    assert (f"knows **{total} op types** ({forward} forward ops and {total - forward} "
            "gradient ops") in text


def test_ops_lists_each_op_with_its_one_line_doc():
    lines = _cli("ops").stdout.splitlines()
    assert len(lines) == len(pd.registered_ops())
    assert any(line.startswith("mul ") and "X" in line for line in lines)
    assert all(len(line.split(maxsplit=1)) == 2 for line in lines)


# --- feed errors ------------------------------------------------------------------------------
def test_a_feed_of_an_unknown_name_lists_only_the_data_variables():
    x = pd.data("x", [-1, 4])
    y = pd.layer.fc(x, 3)
    exe = pd.Executor()
    exe.run(pd.default_startup_program())
    with pytest.raises(pd.FeedError) as err:
        exe.run(feed={"xx": np.ones((2, 4), np.float32)}, fetch_list=[y])
    text = str(err.value)
    assert "did you mean x?" in text and "variables no op writes: ['x']" in text
    assert "fc_0.tmp" not in text         # before: written by mul and elementwise_add, listed


# --- builders check their arguments ------------------------------------------------------------
@pytest.mark.parametrize("size, given", [("3", "str '3'"), (3.5, "float 3.5"), (0, "int 0"),
                                         (True, "bool True"), (-2, "int -2")])
def test_fc_refuses_a_size_that_is_not_a_positive_int(size, given):
    x = pd.data("x", [-1, 4])
    with pytest.raises(pd.BuildError, match=f"fc: argument size must be an int >= 1, got "
                                            f"{given}"):
        pd.layer.fc(x, size)
    assert pd.default_main_program().global_block().ops == []     # nothing half-built


def test_fc_refuses_num_flatten_dims_out_of_range():
    x = pd.data("x", [-1, 4])
    with pytest.raises(pd.BuildError, match=r"num_flatten_dims must be an int in \[1, 1\]"):
        pd.layer.fc(x, 3, num_flatten_dims=2)


def test_an_unknown_activation_lists_every_accepted_name():
    x = pd.data("x", [-1, 4])
    with pytest.raises(pd.BuildError) as err:
        pd.layer.fc(x, 3, act="rleu")
    assert all(name in str(err.value) for name in pd.layers.ACTIVATIONS)
    assert pd.default_main_program().global_block().ops == []     # checked before building


# --- the README, as typed --------------------------------------------------------------------
README = Path(__file__).resolve().parents[1] / "README.md"


def _python_blocks():
    """The README's ```python blocks, in order, verbatim."""
    return re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)


def _run_in_a_kernel(*cells):
    """Run ``cells`` in a new IPython kernel (nbclient); the executed notebook."""
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(c) for c in cells]
    NotebookClient(nb, timeout=300, kernel_name="python3", allow_errors=True).execute()
    return nb


def _errors(cell):
    return [o for o in cell.outputs if o.output_type == "error"]


def test_the_readme_first_program_runs_as_written(tmp_path):
    first = next(b for b in _python_blocks() if "import paddle_nb as pd" in b)
    script = tmp_path / "first.py"
    script.write_text(first)
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          timeout=600, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "mul" in done.stdout and "softmax" in done.stdout


def test_the_readme_notebook_example_runs_as_typed_in_a_new_notebook():
    """The cells after "In a notebook", typed into a fresh kernel: no ``import`` first."""
    blocks = _python_blocks()
    start = next(i for i, b in enumerate(blocks) if b.startswith("%load_ext paddle_nb"))
    cells = [b for b in blocks[start:start + 2]]
    assert cells[1].startswith("%%paddle")
    nb = _run_in_a_kernel(*cells)
    assert not any(_errors(c) for c in nb.cells), [_errors(c) for c in nb.cells]


def test_the_extension_leaves_a_pd_of_the_users_own():
    nb = _run_in_a_kernel("import types\npd = types.SimpleNamespace(mine=True)",
                          "%load_ext paddle_nb", "print(pd.mine)")
    assert nb.cells[2].outputs[0].text == "True\n"


# --- cell numbers in errors --------------------------------------------------------------------
# A cell whose op builds but fails when it runs (labels numbered 1..3 for 3 classes): every
# later --run of the program fails on it, under whichever cell the student runs then.
BAD_LABELS_CELL = ("%%paddle\nh = pd.minibatch(np.ones((2, 3), np.float32))\n"
                   "label = pd.minibatch([[1], [3]], dtype='int64')\n"
                   "loss = pd.layer.softmax_with_cross_entropy(h, label)")


def test_errors_in_paddle_cells_name_the_cell_as_the_notebook_numbers_it():
    """IPython 9 counts on to the next cell before one runs: errors said ``Cell In[4]`` for
    the cell shown as [3], at build time and for an op that fails at run time."""
    nb = _run_in_a_kernel(
        "%load_ext paddle_nb",
        "import numpy as np",
        "%%paddle\nx = pd.data('x', [-1, 3])\ny = pd.layer.fc(x, 'a')",
        BAD_LABELS_CELL,
        "%%paddle --run\nz = pd.layer.fc(h, 2)",
        "%paddle status")
    built, ran = nb.cells[2], nb.cells[4]
    assert built.execution_count == 3
    assert "at Cell In[3], line 3" in "\n".join(_errors(built)[0].traceback)
    assert ran.execution_count == 5
    assert ("op created at: Cell In[4], line 4: loss = pd.layer.softmax_with_cross_entropy("
            "h, label)") in _errors(ran)[0].evalue
    status = nb.cells[5].outputs[0].text
    assert "In[4] 'h = pd.minibatch" in status and "In[5] 'z = pd.layer.fc" in status


def test_a_run_failing_on_an_earlier_cells_op_says_which_cell_to_fix():
    """Item 8: the error shows under the innocent cell; it must name the cell to fix. Run
    from the cell that built the op, it names no other cell; once that cell is fixed and
    run again (``--cell labels`` makes the three versions one cell), the program runs."""
    bad = BAD_LABELS_CELL.replace("%%paddle", "%%paddle --cell labels")
    fixed = bad.replace("[[1], [3]]", "[[0], [2]]").replace("--cell", "--run --cell")
    nb = _run_in_a_kernel(
        "%load_ext paddle_nb",
        "import numpy as np",
        bad,
        "%%paddle --run\nz = pd.layer.fc(h, 2)",
        bad.replace("--cell", "--run --cell"),
        fixed)
    innocent = "\n".join(_errors(nb.cells[3])[0].traceback)
    assert "IndexRangeError" in innocent and "slot Label" in innocent
    assert "The failing op comes from another cell, In[3], not this one" in innocent
    own = "\n".join(_errors(nb.cells[4])[0].traceback)
    assert "IndexRangeError" in own and "another cell" not in own
    assert not _errors(nb.cells[5])


def test_the_empty_default_program_points_to_the_notebooks_program():
    """Item 12: print(pd.default_main_program()) in a notebook printed an empty block."""
    nb = _run_in_a_kernel(
        "%load_ext paddle_nb",
        "%%paddle --show none\nx = pd.minibatch([[1.0, 2.0]])",
        "print(pd.default_main_program())",
        "print(pd.notebook.program().main)")
    default = nb.cells[2].outputs[0].text
    assert "pd.notebook.program().main" in default and "%%paddle cells" in default
    assert "feed" not in default and "x = " not in default
    assert "minibatch_0" in nb.cells[3].outputs[0].text
    assert "%%paddle cells" not in nb.cells[3].outputs[0].text


# --- short errors in plain cells -------------------------------------------------------------
def test_an_error_from_a_direct_exe_run_shows_the_message_and_the_users_line():
    nb = _run_in_a_kernel(
        "%load_ext paddle_nb",
        "import numpy as np\nx = pd.data('x', [-1, 4])\ny = pd.layer.fc(x, 2)\n"
        "exe = pd.Executor()\nexe.run(pd.default_startup_program())",
        "exe.run(feed={'xx': np.ones((2, 4), np.float32)}, fetch_list=[y])",
        "raise ValueError('not ours')")
    shown = "\n".join(_errors(nb.cells[2])[0].traceback)
    assert shown.startswith("FeedError: cannot feed 'xx'")
    assert "at Cell In[3], line 1: exe.run(" in shown
    assert "executor.py" not in shown and "paddle_nb/core" not in shown   # no library frames
    other = "\n".join(_errors(nb.cells[3])[0].traceback)
    assert "ValueError" in other and "Cell" in other                     # left as IPython has it


def test_an_interrupt_during_training_shows_the_users_line_and_the_undo_note():
    """Kernel > Interrupt while a training loop runs: the note says where and that the run
    was undone; no library frames above it. (The interrupt is raised in the kernel by a
    timer thread, as the kernel's SIGINT handler would.)"""
    train = ("import numpy as np, signal, threading\n"
             "x = pd.data('x', [-1, 4])\nloss = pd.mean(pd.layer.fc(x, 2))\n"
             "pd.optimizer.SGD(0.1).minimize(loss)\nexe = pd.Executor()\n"
             "exe.run(pd.default_startup_program())\n"
             "threading.Timer(0.5, lambda: signal.raise_signal(signal.SIGINT)).start()\n"
             "for _ in range(10**6):\n"
             "    exe.run(feed={'x': np.ones((2, 4), np.float32)}, fetch_list=[loss])")
    # The timer's signal lands inside Executor.run most of the time; now and then it lands
    # in the cell's own loop between two runs, where IPython's plain traceback (the
    # user's line, no library frames) is the right answer. Try until it lands in a run.
    for _ in range(5):
        nb = _run_in_a_kernel("%load_ext paddle_nb", train)
        shown = "\n".join(_errors(nb.cells[1])[0].traceback)
        if shown.startswith("KeyboardInterrupt"):
            break
        plain = re.sub(r"\x1b\[[0-9;]*m", "", shown)
        assert "KeyboardInterrupt" in plain and "exe.run(" in plain, plain
        assert "paddle_nb/" not in plain and "executor.py" not in plain, plain
    assert shown.startswith("KeyboardInterrupt"), "the interrupt never landed in a run"
    assert "at Cell In[2], line 9: exe.run(" in shown
    # at an op (block 0 > op k) or, now and then, between two of them
    assert "paddle_nb: interrupted in block 0 > op" in shown or \
        "paddle_nb: interrupted in Executor.run, between ops" in shown
    assert "the run was undone" in shown and "executor.py" not in shown
