"""Every PaddleNBError pickles with its message, its attributes (the failing op, as an
OpDescription: its block path and the user's line) and its class: the way an error raised
in a Ray actor reaches the driver (paddle_nb/core/errors.py, PaddleNBError.__reduce__).

Each case makes its error the way the code really raises it (a failing run, a bad load, a
builder refusing an argument); a PaddleNBError subclass defined anywhere in paddle_nb
without a case here fails ``test_every_paddle_nb_error_has_a_case``."""
from __future__ import annotations

import ast
import importlib
import os
import pickle

import numpy as np
import pytest

import paddle_nb as pd
from paddle_nb.core.errors import OpDescription, PaddleNBError

from models import digits_mlp

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _raised(make) -> PaddleNBError:
    with pytest.raises(PaddleNBError) as e:
        make()
    return e.value


def _digits_run(feed_change=None, fetch=None, exe=None):
    main, startup, loss = digits_mlp("sgd")
    scope, exe = pd.Scope(), exe or pd.Executor()
    exe.run(startup, scope=scope)
    feed = {"x": np.ones((4, 64), np.float32), "label": np.zeros((4, 1), np.int64)}
    (feed_change or (lambda f: None))(feed)
    exe.run(main, feed=feed, fetch_list=[fetch or loss], scope=scope)


# --- one real failure per class ---------------------------------------------------------------
def _build_error():
    x = pd.data("x", [None, 4])
    pd.layer.fc(x, "3")


def _shape_error():
    x = pd.data("x", [None, 4])
    y = pd.data("y", [3])
    x + y


def _unknown_op_error():
    pd.default_main_program().global_block().append_op("elementwise_ad", {}, {})


def _program_format_error():
    pd.Program.from_bytes(b"\xff\xff\xff not a ProgramDesc")


def _pir_write_error():
    from paddle_nb.io.pir import program_to_pir
    program = pd.Program()
    with pd.program_guard(program):
        x = pd.data("x", [2, 2])
        pd.op.cholesky(X=x)
    program_to_pir(program)


def _io_format_error(tmp_path):
    main, startup, _ = digits_mlp("sgd")
    pd.io.load_params(pd.Executor(), str(tmp_path), main)          # nothing was saved there


def _save_error(tmp_path):
    main, _, _ = digits_mlp("sgd")
    pd.io.save_params(pd.Executor(), str(tmp_path), main)          # startup never ran


def _scope_error():
    g = pd.Scope()
    a = g.new_scope("a")
    g.delete_scope(a)
    g.delete_scope(a)


def _execution_error():                       # the NaN check: a located error with counts
    main, startup = pd.Program(), pd.Program()
    with pd.program_guard(main, startup):
        x = pd.data("x", [None, 2])
        y = pd.layers.log(x)
    pd.Executor(check_nan_inf=True).run(main, feed={"x": -np.ones((1, 2), np.float32)},
                                        fetch_list=[y], scope=pd.Scope())


def _index_range_error():
    def bad(feed):
        feed["label"][2, 0] = 17
    _digits_run(bad)


def _feed_error():
    _digits_run(lambda feed: feed.pop("label"))


def _fetch_error():
    _digits_run(fetch="fc_9.tmp_9")


def _validation_error():                      # a loaded program naming an op type unknown here
    from paddle_nb.core.framework_pb2 import ProgramDesc   # noqa: PLC0415
    from paddle_nb.core.validate import validate   # noqa: PLC0415
    main, _, _ = digits_mlp("sgd")
    desc = ProgramDesc.FromString(main.to_bytes())
    desc.blocks[0].ops[2].type = "relu_v9"
    validate(pd.Program.from_bytes(desc.SerializeToString()))


def _program_file_error(tmp_path):
    from paddle_nb.lab.program_file import resolve   # noqa: PLC0415
    resolve(str(tmp_path), "../../etc/passwd")


def _debugger_error():
    from paddle_nb.interactive.debugger import Debugger   # noqa: PLC0415
    main, startup, loss = digits_mlp("sgd")
    feed = {"x": np.ones((2, 64), np.float32), "label": np.zeros((2, 1), np.int64)}
    Debugger(main, feed, [loss], startup=startup).step_back()


def _notebook_not_written(tmp_path):
    from types import SimpleNamespace   # noqa: PLC0415
    from paddle_nb.lab.notebook_file import write_notebook   # noqa: PLC0415
    (tmp_path / "model.ipynb").mkdir()          # a folder where the notebook would go
    write_notebook(SimpleNamespace(full_path=str(tmp_path / "model.pdmodel"),
                                   path="model.pdmodel", root_dir=str(tmp_path)))


def _distributed_error():
    from paddle_nb.distributed.ray_runtime import call_pserver   # noqa: PLC0415
    # with Ray installed: no such pserver; without it: "the Ray runtime needs ray"
    call_pserver({}, "127.0.0.1:6170", "send", 0, {})


# class name -> (how it is made, what its message says, attributes it must carry across)
CASES = {
    "PaddleNBError": (lambda tmp: (_ for _ in ()).throw(PaddleNBError("the base class")),
                      "the base class", ()),
    "BuildError": (lambda tmp: _build_error(), "fc: argument size must be an int >= 1", ()),
    "ShapeError": (lambda tmp: _shape_error(), "cannot be broadcast", ()),
    "UnknownOpError": (lambda tmp: _unknown_op_error(), "unknown op type 'elementwise_ad'",
                       ()),
    "ProgramFormatError": (lambda tmp: _program_format_error(), "", ()),
    "IOFormatError": (lambda tmp: _io_format_error(tmp), "there is no file", ()),
    "PirFormatError": (lambda tmp: pd.io.program_from_pir("{}"), "not a PIR program", ()),
    "PirWriteError": (lambda tmp: _pir_write_error(), "inference program", ()),
    "SaveError": (lambda tmp: _save_error(tmp), "has no value in scope", ()),
    "ScopeError": (lambda tmp: _scope_error(), "not a kid", ()),
    "ExecutionError": (lambda tmp: _execution_error(), "has 2 NaN",
                       ("failed_op", "op_where", "output_slot", "var_name", "nan_count",
                        "inf_count")),
    "IndexRangeError": (lambda tmp: _index_range_error(),
                        "slot Label: class index 17 at Label[2, 0] is out of range",
                        ("failed_op", "slot", "value", "position", "low", "high")),
    "FeedError": (lambda tmp: _feed_error(), "variable 'label' has no value",
                  ("failed_op",)),
    "FetchError": (lambda tmp: _fetch_error(), "cannot fetch 'fc_9.tmp_9'", ()),
    "ValidationError": (lambda tmp: _validation_error(), "unknown op type 'relu_v9'",
                        ("problems",)),
    "ProgramFileError": (lambda tmp: _program_file_error(tmp), "outside the folder", ()),
    "DebuggerError": (lambda tmp: _debugger_error(), "nothing to step back to", ()),
    "DistributedError": (lambda tmp: _distributed_error(), "", ()),
    "NotebookNotWritten": (lambda tmp: _notebook_not_written(tmp), "is a folder",
                           ("status",)),
}


def _paddle_nb_error_classes() -> dict[str, type]:
    """Every PaddleNBError subclass defined in paddle_nb: the modules whose source
    defines a class deriving from an error are imported, then the class tree is read."""
    for dirpath, _, files in os.walk(os.path.join(ROOT, "paddle_nb")):
        for f in files:
            if not f.endswith(".py"):
                continue
            path = os.path.join(dirpath, f)
            tree = ast.parse(open(path, encoding="utf-8").read(), path)
            if any(isinstance(n, ast.ClassDef) and any(
                    (getattr(b, "id", None) or getattr(b, "attr", "")).endswith("Error")
                    for b in n.bases) for n in ast.walk(tree)):
                module = os.path.relpath(path, ROOT)[:-3].replace(os.sep, ".")
                importlib.import_module(module.removesuffix(".__init__"))
    found, todo = {}, [PaddleNBError]
    while todo:
        cls = todo.pop()
        if cls.__module__.startswith("paddle_nb"):   # not Ray's wrappers of them
            found[cls.__name__] = cls
        todo += cls.__subclasses__()
    return found


def test_every_paddle_nb_error_has_a_case():
    assert sorted(_paddle_nb_error_classes()) == sorted(CASES)


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_real_error_round_trips_through_pickle(name, tmp_path):
    make, words, attributes = CASES[name]
    error = _raised(lambda: make(tmp_path))
    assert type(error).__name__ == name, f"{type(error).__name__}: {error}"
    assert words in str(error)
    back = pickle.loads(pickle.dumps(error))
    assert type(back) is type(error)
    assert str(back) == str(error) and back.args == error.args
    for a in attributes:
        assert hasattr(error, a) and hasattr(back, a), a
    for a, value in vars(error).items():
        if a == "failed_op":
            continue
        if isinstance(value, np.ndarray):
            np.testing.assert_array_equal(getattr(back, a), value)
        else:
            assert getattr(back, a) == value, a
    op = getattr(error, "failed_op", None)
    if op is not None:                  # the Operator crosses as a description of it
        d = back.failed_op
        assert isinstance(d, OpDescription)
        assert (d.type, d.block_idx, d.index, d.inputs, d.outputs) == \
            (op.type, op.block.idx, op.idx, op.inputs, op.outputs)
        assert d.where == f"{op.block.path} > op {op.idx} {op.type}" and d.where in str(back)
        assert d.created_at == op.created_at and d.created_at in str(back)   # the user's line
        assert "test_error_pickling.py" in d.created_at or "models.py" in d.created_at
        assert pickle.loads(pickle.dumps(back)).failed_op == d      # and it crosses again
    assert not hasattr(back, "unpicklable_attributes")


def test_an_index_range_error_keeps_where_it_was():
    e = _raised(_index_range_error)
    back = pickle.loads(pickle.dumps(e))
    assert (back.slot, int(back.value), tuple(map(int, back.position)), back.low,
            back.high) == ("Label", 17, (2, 0), 0, 10)
    assert back.failed_op.type == "softmax_with_cross_entropy"
    assert back.failed_op.where.startswith("block 0 > op ")
    assert "models.py" in back.failed_op.created_at


def test_an_attribute_that_is_not_plain_data_is_left_out_and_named():
    """A front end's hook (the notebook magic sets ``_render_traceback_``, a closure) does
    not cross; the error does, saying what it left behind."""
    e = _raised(_feed_error)
    e._render_traceback_ = lambda: ["a closure"]
    back = pickle.loads(pickle.dumps(e))
    assert not hasattr(back, "_render_traceback_")
    assert back.unpicklable_attributes == ("_render_traceback_",)
    assert str(back) == str(e) and isinstance(back.failed_op, OpDescription)
