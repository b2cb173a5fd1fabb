"""The DistributeTranspiler's programs on a local Ray cluster (paddle_nb/distributed/
ray_runtime.py): two trainer actors and two pserver actors train the digits MLP to what
one process computes on the full batches, SGD and Adam; a trainer killed mid-run is a
clear error on the driver and leaves no actor and no Ray process behind."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

import paddle_nb as pd
from paddle_nb.distributed import DistributeTranspilerConfig
from paddle_nb.examples.digits import load_data

from models import digits_mlp

ray = pytest.importorskip("ray", reason="the Ray runtime needs the [distributed] extra")
from paddle_nb.distributed.ray_runtime import DistributedError, RayCluster  # noqa: E402

SMALL_BLOCKS = DistributeTranspilerConfig(min_block_size=1024)   # fc_0.w_0 [64, 64] splits
STEPS, BATCH = 5, 32


@pytest.fixture(scope="module")
def local_ray():
    """One local Ray for the module (starting one takes ~10 s on 2 cores)."""
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False,
             logging_level="ERROR")
    yield
    ray.shutdown()


@pytest.fixture(scope="module")
def digits():
    x, y, _, _ = load_data(0)
    return x, y


def _batch(digits, step):
    x, y = digits
    return {"x": x[step * BATCH:(step + 1) * BATCH], "label": y[step * BATCH:(step + 1) * BATCH]}


def test_distributed_ray_train_starts_ray_and_shuts_it_down():
    """``train`` with no Ray running starts a local one and leaves no Ray process behind
    (run in a fresh interpreter, and first: the module's own Ray is not started yet)."""
    code = textwrap.dedent("""
        import subprocess, numpy as np, ray
        import paddle_nb as pd
        from paddle_nb.examples.digits import load_data
        from models import digits_mlp
        x, y, _, _ = load_data(0)
        main, startup, loss = digits_mlp("adam")
        batches = ({"x": x[i * 32:(i + 1) * 32], "label": y[i * 32:(i + 1) * 32]}
                   for i in range(100))
        result = pd.distributed.train(main, startup, loss, batches, steps=3, num_cpus=2)
        assert result.losses.shape == (3, 2), result.losses.shape
        assert set(result.parameters) == {p.name for p in main.all_parameters()}
        assert not ray.is_initialized()
        print("ok", result.losses[-1].mean() < result.losses[0].mean())
    """)
    env = dict(os.environ, PYTHONPATH=os.path.dirname(__file__))
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=300, env=env)
    assert done.returncode == 0 and done.stdout.startswith("ok"), done.stderr[-3000:]
    time.sleep(1)
    left = subprocess.run(["pgrep", "-f", "raylet|gcs_server"], capture_output=True,
                          text=True).stdout.split()
    assert left == [], left



@pytest.mark.parametrize("optimizer", ["sgd", "adam"])
def test_distributed_ray_two_trainers_two_pservers_equal_one_process(optimizer, digits,
                                                                    local_ray):
    main, startup, loss = digits_mlp(optimizer)
    scope, exe = pd.Scope(), pd.Executor()
    exe.run(startup, scope=scope)
    with RayCluster(main, startup, loss, trainers=2, pservers=2,
                    config=SMALL_BLOCKS) as cluster:
        assert any(len(b) > 1 for b in cluster.plan.transpiler.param_blocks().values())
        for step in range(STEPS):
            feed = _batch(digits, step)
            want, = exe.run(main, feed=feed, fetch_list=[loss], scope=scope)
            losses = cluster.step(feed)            # each trainer on half of the batch
            assert len(losses) == 2 and abs(np.mean(losses) - want) < 1e-5
        got = cluster.parameters()
    assert set(got) == {p.name for p in main.all_parameters()}
    for name, value in got.items():
        np.testing.assert_allclose(value, scope.find_var(name).get(), rtol=0, atol=1e-5,
                                   err_msg=name)


def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


def test_distributed_ray_a_killed_trainer_is_named_and_nothing_is_left(digits, local_ray):
    main, startup, loss = digits_mlp("sgd")
    cluster = RayCluster(main, startup, loss, trainers=2, pservers=2, config=SMALL_BLOCKS,
                         timeout_s=60)
    actors = [*cluster.trainer_actors, *cluster.pservers.values()]
    pids = ray.get([a.pid.remote() for a in actors])
    cluster.step(_batch(digits, 0))
    ray.kill(cluster.trainer_actors[1])            # mid-run: between two steps
    with pytest.raises(DistributedError, match="trainer 1 died during its step"):
        cluster.step(_batch(digits, 1))
    # the driver closed the whole cluster: every actor is dead, its process gone
    assert cluster.trainer_actors == [] and cluster.pservers == {}
    for actor in actors:
        with pytest.raises(ray.exceptions.RayActorError):
            ray.get(actor.pid.remote(), timeout=30)
    deadline = time.time() + 30
    while not all(_gone(p) for p in pids) and time.time() < deadline:
        time.sleep(0.2)
    assert all(_gone(p) for p in pids), [p for p in pids if not _gone(p)]
    with pytest.raises(DistributedError, match="closed"):
        cluster.step(_batch(digits, 1))
