"""The %%paddle magic in an in-process IPython shell: cells build live programs, re-running
a cell replaces what it built (same names), errors are short and roll the cell back."""
import re
import sys

import numpy as np
import pytest
from IPython.core.error import UsageError      # IPython comes with the [dev] extra
from IPython.core.interactiveshell import InteractiveShell

import paddle_nb as pd
from paddle_nb.examples import block_and_scope
from paddle_nb.notebook import magic

IFELSE_CELL = "%%paddle --run --show none\n" + block_and_scope.IFELSE
RNN_CELL = "%%paddle --run --show none\n" + block_and_scope.RNN

CELL_A = """%%paddle --show none
x = pd.minibatch([1.0, 2.0, 3.0])
h = pd.layer.fc(x, 2)
"""
CELL_B = """%%paddle --run --show none
out = h * 2.0
"""


@pytest.fixture(scope="module")
def shell():
    ip = InteractiveShell.instance()
    magic.load_ipython_extension(ip)
    ip.run_cell("import paddle_nb as pd", store_history=True)
    yield ip
    magic.unload_ipython_extension(ip)


@pytest.fixture
def ip(shell):
    magic.get_notebook(shell).reset()
    shell.reset()                         # a fresh namespace: no Variables of earlier tests
    shell.run_cell("import paddle_nb as pd", store_history=True)
    yield shell
    magic.get_notebook(shell).reset()
    if hasattr(shell, "kernel"):
        del shell.kernel


def run(ip, source):
    return ip.run_cell(source, store_history=True)


def ok(ip, source):
    result = run(ip, source)
    assert result.error_in_exec is None, result.error_in_exec
    return result.result


def program(ip, name="main"):
    return magic.get_notebook(ip).program(name)


def op_types(prog, block=0):
    return [op.type for op in prog.main.block(block).ops]


def all_var_names(prog):
    return sorted(n for b in prog.main.blocks for n in b.table.vars)


# --- the extension and its flags --------------------------------------------------------
def test_extension_registers_line_and_cell_magic(ip):
    magics = ip.magics_manager.magics
    assert "paddle" in magics["cell"] and "paddle" in magics["line"]
    magic.load_ipython_extension(ip)          # loading twice keeps one set of programs
    assert sum(isinstance(m, magic.PaddleMagics)
               for m in ip.magics_manager.registry.values()) == 1


def test_help_lists_the_flags(ip, capsys):
    run(ip, "%%paddle?")
    out = capsys.readouterr().out
    for flag in ("--program", "--run", "--step", "--place", "--show", "--fetch"):
        assert flag in out


def test_a_bad_flag_is_a_usage_error_without_traceback(ip, capsys):
    result = run(ip, "%%paddle --bogus\nx = pd.var(1)")
    assert isinstance(result.error_in_exec, UsageError)
    out = capsys.readouterr()
    text = out.out + out.err
    assert "UsageError" in text and "--bogus" in text and "Traceback" not in text
    assert "main" not in magic.get_notebook(ip).programs        # nothing was built
    assert isinstance(run(ip, "%%paddle --show nope\nx = 1").error_in_exec, UsageError)
    assert isinstance(run(ip, "%paddle frobnicate").error_in_exec, UsageError)


# --- the Block and Scope design's examples as cells ------------------------------------------
def test_block_and_scope_doc_ifelse_example_as_a_cell(ip):
    got = ok(ip, IFELSE_CELL)
    assert isinstance(got, dict) and {"o1", "o2", "x", "cond"} <= set(got)
    assert "d" not in got                  # a branch's variable: not in the global block
    w = program(ip).scope.find_var("fc_0.w_0").get()[0, 0]
    np.testing.assert_allclose(got["o1"], [[10 * w], [21], [31]], rtol=1e-6)
    np.testing.assert_allclose(got["o2"], [[10 * w + 1], [1], [1]], rtol=1e-6)
    np.testing.assert_array_equal(got["cond"], [[False], [True], [True]])


def test_block_and_scope_doc_rnn_example_as_a_cell(ip):
    got = ok(ip, RNN_CELL)
    want_a, want_b, hv = [], [], 0.0
    for xv in (10, 20, 30):
        a_t, b_t = 0.314 * xv, 0.375 * hv
        hv = 1 / (1 + np.exp(-(a_t + b_t)))
        want_a.append([a_t])
        want_b.append([b_t])
    np.testing.assert_allclose(got["o1"], want_a, rtol=1e-6)
    np.testing.assert_allclose(got["o2"], want_b, rtol=1e-6)


def test_run_shows_a_table_and_fetch_picks_the_names(ip, capsys):
    ok(ip, CELL_A)
    got = ok(ip, "%%paddle --run --show none --fetch h,fc_0.w_0\nq = h + 1.0")
    assert list(got) == ["h", "fc_0.w_0"] and got["h"].shape == (3, 2)
    out = capsys.readouterr().out
    assert "name" in out and "shape" in out and "fc_0.w_0" in out and "(2,)" not in out


# --- re-running cells ------------------------------------------------------------------------
def test_rerunning_a_cell_replaces_it_with_the_same_names(ip):
    ok(ip, IFELSE_CELL)
    prog = program(ip)
    types, names = op_types(prog), all_var_names(prog)
    startup_ops = len(prog.startup.global_block().ops)
    ok(ip, IFELSE_CELL)
    assert op_types(prog) == types and all_var_names(prog) == names
    assert prog.main.num_blocks == 3                 # the branches' blocks, not 5
    assert len(prog.startup.global_block().ops) == startup_ops
    assert "fc_0.w_0" in names and "fc_1.w_0" not in all_var_names(prog)
    assert ip.user_ns["o1"].name == "ifelse_0.out_0"


def test_a_reader_cell_survives_rerunning_the_cell_it_reads(ip):
    ok(ip, CELL_A)
    first = ok(ip, CELL_B)["out"]
    prog = program(ip)
    ok(ip, CELL_A)                                      # A's ops go back before B's
    assert op_types(prog) == ["assign_value", "mul", "elementwise_add", "scale"]
    again = ok(ip, CELL_B)["out"]
    assert again.shape == first.shape == (3, 2)
    assert ok(ip, "%%paddle --run --show none --fetch out\npass")["out"].shape == (3, 2)
    assert len(prog.cells) == 3


def test_out_of_order_cells(ip):
    result = run(ip, CELL_B)                            # h is not defined yet
    assert isinstance(result.error_in_exec, NameError)
    assert op_types(program(ip)) == []
    ok(ip, CELL_A)
    got = ok(ip, CELL_B)
    x = np.array([[1.0], [2.0], [3.0]], np.float32)
    scope = program(ip).scope
    w, b = scope.find_var("fc_0.w_0").get(), scope.find_var("fc_0.b_0").get()
    np.testing.assert_allclose(got["out"], (x @ w + b) * 2, rtol=1e-6)


def test_a_cell_moves_after_a_cell_it_now_reads(ip):
    # Jupyter cell ids: the same cell, edited, replaces its previous version.
    class Kernel:
        cell_id = "cell-1"

        def get_parent(self):
            return {"metadata": {"cellId": self.cell_id}}

    ip.kernel = Kernel()
    ok(ip, "%%paddle --show none\nk = pd.var(2.0)")              # cell-1
    ip.kernel.cell_id = "cell-2"
    ok(ip, "%%paddle --show none\nv = pd.var(5.0)")              # cell-2
    ip.kernel.cell_id = "cell-1"
    got = ok(ip, "%%paddle --run --show none\nk = v * 3.0")      # cell-1 edited
    np.testing.assert_allclose(got["k"], [15.0])
    prog = program(ip)
    assert op_types(prog) == ["assign_value", "scale"]           # cell-2's op first now
    assert len(prog.cells) == 2


def test_edited_cell_skips_names_another_cell_holds(ip):
    ok(ip, "%%paddle --cell first --show none\nx = pd.minibatch([1.0, 2.0])\n"
           "h = pd.layer.fc(x, 2)")
    ok(ip, "%%paddle --cell second --show none\ng = pd.layer.fc(h, 2)")    # fc_1
    ok(ip, "%%paddle --cell first --show none\nx = pd.minibatch([1.0, 2.0])\n"
           "h = pd.layer.fc(x, 2)\nh2 = pd.layer.fc(h, 2)")
    names = all_var_names(program(ip))
    assert {"fc_0.w_0", "fc_1.w_0", "fc_2.w_0"} <= set(names)      # fc_1 stays second's
    assert ip.user_ns["h2"].name.startswith("fc_2.")
    ok(ip, "%%paddle --cell third --show none\nk = pd.layer.fc(h, 2)")
    assert ip.user_ns["k"].name.startswith("fc_3.")


def test_rerunning_a_cell_reinitializes_its_parameters_only(ip):
    ok(ip, CELL_A)
    ok(ip, CELL_B)
    scope = program(ip).scope
    scope.find_var("fc_0.w_0").set(np.ones((1, 2), np.float32))
    got = ok(ip, CELL_B)["out"]                          # B re-run: A's weights kept
    np.testing.assert_allclose(got[:, 0], [2.0, 4.0, 6.0])
    ok(ip, CELL_A)                                       # A re-run: new weights
    assert scope.find_var("fc_0.w_0") is None
    ok(ip, CELL_B)
    assert not np.array_equal(scope.find_var("fc_0.w_0").get(), np.ones((1, 2)))


def test_rerun_before_a_later_control_flow_cell_leaves_empty_blocks(ip, capsys, no_widgets):
    ok(ip, IFELSE_CELL.replace("--run ", "--run --cell ie "))          # blocks 1, 2
    ok(ip, RNN_CELL.replace("--run ", "--run --cell rnn "))            # block 3
    got = ok(ip, IFELSE_CELL.replace("--run ", "--run --cell ie "))    # blocks 4, 5; 1, 2 empty
    prog = program(ip)
    assert [len(b.table.ops) for b in prog.main.blocks][1:3] == [0, 0]
    assert prog.main.num_blocks == 6
    w = prog.scope.find_var("fc_0.w_0").get()[0, 0]
    np.testing.assert_allclose(got["o1"], [[10 * w], [21], [31]], rtol=1e-6)
    capsys.readouterr()
    ok(ip, "%paddle show --show tree")
    assert "(empty: left by a re-run cell)" in capsys.readouterr().out
    ok(ip, RNN_CELL.replace("--run ", "--run --cell rnn "))            # trailing: block 6 again
    assert prog.main.num_blocks == 7
    capsys.readouterr()
    got = ok(ip, "%paddle --run --fetch o1")
    np.testing.assert_allclose(got["o1"], [[3.14], [6.28], [9.42]], rtol=1e-6)
    assert "block 0" not in capsys.readouterr().out   # the line magic shows no program unasked
    ok(ip, "%paddle --run --fetch o1 --show scope")   # ... and what it is asked to
    assert "Scope 'program main'" in capsys.readouterr().out


def test_feed_and_a_run_error(ip, capsys):
    result = run(ip, '%%paddle --run --show none\nx = pd.data("x", [None, 2])\ny = x * 2.0')
    assert isinstance(result.error_in_exec, pd.ExecutionError)
    out = capsys.readouterr().out
    assert "Cell In[" in out and "y = x * 2.0" in out and "Traceback" not in out
    assert op_types(program(ip)) == ["scale"]                  # built; only the run failed
    ok(ip, "import numpy as np")
    got = ok(ip, '%paddle --run --feed "{\'x\': np.ones((1, 2), \'float32\')}" --fetch y')
    np.testing.assert_allclose(got["y"], [[2.0, 2.0]])


# --- errors -----------------------------------------------------------------------------
def test_shape_error_points_at_the_cell_line_and_changes_nothing(ip, capsys):
    ok(ip, CELL_A)
    prog = program(ip)
    before = (prog.main.to_bytes(), prog.startup.to_bytes(), dict(prog.cells))
    h = ip.user_ns["h"]
    result = run(ip, "%%paddle --show none\nh = pd.layer.fc(x, 3)\n"
                     "bad = pd.matmul(h, pd.var(shape=[5, 2]))\n")
    assert isinstance(result.error_in_exec, pd.ShapeError)
    out = capsys.readouterr().out
    # (IPython 8 and 9 number cells differently: accept the number IPython gave it)
    assert re.search(r"Cell In\[\d+\], line 3", out)
    assert "pd.matmul(h, pd.var(shape=[5, 2]))" in out
    assert "Traceback" not in out and "paddle_nb/" not in out
    assert (prog.main.to_bytes(), prog.startup.to_bytes(), dict(prog.cells)) == before
    assert ip.user_ns["h"] is h and "bad" not in ip.user_ns
    ok(ip, CELL_B)                                        # still builds on the old cell


def test_a_failing_rerun_keeps_the_cells_previous_version(ip, capsys):
    ok(ip, "%%paddle --cell c --show none\nx = pd.minibatch([1.0, 2.0])\ny = x * 2.0")
    prog = program(ip)
    before = prog.main.to_bytes()
    result = run(ip, "%%paddle --cell c --show none\nx = pd.minibatch([1.0, 2.0])\n"
                     "ie = pd.ifelse()\nie.output(x)\n")
    assert isinstance(result.error_in_exec, pd.BuildError)
    out = capsys.readouterr().out
    assert "Cell In[" in out and "line 4" in out and "ie.output(x)" in out
    assert prog.main.to_bytes() == before and prog.main.num_blocks == 1
    assert ok(ip, "%%paddle --run --show none --fetch y\npass")["y"].tolist() == [[2], [4]]


def test_ops_record_the_cell_line(ip):
    ok(ip, CELL_A)
    mul = next(op for op in program(ip).main.global_block().ops if op.type == "mul")
    assert re.match(r"Cell In\[\d+\], line 3", mul.created_at)
    assert "pd.layer.fc(x, 2)" in mul.created_at


def test_a_python_error_shows_a_traceback_from_the_cell(ip, capsys):
    result = run(ip, "%%paddle --show none\nx = pd.var(1.0)\nundefined_function(x)\n")
    assert isinstance(result.error_in_exec, NameError)
    out = capsys.readouterr().out
    assert "line 3" in out and "magic.py" not in out and "session.py" not in out
    assert "x" not in ip.user_ns                 # its Variable went with the rolled-back cell
    assert op_types(program(ip)) == []


def test_a_syntax_error_builds_nothing(ip, capsys):
    result = run(ip, "%%paddle --show none\nx = pd.var(1.0)\ny = (x +\n")
    assert isinstance(result.error_in_exec.__cause__, SyntaxError)
    out = re.sub(r"\x1b\[[0-9;]*m", "", capsys.readouterr().out)     # no colours
    assert "Cell In[" in out and "line 3" in out and "SyntaxError" in out
    assert "magic.py" not in out
    assert op_types(program(ip)) == []


# --- %paddle status / reset / show, named programs ------------------------------------------
def test_status_reset_and_show(ip, capsys):
    ok(ip, CELL_A)
    ok(ip, CELL_B)
    capsys.readouterr()
    ok(ip, "%paddle status")
    out = capsys.readouterr().out
    assert "program 'main'" in out and "names: x, h" in out and "names: out" in out
    ok(ip, "%paddle show")
    assert "mul(" in capsys.readouterr().out
    ok(ip, "%paddle show main --show none")
    assert capsys.readouterr().out == ""
    ok(ip, "%paddle reset main")
    assert "main" not in magic.get_notebook(ip).programs
    assert isinstance(run(ip, "%paddle show main").error_in_exec, UsageError)


def test_named_programs_are_separate(ip):
    ok(ip, "%%paddle --program a --show none\np = pd.var(1.0)\nq = p + 1.0")
    ok(ip, "%%paddle --program b --show none\np = pd.var(2.0)")
    a, b = program(ip, "a"), program(ip, "b")
    assert op_types(a) == ["assign_value", "scale"]
    assert op_types(b) == ["assign_value"]
    assert all_var_names(b) == ["var_0"]                  # b has its own name counters
    got = ok(ip, "%paddle --run --program a --fetch q")
    np.testing.assert_allclose(got["q"], [2.0])
    ok(ip, "%paddle reset")
    assert magic.get_notebook(ip).programs == {}


def test_a_cell_that_moves_to_another_program_leaves_the_first(ip):
    ok(ip, "%%paddle --cell c --program a --show none\np = pd.var(1.0)")
    ok(ip, "%%paddle --cell c --program b --show none\np = pd.var(1.0)")
    assert op_types(program(ip, "a")) == [] and op_types(program(ip, "b")) == ["assign_value"]


# --- showing and stepping without the widgets -----------------------------------------------
@pytest.fixture
def no_widgets(monkeypatch):
    monkeypatch.setitem(sys.modules, "paddle_nb.notebook.widgets", None)   # import fails


def test_show_modes_fall_back_to_text(ip, capsys, no_widgets):
    ok(ip, IFELSE_CELL.replace("--run --show none", "--show tree"))
    out = capsys.readouterr().out
    assert "block 0" in out and "block 1  conditional_block@" in out
    ok(ip, "%paddle show --show code")
    assert "{  // block 0" in capsys.readouterr().out
    ok(ip, "%%paddle --run --show scope\nzz = x + 1.0")
    assert "fc_0.w_0" in capsys.readouterr().out
    ok(ip, "%paddle show --show graph")
    assert capsys.readouterr().out.strip()


def test_step_opens_the_debugger(ip, capsys, no_widgets):
    dbg = ok(ip, CELL_A.replace("--show none", "--step --show none"))
    assert "block 0 op 1: mul" in capsys.readouterr().out
    assert pd.notebook.program().debugger is dbg          # reachable without Out[n] / _
    step = dbg.step()
    assert step.op.type == "assign_value"
    dbg.run_to_end()
    assert dbg.finished and dbg.error is None


def test_step_shows_the_program_once_inside_the_debugger(ip):
    """%%paddle --step used to print the program's code above the DebuggerView, which shows
    the program itself: the cell's output is now the view and nothing else."""
    from IPython.utils.capture import capture_output   # noqa: PLC0415
    from paddle_nb.notebook.widgets import DebuggerView, ProgramView   # noqa: PLC0415

    def outputs(cell):
        with capture_output() as cap:
            view = ok(ip, cell)
        printed = cap.stdout.split("Out[", 1)[0]   # what came before the cell's result
        return view, printed, cap.outputs

    view, printed, displayed = outputs(CELL_A.replace("--show none", "--step"))
    assert isinstance(view, DebuggerView)
    assert printed == "" and displayed == []      # no code printed, no other view
    views = [w for w in _descendants(view) if isinstance(w, ProgramView)]
    assert views == [view.program_view] and view.program_view.tab == "code"
    # --show graph with --step opens the debugger's graph tab instead of a second view
    view, printed, displayed = outputs(CELL_A.replace("--show none", "--step --show graph"))
    assert printed == "" and displayed == [] and view.program_view.tab == "graph"
    # without --step a cell still shows its code
    _, printed, _ = outputs(CELL_A.replace("--show none", ""))
    assert printed.count("{  // block 0") == 1


def _descendants(widget):
    yield widget
    for child in getattr(widget, "children", ()):
        yield from _descendants(child)


def test_check_nan_inf_stops_the_step_debugger_at_the_first_bad_value(ip, capsys, no_widgets):
    """--check-nan-inf: --step stops at the op that made the NaN with its inputs and the
    cell's line; --run raises there, naming the op."""
    cell = ("%%paddle --step --check-nan-inf --show none\n"
            "v = pd.minibatch([[1.0, -2.0]])\n"
            "w = pd.layers.log(v)\n"
            "u = w * 2.0")
    dbg = ok(ip, cell)
    capsys.readouterr()
    dbg.cont()
    bad = dbg.bad_value
    assert bad is not None and bad.op_type == "log" and dbg.current.op.type == "log"
    assert bad.nan == 1 and bad.index == (0, 1)
    assert "w = pd.layers.log(v)" in (bad.created_at or "")
    assert bad.inputs[0]["values"] == [[1.0, -2.0]]
    with pytest.raises(pd.ExecutionError, match="log"):
        ip.run_cell(cell.replace("--step", "--run"), store_history=False).raise_error()


# --- --step after a broken cell ---------------------------------------------------------------
# A cell whose op builds but fails when it runs (labels 1..3 for 3 classes): a later
# --step cell's debugger steps into it.
BROKEN = ("%%paddle --show none\nh = pd.minibatch(np.ones((2, 3), np.float32))\n"
          "label = pd.minibatch([[1], [3]], dtype='int64')\n"
          "loss = pd.layer.softmax_with_cross_entropy(h, label)")
STEPPER = "%%paddle --step\nz = pd.layer.fc(h, 2)"


class _Kernel:
    """What the magic reads of a Jupyter kernel: the running cell's id."""

    def __init__(self, cell_id):
        self.cell_id = cell_id

    def get_parent(self):
        return {"metadata": {"cellId": self.cell_id}}


def test_step_after_a_broken_cell_names_that_cell_and_rerunning_it_replaces_its_op(ip):
    """The debugger's status said only "op created at: Cell In[3]"; it says, as --run does,
    that the op comes from another cell and how to fix it. Fixing that cell (the same
    Jupyter cell id) replaces its op: one softmax_with_cross_entropy, not a second copy."""
    ok(ip, "import numpy as np")
    ip.kernel = _Kernel("labels")
    ok(ip, BROKEN)
    ip.kernel.cell_id = "model"
    view = ok(ip, STEPPER)
    view.handle_message({"cmd": "continue"})
    prog = program(ip)
    label = prog.cells["id:labels"].label
    failing = op_types(prog).index("softmax_with_cross_entropy")
    assert view.controls.state == "error" and "IndexRangeError" in view.status
    assert (f"The failing op comes from another cell, {label}, not this one (its "
            f"softmax_with_cross_entropy op): fix that cell and run it again (its ops are "
            f"replaced), or %paddle reset main") in view.status
    assert view.program_view.failed == [0, failing]          # marked in the code
    ip.kernel.cell_id = "labels"
    ok(ip, BROKEN.replace("[[1], [3]]", "[[0], [2]]"))       # the fix, in the same cell
    assert op_types(prog).count("softmax_with_cross_entropy") == 1
    ip.kernel.cell_id = "model"
    view = ok(ip, STEPPER)
    view.handle_message({"cmd": "continue"})
    assert view.controls.state == "finished", view.status
    # the stepping cell's own op failing names no other cell
    ok(ip, "%%paddle --show none --cell own\nbad = pd.layers.reshape(h, [5, -1])")
    view = ok(ip, "%%paddle --step --show none --cell own\nbad = pd.layers.reshape(h, [5, -1])")
    view.handle_message({"cmd": "continue"})
    assert "reshape" in view.status and "another cell" not in view.status


def test_without_cell_ids_the_fix_hint_says_an_edited_cell_is_a_new_one(ip):
    """Where the front end sends no cell ids (a cell is known by its source), an edited
    cell would be a new cell and leave the bad op in: the hint says to reset instead."""
    ok(ip, "import numpy as np")
    ok(ip, BROKEN)
    view = ok(ip, STEPPER)
    view.handle_message({"cmd": "continue"})
    assert "not this one (its softmax_with_cross_entropy op): this front end sends no " \
           "cell ids" in view.status and "%paddle reset main, then run the fixed cells" \
           in view.status and "its ops are replaced" not in view.status
    ok(ip, BROKEN.replace("[[1], [3]]", "[[0], [2]]"))       # edited: a new cell ...
    assert op_types(program(ip)).count("softmax_with_cross_entropy") == 2   # ... as it said
