"""The DistributeTranspiler (paddle_nb/distributed/): the rewrite of a training program
into trainer and pserver programs, the ops it adds, the parameter server's rounds, and
LocalCluster (trainer threads) giving what one process gives."""
from __future__ import annotations

import re

import numpy as np
import pytest

import paddle_nb as pd
from paddle_nb.core.backward import OP_ROLE_OPTIMIZE, op_role
from paddle_nb.distributed import (DistributeTranspiler, DistributeTranspilerConfig,
                                   LocalCluster, ParameterServer, slice_rows)
from paddle_nb.distributed.transpiler import SUPPORTED_UPDATES
from paddle_nb.examples.digits import load_data

from models import digits_mlp as build

EPS = ["127.0.0.1:6170", "127.0.0.1:6171"]
SMALL_BLOCKS = DistributeTranspilerConfig(min_block_size=1024)   # fc_0.w_0 [64, 64] splits


def transpiled(optimizer="adam", trainer_id=0, config=SMALL_BLOCKS, trainers=2):
    main, startup, loss = build(optimizer)
    t = DistributeTranspiler(config)
    t.transpile(trainer_id, program=main, pservers=",".join(EPS), trainers=trainers,
                startup_program=startup)
    return t, main, startup, loss


@pytest.fixture(scope="module")
def digits():
    x, y, _, _ = load_data(0)
    return x, y


# --- the rewrite -----------------------------------------------------------------------------
def test_distributed_trainer_program_sends_after_backward_and_drops_the_updates():
    t, main, _, _ = transpiled("adam")
    ops = t.get_trainer_program().global_block().ops
    types = [op.type for op in ops]
    assert not set(types) & set(SUPPORTED_UPDATES)
    last_backward = max(i for i, op in enumerate(ops) if op_role(op) & 1)
    tail = types[last_backward + 1:]
    assert tail == ["split_byref", "send", "send_barrier", "recv", "fetch_barrier", "concat"]
    send, recv = ops[types.index("send")], ops[types.index("recv")]
    # fc_0.w_0 [64, 64] is cut in two, the others are whole; blocks go round-robin
    assert send.input("X") == ["fc_0.b_0@GRAD", "fc_0.w_0@GRAD.block0", "fc_0.w_0@GRAD.block1",
                               "fc_1.b_0@GRAD", "fc_1.w_0@GRAD"]
    assert send.attr("epmap") == [EPS[0], EPS[1], EPS[0], EPS[1], EPS[0]]
    assert recv.output("Out") == ["fc_0.b_0", "fc_0.w_0.block0", "fc_0.w_0.block1",
                                  "fc_1.b_0", "fc_1.w_0"]
    assert recv.attr("epmap") == send.attr("epmap")
    concat = ops[types.index("concat")]
    assert concat.input("X") == ["fc_0.w_0.block0", "fc_0.w_0.block1"]
    assert concat.output("Out") == ["fc_0.w_0"]
    gb = t.get_trainer_program().global_block()
    assert gb.var("fc_0.w_0.block1").shape == (32, 64)
    assert not any(n.startswith("learning_rate") or "moment" in n for n in gb.table.vars)


def test_distributed_pserver_programs_hold_exactly_their_blocks():
    t, _, _, _ = transpiled("adam")
    blocks = t.param_blocks()
    assert [(b.name, b.endpoint, b.rows) for b in blocks["fc_0.w_0"]] == [
        ("fc_0.w_0.block0", EPS[1], (0, 32)), ("fc_0.w_0.block1", EPS[0], (32, 64))]
    seen = []
    for ep in EPS:
        ps = t.get_pserver_program(ep)
        serv = [op for op in ps.global_block().ops]
        assert [op.type for op in serv] == ["listen_and_serv"]
        lns = serv[0]
        assert lns.attr("Fanin") == 2 and lns.attr("endpoint") == ep
        updated = []
        for idx in lns.attr("optimize_blocks"):
            ops = ps.block(idx).ops
            assert [op.type for op in ops] == ["sum", "scale", "adam"]
            assert ops[1].attr("scale") == 0.5
            updated.append(ops[-1].input("Param")[0])
        want = [b.name for bs in blocks.values() for b in bs if b.endpoint == ep]
        assert updated == want
        assert sorted(lns.input("X")) == sorted(f"{g}.trainer_{i}" for g in (
            n.replace(".block", "@GRAD.block") if ".block" in n else n + "@GRAD"
            for n in want) for i in range(2))
        seen += updated
    assert sorted(seen) == sorted(b.name for bs in blocks.values() for b in bs)


def test_distributed_blocks_are_cut_as_fluid_slices_them():
    assert slice_rows([100, 10], 3, DistributeTranspilerConfig(min_block_size=100)) == [
        (0, 34), (34, 68), (68, 100)]
    # at most numel // min_block_size blocks, at most one per pserver
    assert slice_rows([64, 64], 2, DistributeTranspilerConfig()) == [(0, 64)]
    assert slice_rows([64, 64], 4, DistributeTranspilerConfig(min_block_size=1024)) == [
        (0, 16), (16, 32), (32, 48), (48, 64)]
    assert slice_rows([64, 64], 4, DistributeTranspilerConfig(slice_var_up=False)) == [(0, 64)]
    assert slice_rows([], 2, SMALL_BLOCKS) == [(0, 1)]
    t, _, _, _ = transpiled("sgd", config=DistributeTranspilerConfig())
    assert all(len(bs) == 1 and bs[0].rows is None for bs in t.param_blocks().values())


def test_distributed_accumulators_are_cut_like_their_parameter():
    t, _, _, _ = transpiled("adam")
    accs = t.accumulator_blocks()
    m1 = accs["fc_0.w_0_moment1_0"]
    assert [(b.name, b.rows) for b in m1] == [("fc_0.w_0_moment1_0.block0", (0, 32)),
                                              ("fc_0.w_0_moment1_0.block1", (32, 64))]
    beta = accs["fc_0.w_0_beta1_pow_acc_0"]
    assert [(b.name, b.rows) for b in beta] == [("fc_0.w_0_beta1_pow_acc_0.block0", None),
                                                ("fc_0.w_0_beta1_pow_acc_0.block1", None)]
    names = {v.name for v in t.pserver_vars(EPS[0])}
    assert {"fc_0.w_0.block1", "fc_0.w_0_moment2_0.block1", "learning_rate_0"} <= names


def test_distributed_transpile_leaves_the_users_programs_alone():
    main, startup, _ = build("adam")
    before = main.to_bytes(), startup.to_bytes()
    t = DistributeTranspiler(SMALL_BLOCKS)
    t.transpile(1, program=main, pservers=EPS, trainers=2, startup_program=startup)
    t.get_trainer_program()
    for ep in EPS:
        t.get_pserver_programs(ep)
    assert (main.to_bytes(), startup.to_bytes()) == before


def test_distributed_programs_round_trip_and_print():
    t, _, _, _ = transpiled("adam", trainer_id=1)
    trainer = t.get_trainer_program()
    again = pd.Program.from_bytes(trainer.to_bytes())
    assert again.to_code() == trainer.to_code()
    assert "trainer_id=1" in trainer.to_code()
    ps = t.get_pserver_program(EPS[0])
    code = ps.to_code()
    assert "listen_and_serv(" in code and "optimize_blocks=blocks [1, 2, 3]" in code
    assert pd.Program.from_bytes(ps.to_bytes()).to_code() == code
    pd.validate(ps)
    pd.validate(trainer)


def test_distributed_pserver_startup_runs_on_its_own():
    t, _, _, _ = transpiled("adam")
    ps, startup = t.get_pserver_programs(EPS[0])
    server = ParameterServer(EPS[0], ps, startup, trainers=2)
    got = server.values(["fc_0.w_0.block1", "fc_0.w_0_beta1_pow_acc_0.block1",
                         "learning_rate_0"])
    assert got["fc_0.w_0.block1"].shape == (32, 64)
    assert np.abs(got["fc_0.w_0.block1"]).max() > 0
    np.testing.assert_allclose(got["fc_0.w_0_beta1_pow_acc_0.block1"], [0.9])
    np.testing.assert_allclose(got["learning_rate_0"], 0.01)


# --- what is refused -------------------------------------------------------------------------
@pytest.mark.parametrize("optimizer, words", [
    ("global_norm", ["squared_l2_norm", "ClipGradByGlobalNorm", "supported"]),
    ("lamb", ["lamb", "norm of the whole parameter", "sgd, momentum, adam"])])
def test_distributed_updates_that_are_not_elementwise_are_refused(optimizer, words):
    main, startup, _ = build(optimizer)
    with pytest.raises(pd.BuildError) as err:
        DistributeTranspiler().transpile(0, program=main, pservers=EPS, trainers=2,
                                         startup_program=startup)
    assert all(w in str(err.value) for w in words), str(err.value)


def test_distributed_bad_arguments_are_refused():
    main, startup, _ = build("sgd")
    with pytest.raises(pd.BuildError, match="sync_mode"):
        DistributeTranspiler().transpile(0, program=main, pservers=EPS, trainers=2,
                                         sync_mode=False, startup_program=startup)
    with pytest.raises(pd.BuildError, match="trainer_id"):
        DistributeTranspiler().transpile(2, program=main, pservers=EPS, trainers=2,
                                         startup_program=startup)
    with pytest.raises(pd.BuildError, match="no update ops"):
        DistributeTranspiler().transpile(0, program=main.clone(for_test=True), pservers=EPS,
                                         startup_program=startup)
    t = DistributeTranspiler()
    with pytest.raises(pd.BuildError, match="transpile"):
        t.get_trainer_program()
    t.transpile(0, program=main, pservers=EPS, trainers=2, startup_program=startup)
    with pytest.raises(pd.BuildError, match="not one of the pservers"):
        t.get_pserver_program("127.0.0.1:1")


def test_distributed_send_without_a_transport_is_a_clear_error(digits):
    t, _, startup, _ = transpiled("sgd")
    trainer = t.get_trainer_program()
    scope, exe = pd.Scope(), pd.Executor()
    exe.run(startup, scope=scope)
    x, y = digits
    for run in (exe.run, lambda *a, **k: list(exe.steps(*a, **k))):
        with pytest.raises(pd.ExecutionError) as err:
            run(trainer, feed={"x": x[:8], "label": y[:8]}, scope=scope)
        text = str(err.value)
        assert "op send" in text and "no transport" in text and "pd.distributed" in text


class _Fake:
    """A transport whose recv answers with arrays of a given shape."""

    def __init__(self, shape):
        self.shape = shape

    def send(self, endpoint, trainer_id, arrays):
        pass

    def send_barrier(self, endpoint, trainer_id):
        pass

    def recv(self, endpoint, trainer_id, names):
        return {n: np.zeros(self.shape, np.float32) for n in names}

    def fetch_barrier(self, endpoint, trainer_id):
        pass


def test_distributed_recv_of_the_wrong_shape_names_the_op_and_variable(digits):
    t, _, startup, _ = transpiled("sgd")
    trainer = t.get_trainer_program()
    assert isinstance(_Fake((3,)), pd.distributed.Transport)
    scope, exe = pd.Scope(), pd.Executor(transport=_Fake((3,)))
    exe.run(startup, scope=scope)
    x, y = digits
    before = scope.find_var("fc_0.w_0").get().copy()
    with pytest.raises(pd.ExecutionError) as err:
        exe.run(trainer, feed={"x": x[:8], "label": y[:8]}, scope=scope)
    text = str(err.value)
    assert "recv" in text and "'fc_0.b_0'" in text
    assert "float32[64]" in text and "float32[3]" in text
    np.testing.assert_array_equal(scope.find_var("fc_0.w_0").get(), before)


def test_distributed_pserver_refuses_what_it_does_not_hold():
    t, _, _, _ = transpiled("sgd")
    ps, startup = t.get_pserver_programs(EPS[0])
    server = ParameterServer(EPS[0], ps, startup, trainers=2)
    with pytest.raises(pd.ExecutionError, match="does not hold"):
        server.receive(0, {"nope@GRAD": np.zeros(3, np.float32)})
    with pytest.raises(pd.ExecutionError, match="trainers are 0 to 1"):
        server.barrier(5)
    assert server.barrier(0) is False
    with pytest.raises(pd.ExecutionError, match="already sent its barrier"):
        server.barrier(0)
    with pytest.raises(pd.ExecutionError, match="never sent"):
        server.barrier(1)
    assert server.round == 0


# --- training: a cluster gives what one process gives ----------------------------------------
@pytest.mark.parametrize("optimizer", ["sgd", "adam", "momentum", "sgd_decay_clip", "adamw",
                                       "adagrad", "rmsprop"])
def test_distributed_two_trainers_two_pservers_equal_one_process(optimizer, digits):
    x, y = digits
    main, startup, loss = build(optimizer)
    scope, exe = pd.Scope(), pd.Executor()
    exe.run(startup, scope=scope)
    with LocalCluster(main, startup, loss, trainers=2, pservers=2, config=SMALL_BLOCKS,
                      timeout=20) as cluster:
        assert any(len(bs) > 1 for bs in cluster.transpiler.param_blocks().values())
        for name, value in cluster.parameters().items():
            np.testing.assert_array_equal(value, scope.find_var(name).get())
        for step in range(5):
            feed = {"x": x[step * 32:(step + 1) * 32], "label": y[step * 32:(step + 1) * 32]}
            want, = exe.run(main, feed=feed, fetch_list=[loss], scope=scope)
            losses = cluster.step(LocalCluster.shard(feed, 2))
            assert abs(np.mean(losses) - want) < 1e-5
        got = cluster.parameters()
        assert [s.round for s in cluster.servers.values()] == [5, 5]
        for name, value in got.items():
            np.testing.assert_allclose(value, scope.find_var(name).get(), rtol=0, atol=1e-5,
                                       err_msg=name)
        # every trainer holds the servers' parameters after the step
        for i in range(2):
            for name, value in got.items():
                np.testing.assert_array_equal(cluster.trainer_scope(i).find_var(name).get(),
                                              value)


def test_distributed_a_failing_trainer_is_named_and_nothing_hangs(digits):
    x, y = digits
    main, startup, loss = build("sgd")
    with LocalCluster(main, startup, loss, config=SMALL_BLOCKS, timeout=20) as cluster:
        good = {"x": x[:16], "label": y[:16]}
        bad = {"x": x[:16, :10], "label": y[:16]}
        with pytest.raises(pd.ExecutionError) as err:
            cluster.step([good, bad])
        assert str(err.value).startswith("trainer 1:") and "x" in str(err.value)
        before = cluster.parameters()
        cluster.step([good, good])                  # the next step starts over
        assert [s.round for s in cluster.servers.values()] == [1, 1]
        assert any(not np.array_equal(before[n], v) for n, v in cluster.parameters().items())


def test_distributed_stepping_a_trainer_until_its_send(digits):
    """One trainer in the debugger, the other in its thread: the round completes when the
    stepped one passes its send_barrier."""
    x, y = digits
    main, startup, loss = build("sgd")
    with LocalCluster(main, startup, loss, config=SMALL_BLOCKS, timeout=20) as cluster:
        shards = LocalCluster.shard({"x": x[:32], "label": y[:32]}, 2)
        program = cluster.trainer_program(0)
        send = next(i for i, op in enumerate(program.global_block().ops) if op.type == "send")
        dbg = cluster.debugger(0, shards[0])
        step = dbg.run_to(0, send)
        assert step.op.type == "send"
        other = cluster.run_trainer_async(1, shards[1])
        assert [s.round for s in cluster.servers.values()] == [0, 0]
        results = dbg.run_to_end()
        assert other.result(timeout=20) is not None and results is not None
        assert [s.round for s in cluster.servers.values()] == [1, 1]
        exe = cluster.trainer_executor(0)
        assert exe.transport is cluster.transport


def test_distributed_listen_and_serv_steps_into_its_optimize_blocks():
    t, _, _, _ = transpiled("sgd")
    ps, startup = t.get_pserver_programs(EPS[0])
    scope, exe = pd.Scope(), pd.Executor()
    exe.run(startup, scope=scope)
    lns = ps.global_block().ops[0]
    feed = {n: np.ones(ps.global_block().var(n).shape, np.float32) for n in lns.input("X")}
    steps = list(exe.steps(ps, feed=feed, scope=scope))
    assert [s.op.type for s in steps if s.depth == 2][:3] == ["sum", "scale", "sgd"]
    assert steps[-1].op.type == "listen_and_serv" and steps[-1].depth == 1
    assert {s.block_idx for s in steps if s.depth == 2} == set(lns.attr("optimize_blocks"))


def test_distributed_ops_are_registered_and_documented():
    ops = set(pd.registered_ops())
    assert {"send", "send_barrier", "recv", "fetch_barrier", "split_byref",
            "listen_and_serv"} <= ops
    assert "one run of the program is one round" in " ".join(
        pd.op.listen_and_serv.__doc__.split())
    trainer = transpiled("sgd")[0].get_trainer_program()
    for op in trainer.global_block().ops[-6:]:
        assert op_role(op) & OP_ROLE_OPTIMIZE       # dropped by clone(for_test=True)
    assert "send" not in {op.type for op in trainer.clone(for_test=True).global_block().ops}


@pytest.mark.parametrize("given, words", [
    ({"trainers": 0}, "LocalCluster: trainers must be an int >= 1, got int 0"),
    ({"trainers": -1}, "LocalCluster: trainers must be an int >= 1, got int -1"),
    ({"trainers": 2.0}, "LocalCluster: trainers must be an int >= 1, got float 2.0"),
    ({"trainers": True}, "LocalCluster: trainers must be an int >= 1, got bool True"),
    ({"pservers": 0}, "LocalCluster: pservers must be an int >= 1, got int 0"),
    ({"pservers": "2"}, "LocalCluster: pservers must be an int >= 1, got str '2'"),
    ({"endpoints": ["a:1"]}, "LocalCluster: 1 endpoints given for pservers=2; give one "
                             "endpoint per pserver"),
    ({"endpoints": ["a:1", "a:1"]}, "LocalCluster: endpoints must be distinct"),
    ({"endpoints": "a:1,b:2"}, "LocalCluster: endpoints must be a list of 2"),
    ({"endpoints": ["a:1", " "]}, "LocalCluster: each endpoint must be a non-empty"),
    ({"timeout": 0}, "LocalCluster: timeout must be a number of seconds > 0, got int 0"),
    ({"timeout": float("inf")}, "LocalCluster: timeout must be a number of seconds > 0"),
    ({"loss": "nope"}, "LocalCluster: loss 'nope' is not a variable of main's global block"),
    ({"loss": 3}, "LocalCluster: loss must be a Variable of main (or its name), got int 3"),
    ({"main": None}, "LocalCluster: main must be a Program, got NoneType"),
    ({"startup": "startup"}, "LocalCluster: startup must be a Program, got str"),
])
def test_distributed_a_bad_cluster_shape_is_a_clear_error(given, words):
    """trainers=0 was an IndexError from deep inside plan.py: every argument of a cluster's
    shape is checked first, in one place (plan.check_shape and its helpers)."""
    main, startup, loss = build("sgd")
    args = {"main": main, "startup": startup, "loss": loss, "trainers": 2, "pservers": 2,
            **given}
    with pytest.raises(pd.ExecutionError, match=re.escape(words)):
        LocalCluster(**args)


def test_distributed_numpy_counts_are_counts():
    main, startup, loss = build("sgd")
    with LocalCluster(main, startup, loss, trainers=np.int64(2), pservers=np.int32(1),
                      endpoints=("127.0.0.1:7000",)) as cluster:
        assert cluster.trainers == 2 and type(cluster.trainers) is int
        assert cluster.endpoints == ["127.0.0.1:7000"]


@pytest.mark.parametrize("feed, parts, words", [
    ([{"x": np.ones((4, 2))}], 2, "a feed is a dict of variable name -> array"),
    ({"x": np.ones((4, 2))}, 0, "shard: parts must be an int >= 1, got int 0"),
    ({"x": np.ones((1, 2))}, 2, "cannot split feed 'x' (shape [1, 2]) across 2 trainers"),
])
def test_distributed_shard_refuses_what_it_cannot_cut(feed, parts, words):
    with pytest.raises(pd.ExecutionError, match=re.escape(words)):
        pd.distributed.shard(feed, parts)
