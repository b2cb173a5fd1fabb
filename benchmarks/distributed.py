"""The per-step cost of parameter-server training against one process: one SGD step of the
digits MLP (64 -> 64 relu -> 10, batch 64) run

- in one process (``Executor.run`` of the program ``minimize`` built),
- by ``LocalCluster`` (2 trainer threads, 2 parameter servers in this process), and
- by ``RayCluster`` (2 trainer actors, 2 pserver actors on a local Ray cluster),

the three timed in turns. The two clusters compute what the one process computes (the
tests check it to 1e-5); what they add is the rewrite's own ops (split_byref, send, the
barriers, recv, concat), the pservers' rounds (sum, scale, the update per block) and, on
Ray, a remote call per pserver for each of send, send_barrier, recv and fetch_barrier, and
the feed and losses through Ray's object store. The ratio columns are cluster / one process.
Rows say why they were skipped when ray (the [distributed] extra) is missing."""
from __future__ import annotations

import paddle_nb as pd
from paddle_nb.distributed import DistributeTranspilerConfig, LocalCluster, shard

from .common import row
from .timing import compare, ratios

BATCH, HIDDEN = 64, 64
CONFIG = DistributeTranspilerConfig(min_block_size=1024)   # fc_0.w_0 [64, 64]: two blocks


def build():
    """The digits MLP with SGD: (main, startup, loss)."""
    main, startup = pd.Program(), pd.Program()
    startup.random_seed = 1
    with pd.program_guard(main, startup), pd.unique_name.guard():
        x = pd.data("x", [None, 64])
        label = pd.data("label", [None, 1], "int64")
        h = pd.layer.fc(x, HIDDEN, act="relu")
        loss = pd.mean(pd.layers.softmax_with_cross_entropy(pd.layer.fc(h, 10), label))
        pd.optimizer.SGD(0.1).minimize(loss)
    return main, startup, loss


def _feed():
    from paddle_nb.examples.digits import load_data   # noqa: PLC0415
    x, y, _, _ = load_data(0)
    return {"x": x[:BATCH], "label": y[:BATCH]}


def _ray_cluster(main, startup, loss):
    """A RayCluster on a local Ray of 2 CPUs, or (None, why)."""
    try:
        import ray   # noqa: PLC0415, F401
    except ImportError:
        return None, "ray is not installed (pip install 'paddle_nb[distributed]')"
    from paddle_nb.distributed import RayCluster   # noqa: PLC0415
    return RayCluster(main, startup, loss, trainers=2, pservers=2, config=CONFIG,
                      num_cpus=2), ""


def run(quick: bool = False) -> list[dict]:
    main, startup, loss = build()
    feed = _feed()
    exe, scope = pd.Executor(), pd.Scope()
    exe.run(startup, scope=scope)
    local = LocalCluster(main, startup, loss, trainers=2, pservers=2, config=CONFIG)
    shards = shard(feed, 2)
    cluster, why = _ray_cluster(main, startup, loss)
    try:
        t = compare({
            "one process": lambda: exe.run(main, feed=feed, fetch_list=[loss], scope=scope),
            "local": lambda: local.step(shards),
            "ray": (lambda: cluster.step(feed)) if cluster is not None else None,
        }, quick)
    finally:
        local.close()
        if cluster is not None:
            cluster.close()
    one = t["one process"]
    rows = [row(f"digits MLP b{BATCH} SGD step: one process", one,
                note="Executor.run; the reference of the rows below")]
    for name, label in (("local", "LocalCluster, 2 trainer threads x 2 pservers"),
                        ("ray", "RayCluster, 2 trainer actors x 2 pserver actors")):
        mine = t.get(name)
        if mine is None:
            rows.append(row(f"digits MLP b{BATCH} SGD step: {label}", None,
                            note=f"skipped: {why}"))
            continue
        paired = ratios(mine, one)
        ratio = (f"{paired[0]:.1f}x one process ({paired[1]:.1f}-{paired[2]:.1f}), "
                 f"+{(float(mine) - float(one)) * 1e3:.2f} ms a step") if paired else ""
        rows.append(row(f"digits MLP b{BATCH} SGD step: {label}", mine, note=ratio))
    return rows
