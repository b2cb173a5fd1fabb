"""Saving and loading (paddle_nb/io.py): Paddle's tensor format, round trips, PaddlePaddle's
own inference model, and the two guarantees: a failed load changes nothing in the scope, and
an interrupted save leaves the old files whole and no temporary file behind."""
import json
import os
import struct

import numpy as np
import pytest

import paddle_nb as pd
from paddle_nb.core.framework_pb2 import VarType

FIXTURES = os.path.join(os.path.dirname(__file__), "fixtures", "paddle")
META = json.load(open(os.path.join(FIXTURES, "meta.json")))
PARAMS = ["fc_0.b_0", "fc_0.w_0", "fc_1.b_0", "fc_1.w_0"]          # sorted: the file order


# --- helpers ----------------------------------------------------------------------------------
def _mlp(exe, scope=None):
    """x[?, 4] -> fc 8 relu -> fc 3 softmax, initialised by the startup program."""
    x = pd.data("x", [None, 4])
    h = pd.layer.fc(x, 8, act="relu")
    y = pd.layer.fc(h, 3, act="softmax")
    exe.run(pd.default_startup_program(), scope=scope)
    return x, y


def _batch(n=5, seed=0):
    return np.random.default_rng(seed).uniform(-1, 1, (n, 4)).astype(np.float32)


def _values(scope, names):
    return {n: scope.find_var(n).get() for n in names}


def _snapshot(scope):
    """Every variable of the scope: the value object itself and a copy of its contents."""
    snap = {}
    for name in scope.local_var_names():
        v = scope.find_local_var(name)
        value = v.get() if v.is_initialized() else None
        copy = np.array(value, copy=True) if isinstance(value, np.ndarray) else value
        snap[name] = (v.kind, value, copy)
    return snap


def _assert_unchanged(scope, snap):
    now = _snapshot(scope)
    assert sorted(now) == sorted(snap)
    for name, (kind, value, copy) in snap.items():
        kind2, value2, _ = now[name]
        assert kind2 == kind and value2 is value, name
        if isinstance(copy, np.ndarray):
            assert value2.dtype == copy.dtype and np.array_equal(value2, copy), name


def _files(directory):
    """Every file under ``directory`` (temporaries included) -> its bytes."""
    return {str(p.relative_to(directory)): p.read_bytes()
            for p in directory.rglob("*") if p.is_file()}


def _tensor_bytes(dims, data: bytes, dtype=VarType.FP32):
    """A tensor file written by hand, so its header can say one thing and its data another."""
    desc = VarType.TensorDesc(data_type=dtype, dims=dims).SerializeToString()
    return struct.pack("<IQIi", 0, 0, 0, len(desc)) + desc + data


# --- the tensor format ------------------------------------------------------------------------
def test_paddles_combined_file_parses_and_writes_back_byte_for_byte():
    raw = open(os.path.join(FIXTURES, "mlp_infer.pdiparams"), "rb").read()
    # the layout by hand, for the first tensor (fc_0.b_0, float32[8])
    version, lod_levels, tensor_version, desc_size = struct.unpack_from("<IQIi", raw, 0)
    assert (version, lod_levels, tensor_version) == (0, 0, 0)
    desc = VarType.TensorDesc.FromString(raw[20:20 + desc_size])
    assert desc.data_type == VarType.FP32 and list(desc.dims) == [8]
    # all of it, with io's parser and writer
    params = np.load(os.path.join(FIXTURES, "params.npz"))
    tensors = pd.io.parse_tensors(raw)
    assert len(tensors) == 4
    for name, t in zip(PARAMS, tensors):
        assert t.dtype == np.float32 and np.array_equal(t, params[name]), name
    assert b"".join(pd.io.serialize_tensor(t) for t in tensors) == raw


@pytest.mark.parametrize("array", [np.arange(6, dtype=np.int64).reshape(2, 3),
                                   np.array([True, False]), np.float64(2.5) * np.ones(()),
                                   np.zeros((0, 3), np.float16)])
def test_tensor_round_trip_keeps_dtype_and_shape(array):
    back, = pd.io.parse_tensors(pd.io.serialize_tensor(array))
    assert back.dtype == array.dtype and back.shape == array.shape
    assert np.array_equal(back, array)


# --- params and persistables ------------------------------------------------------------------
@pytest.mark.parametrize("filename", [None, "params"])
def test_params_round_trip_exactly(tmp_path, exe, filename):
    _mlp(exe)
    with pd.namespace("model_a"):
        pd.get_variable("W", [2, 2])                 # a name with '/': a subdirectory
    exe.run(pd.default_startup_program())
    names = PARAMS + ["model_a/W"]
    saved = _values(pd.scope.current(), names)
    pd.io.save_params(exe, str(tmp_path), filename=filename)
    if filename is None:
        assert sorted(_files(tmp_path)) == sorted(names)
        assert (tmp_path / "model_a" / "W").is_file()
    else:
        assert list(_files(tmp_path)) == ["params"]
        want = b"".join(pd.io.serialize_tensor(saved[n]) for n in sorted(names))
        assert (tmp_path / "params").read_bytes() == want

    fresh = pd.Scope()
    pd.io.load_params(exe, str(tmp_path), filename=filename, scope=fresh)
    assert sorted(fresh.local_var_names()) == sorted(names)
    for n in names:
        got = fresh.find_var(n).get()
        assert got.dtype == saved[n].dtype and np.array_equal(got, saved[n]), n


@pytest.mark.parametrize("filename", [None, "persistables"])
def test_persistables_round_trip_includes_learning_rate_and_accumulators(tmp_path, exe,
                                                                        filename):
    _mlp(exe)
    gb = pd.default_main_program().global_block()
    gb.create_var("learning_rate_0", [1], "float32", persistable=True)
    gb.create_var("fc_0.w_0_moment_0", [4, 8], "float32", persistable=True)
    gb.create_var("step_0", [1], "int64", persistable=True)
    scope = pd.scope.current()
    scope.var("learning_rate_0").set(np.array([0.1], np.float32))
    scope.var("fc_0.w_0_moment_0").set(np.full((4, 8), 0.5, np.float32))
    scope.var("step_0").set(np.array([7], np.int64))
    names = sorted(PARAMS + ["learning_rate_0", "fc_0.w_0_moment_0", "step_0"])
    saved = _values(scope, names)

    pd.io.save_persistables(exe, str(tmp_path / "p"), filename=filename)
    pd.io.save_params(exe, str(tmp_path / "only_params"), filename=filename)
    if filename is None:
        assert sorted(_files(tmp_path / "p")) == names
        assert sorted(_files(tmp_path / "only_params")) == PARAMS

    fresh = pd.Scope()
    pd.io.load_persistables(exe, str(tmp_path / "p"), filename=filename, scope=fresh)
    assert sorted(fresh.local_var_names()) == names
    for n in names:
        got = fresh.find_var(n).get()
        assert got.dtype == saved[n].dtype and np.array_equal(got, saved[n]), n


def test_saving_a_parameter_with_no_value_names_it_and_says_run_startup(tmp_path, exe):
    pd.layer.fc(pd.data("x", [None, 4]), 3)           # startup program not run
    with pytest.raises(pd.io.SaveError, match=r"'fc_0\.b_0'.*startup program"):
        pd.io.save_params(exe, str(tmp_path / "out"))
    assert not (tmp_path / "out").exists()            # nothing was written


def test_saving_a_value_that_does_not_match_its_declaration_fails(tmp_path, exe):
    _mlp(exe)
    pd.scope.current().find_var("fc_0.w_0").set(np.zeros((4, 8), np.float64))
    with pytest.raises(pd.io.SaveError, match=r"fc_0\.w_0.*dtype differs"):
        pd.io.save_params(exe, str(tmp_path))
    assert _files(tmp_path) == {}


# --- inference models ---------------------------------------------------------------------------
def test_inference_model_round_trip(tmp_path, exe):
    x, y = _mlp(exe)
    pd.mean(y)                                        # training-only tail: pruned away
    pd.layer.fc(x, 5)                                 # a branch y does not use: not saved
    exe.run(pd.default_startup_program())
    main = pd.default_main_program()
    n_ops = len(main.global_block().ops)
    xs = _batch()
    want, = exe.run(main, feed={"x": xs}, fetch_list=[y])

    assert pd.io.save_inference_model(str(tmp_path), ["x"], [y], exe) == [y.name]
    assert sorted(_files(tmp_path)) == ["model.pdiparams", "model.pdmodel"]
    assert len(main.global_block().ops) == n_ops      # the main program is untouched
    assert len(pd.io.parse_tensors((tmp_path / "model.pdiparams").read_bytes())) == 4

    scope = pd.Scope()
    prog, feed_names, fetch_targets = pd.io.load_inference_model(str(tmp_path), exe,
                                                                 scope=scope)
    assert feed_names == ["x"] and [v.name for v in fetch_targets] == [y.name]
    gb = prog.global_block()
    assert [op.type for op in gb.ops] == ["feed", "mul", "elementwise_add", "relu", "mul",
                                          "elementwise_add", "softmax", "fetch"]
    assert gb.var("feed").type == VarType.FEED_MINIBATCH and gb.var("feed").persistable
    assert gb.var("fetch").type == VarType.FETCH_LIST and gb.var("fetch").persistable
    assert sorted(p.name for p in prog.all_parameters()) == PARAMS
    assert sorted(scope.local_var_names()) == PARAMS
    got, = exe.run(prog, feed={feed_names[0]: xs}, fetch_list=fetch_targets, scope=scope)
    np.testing.assert_array_equal(got, want)


def test_inference_model_feed_and_fetch_columns_follow_the_given_order(tmp_path, exe):
    a = pd.data("a", [None, 2])
    b = pd.data("b", [None, 3])
    s = pd.add(pd.layer.fc(a, 4), pd.layer.fc(b, 4))
    t = pd.relu(s)
    exe.run(pd.default_startup_program())
    feed = {"a": np.ones((2, 2), np.float32), "b": np.full((2, 3), -0.5, np.float32)}
    want = exe.run(feed=feed, fetch_list=[t, s])

    pd.io.save_inference_model(str(tmp_path), ["b", "a"], [t, s], exe,
                               model_filename="m", params_filename="p")
    scope = pd.Scope()
    prog, feed_names, fetch_targets = pd.io.load_inference_model(str(tmp_path), exe, "m", "p",
                                                                 scope)
    assert feed_names == ["b", "a"] and [v.name for v in fetch_targets] == [t.name, s.name]
    cols = {op.output("Out")[0]: op.attr("col") for op in prog.global_block().ops
            if op.type == "feed"}
    assert cols == {"b": 0, "a": 1}
    got = exe.run(prog, feed=feed, fetch_list=fetch_targets, scope=scope)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)


def test_inference_model_refuses_a_feed_the_targets_do_not_use(tmp_path, exe):
    x, y = _mlp(exe)
    pd.data("unused", [None, 2])
    with pytest.raises(pd.BuildError, match="'unused' is not in the pruned inference program"):
        pd.io.save_inference_model(str(tmp_path), ["x", "unused"], [y], exe)
    assert _files(tmp_path) == {}


def test_paddles_inference_model_loads_and_matches_paddles_output(tmp_path, exe):
    scope = pd.Scope()
    prog, feed_names, fetch_targets = pd.io.load_inference_model(
        FIXTURES, exe, model_filename="mlp_infer.pdmodel",
        params_filename="mlp_infer.pdiparams", scope=scope)
    assert feed_names == META["infer_feed_names"]
    assert [v.name for v in fetch_targets] == META["infer_fetch_names"]
    params = np.load(os.path.join(FIXTURES, "params.npz"))
    for name in META["parameters"]:
        assert np.array_equal(scope.find_var(name).get(), params[name]), name
    x = np.load(os.path.join(FIXTURES, "x.npy"))
    prob, = exe.run(prog, feed={"x": x}, fetch_list=fetch_targets, scope=scope)
    np.testing.assert_allclose(prob, np.load(os.path.join(FIXTURES, "prob.npy")), atol=1e-5)

    # written back, the parameters are Paddle's file byte for byte
    pd.io.save_persistables(exe, str(tmp_path), prog, filename="p", scope=scope)
    assert (tmp_path / "p").read_bytes() == open(
        os.path.join(FIXTURES, "mlp_infer.pdiparams"), "rb").read()

    # Paddle's file does not say which persistables are parameters: save_params has
    # nothing to save, and says so (and what to use) instead of writing nothing
    with pytest.raises(pd.io.SaveError, match="no parameters, but 4 persistable.*"
                                              "save_persistables"):
        pd.io.save_params(exe, str(tmp_path / "params"), prog, scope=scope)
    assert not (tmp_path / "params").exists()
    # and saved again as an inference model (its old feed/fetch ops replaced), it still runs
    pd.io.save_inference_model(str(tmp_path / "again"), feed_names, fetch_targets, exe, prog,
                               scope=scope)
    again = pd.Scope()
    prog2, feeds2, fetch2 = pd.io.load_inference_model(str(tmp_path / "again"), exe,
                                                       scope=again)
    assert [op.type for op in prog2.global_block().ops] == META["op_types_infer"]
    prob2, = exe.run(prog2, feed={feeds2[0]: x}, fetch_list=fetch2, scope=again)
    np.testing.assert_array_equal(prob2, prob)


# --- a failed load changes nothing ----------------------------------------------------------------
@pytest.fixture
def saved(tmp_path, exe):
    """The MLP's parameters saved one file each (sep/) and combined (comb/params); then the
    scope's values are changed, so that a half-done load would show."""
    _mlp(exe)
    pd.io.save_params(exe, str(tmp_path / "sep"))
    pd.io.save_params(exe, str(tmp_path / "comb"), filename="params")
    scope = pd.scope.current()
    for n in PARAMS:
        scope.find_var(n).set(scope.find_var(n).get() + 1)
    return tmp_path


def _load_fails(exe, directory, filename, match, error=None):
    """Loading must raise a clear error and leave both a used scope and a fresh one as they
    were."""
    error = error or pd.io.IOFormatError
    for scope in (pd.scope.current(), pd.Scope()):
        snap = _snapshot(scope)
        with pytest.raises(error, match=match) as e:
            pd.io.load_params(exe, str(directory), filename=filename, scope=scope)
        assert isinstance(e.value, pd.PaddleNBError)
        _assert_unchanged(scope, snap)
    return str(e.value)


def test_truncated_combined_file(saved, exe):
    path = saved / "comb" / "params"
    path.write_bytes(path.read_bytes()[:-10])          # the last tensor (fc_1.w_0) is cut
    msg = _load_fails(exe, saved / "comb", "params", r"'fc_1\.w_0'.*truncated")
    assert str(path) in msg and "tensor 4 of 4" in msg


def test_truncated_single_file(saved, exe):
    path = saved / "sep" / "fc_1.w_0"
    path.write_bytes(path.read_bytes()[:30])           # cut inside the header
    msg = _load_fails(exe, saved / "sep", None, r"'fc_1\.w_0'.*truncated")
    assert str(path) in msg


def test_data_of_the_wrong_size(saved, exe):
    # the header says float32[4, 8] (128 bytes); only 30 floats follow
    (saved / "sep" / "fc_0.w_0").write_bytes(_tensor_bytes([4, 8], bytes(120)))
    _load_fails(exe, saved / "sep", None, r"'fc_0\.w_0'.*120 bytes into the 128 bytes")
    # a whole tensor, but not the declared shape
    (saved / "sep" / "fc_0.w_0").write_bytes(_tensor_bytes([8, 4], bytes(128)))
    _load_fails(exe, saved / "sep", None, r"'fc_0\.w_0'.*float32\[8, 4\].*shape differs")
    # the declared shape, but float64
    (saved / "sep" / "fc_0.w_0").write_bytes(_tensor_bytes([4, 8], bytes(256), VarType.FP64))
    _load_fails(exe, saved / "sep", None, r"'fc_0\.w_0'.*dtype differs")
    # a whole tensor and then more bytes
    (saved / "sep" / "fc_0.w_0").write_bytes(_tensor_bytes([4, 8], bytes(132)))
    _load_fails(exe, saved / "sep", None, r"'fc_0\.w_0'.*4 bytes follow")


def test_combined_file_with_more_tensors_than_the_program(saved, exe):
    path = saved / "comb" / "params"
    path.write_bytes(path.read_bytes() + pd.io.serialize_tensor(np.ones(3, np.float32)))
    _load_fails(exe, saved / "comb", "params", "bytes are left after the 4 tensors")


def test_missing_files(saved, exe):
    os.remove(saved / "sep" / "fc_1.b_0")
    msg = _load_fails(exe, saved / "sep", None, r"'fc_1\.b_0'.*no file")
    assert str(saved / "sep" / "fc_1.b_0") in msg
    _load_fails(exe, saved / "comb", "nothing_here", "no file")


def test_random_bytes(saved, exe):
    noise = np.random.default_rng(0).bytes(300)
    (saved / "comb" / "params").write_bytes(noise)
    _load_fails(exe, saved / "comb", "params", r"fc_0\.b_0")
    (saved / "sep" / "fc_1.b_0").write_bytes(noise)
    _load_fails(exe, saved / "sep", None, r"fc_1\.b_0")


def test_random_bytes_as_an_inference_model(tmp_path, exe):
    x, y = _mlp(exe)
    pd.io.save_inference_model(str(tmp_path), ["x"], [y], exe)
    scope = pd.Scope()
    (tmp_path / "model.pdmodel").write_bytes(np.random.default_rng(1).bytes(300))
    with pytest.raises(pd.ProgramFormatError, match="model.pdmodel"):
        pd.io.load_inference_model(str(tmp_path), exe, scope=scope)
    assert scope.local_var_names() == []


# --- an interrupted save keeps the old files ---------------------------------------------
class _HalfWrittenFile:
    """A file whose write stores half the bytes and then fails, like a full disk."""

    def __init__(self, f, exc):
        self.f, self.exc = f, exc

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        self.f.close()

    def write(self, data):
        self.f.write(data[:len(data) // 2])
        self.f.flush()
        raise self.exc

    def __getattr__(self, name):
        return getattr(self.f, name)


def _fail_on_write(monkeypatch, n, exc):
    """Make the ``n``-th file that paddle_nb.io opens for writing fail halfway."""
    opened = []

    def fake_open(file, mode="r", *args, **kw):
        f = open(file, mode, *args, **kw)
        if "w" not in mode:
            return f
        opened.append(file)
        return _HalfWrittenFile(f, exc) if len(opened) == n else f

    monkeypatch.setattr(pd.io.files, "open", fake_open, raising=False)


@pytest.mark.parametrize("filename, fail_at, exc", [
    ("params", 1, OSError(28, "No space left on device")),
    (None, 1, OSError(28, "No space left on device")),
    (None, 3, KeyboardInterrupt()),             # two files already complete, the third not
])
def test_interrupted_save_keeps_the_old_files_and_leaves_no_temporary(
        tmp_path, exe, monkeypatch, filename, fail_at, exc):
    _mlp(exe)
    pd.io.save_params(exe, str(tmp_path), filename=filename)
    before = _files(tmp_path)
    old = {n: v.copy() for n, v in _values(pd.scope.current(), PARAMS).items()}
    for n in PARAMS:
        pd.scope.current().find_var(n).set(old[n] * 2 + 1)

    _fail_on_write(monkeypatch, fail_at, exc)
    with pytest.raises(type(exc)):
        pd.io.save_params(exe, str(tmp_path), filename=filename)
    monkeypatch.undo()

    assert _files(tmp_path) == before                  # same files, same bytes, no temporaries
    fresh = pd.Scope()
    pd.io.load_params(exe, str(tmp_path), filename=filename, scope=fresh)
    for n in PARAMS:
        assert np.array_equal(fresh.find_var(n).get(), old[n]), n


def test_interrupted_inference_save_replaces_neither_file(tmp_path, exe, monkeypatch):
    x, y = _mlp(exe)
    pd.io.save_inference_model(str(tmp_path), ["x"], [y], exe)
    before = _files(tmp_path)
    z = pd.layer.fc(y, 2)                              # a different model, same directory
    exe.run(pd.default_startup_program())
    _fail_on_write(monkeypatch, 2, OSError(28, "No space left on device"))   # the params file
    with pytest.raises(OSError):
        pd.io.save_inference_model(str(tmp_path), ["x"], [z], exe)
    assert _files(tmp_path) == before                  # the model file was not replaced either


def test_a_name_that_is_not_a_plain_path_is_refused_as_a_file_but_fits_a_combined_one(
        tmp_path, exe):
    gb = pd.default_main_program().global_block()
    gb.create_parameter("../escape", [2])
    pd.scope.current().var("../escape").set(np.ones(2, np.float32))
    with pytest.raises(pd.io.SaveError, match=r"'\.\./escape' cannot have a file of its own"):
        pd.io.save_params(exe, str(tmp_path / "d"))
    assert _files(tmp_path) == {}
    pd.io.save_params(exe, str(tmp_path / "d"), filename="all")
    fresh = pd.Scope()
    pd.io.load_params(exe, str(tmp_path / "d"), filename="all", scope=fresh)
    assert np.array_equal(fresh.find_var("../escape").get(), np.ones(2, np.float32))
