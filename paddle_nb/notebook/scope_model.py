"""A scope forest as plain data for the browser: ``scope_model(scope, changed=...)``.

For each scope (the one given and every kid below it, recursively) the model lists its own
variables; for each variable what a student wants at a glance: the kind of value, shape and
dtype, a few statistics (min, max, mean and how many NaNs, since a NaN is the first thing to
look for when training goes wrong) and a *small* preview the page draws itself: a heatmap
grid for a matrix, one small heatmap per channel for a batch of images [N, C, H, W], a
sparkline for a vector, the number for a scalar. Big tensors are
shrunk by averaging blocks of values, so the page never receives more than a few hundred
numbers per variable however large the tensor is.

JSON has no NaN or infinity, so non-finite numbers are sent as ``null`` and counted in the
stats instead.

A SelectedRows (an embedding's sparse gradient: rows + value, core/selected_rows.py) is
shown as what it is: kind ``selected_rows``, the dense shape it stands for, its text
(``SelectedRows height=20, rows [3, 7, 7, 0], value float32[4, 8]``, then the distinct
rows it touches), the stats of its value, and a preview of type ``selected_rows``: a strip
of the table's rows (at most 64 bins) marking the rows it touches, beside a heatmap of
its value rows.

Each variable also carries ``user_name``: the notebook name a ``%%paddle`` cell bound to it
(``x`` for ``minibatch_0``; see ``interactive/user_names.py``), or None in plain Python use.
"""
from __future__ import annotations

import math

import numpy as np

from ..interactive.user_names import user_name

MAX_VARS = 200       # per scope: a page with thousands of rows is unreadable anyway
SMALL = 12           # tensors with at most this many values also send their values as text


def _num(x):
    """A float for JSON: None for NaN and +-inf."""
    x = float(x)
    return x if math.isfinite(x) else None


def _short(x):
    """A preview number: six significant digits are plenty for a colour or a line."""
    x = _num(x)
    return None if x is None else float(f"{x:.6g}")


def _host(value):
    """A numpy array for any tensor (a device array is copied to the host)."""
    if hasattr(value, "copy_to_host"):
        return value.copy_to_host()
    return np.asarray(value)


def _is_numeric(a: np.ndarray) -> bool:
    return a.dtype.kind in "biuf"


def stats(a: np.ndarray) -> dict | None:
    """min / max / mean over the finite values, and counts of NaN and infinite values."""
    if not _is_numeric(a) or a.size == 0:
        return None
    f = a.astype(np.float64, copy=False)
    finite = np.isfinite(f)
    good = f[finite]
    return {"min": _num(good.min()) if good.size else None,
            "max": _num(good.max()) if good.size else None,
            "mean": _num(good.mean()) if good.size else None,
            "nan": int(np.isnan(f).sum()), "inf": int((~finite).sum() - np.isnan(f).sum())}


def _bins(n: int, most: int) -> np.ndarray:
    """Start offsets of at most ``most`` nearly equal bins covering range(n)."""
    return np.unique(np.linspace(0, n, min(n, most) + 1).astype(int)[:-1])


def _shrink(a: np.ndarray, axis: int, most: int) -> np.ndarray:
    """Average ``a`` over bins along ``axis`` so that at most ``most`` remain. NaNs stay NaN
    (a bin with a NaN in it should look broken)."""
    n = a.shape[axis]
    if n <= most:
        return a
    starts = _bins(n, most)
    sums = np.add.reduceat(a, starts, axis=axis)
    counts = np.diff(np.append(starts, n))
    shape = [1] * a.ndim
    shape[axis] = len(counts)
    return sums / counts.reshape(shape)


MAX_CHANNELS = 8     # feature maps drawn per image tensor
MIN_IMAGE = 4        # an [N, C, H, W] tensor with H and W at least this is drawn as images


def _images(f: np.ndarray, max_preview: int) -> dict:
    """The first sample's channels of an [N, C, H, W] tensor, each a small heatmap: what a
    convolution's input and output feature maps look like."""
    first = f[0]
    maps = [_shrink(_shrink(c, 0, max_preview), 1, max_preview) for c in first[:MAX_CHANNELS]]
    return {"type": "images", "channels": int(f.shape[1]), "rows": int(f.shape[2]),
            "cols": int(f.shape[3]),
            "maps": [[[_short(x) for x in row] for row in m] for m in maps]}


def preview(a: np.ndarray, max_preview: int = 16, max_points: int = 64) -> dict:
    """What the page draws for a tensor: ``scalar`` (one value), ``sparkline`` (a vector,
    singleton dimensions ignored), ``images`` (an [N, C, H, W] batch of images: the first
    one's channels, each a heatmap) or ``heatmap`` (anything else with two or more real
    dimensions, folded to [rows, last dim])."""
    if not _is_numeric(a):
        return {"type": "text", "text": np.array2string(a.ravel()[:SMALL], threshold=SMALL)}
    if a.size == 0:
        return {"type": "empty"}
    f = a.astype(np.float64, copy=False)
    real = [d for d in a.shape if d != 1]
    if not real:
        return {"type": "scalar", "value": _num(f.ravel()[0])}
    if len(real) == 1:
        v = _shrink(f.ravel(), 0, max_points)
        return {"type": "sparkline", "data": [_short(x) for x in v], "length": int(a.size)}
    if a.ndim == 4 and a.shape[2] >= MIN_IMAGE and a.shape[3] >= MIN_IMAGE:
        return _images(f, max_preview)
    m = f.reshape(-1, a.shape[-1]) if a.shape[-1] != 1 else f.reshape(-1, real[-1])
    rows, cols = m.shape
    m = _shrink(_shrink(m, 0, max_preview), 1, max_preview)
    return {"type": "heatmap", "rows": rows, "cols": cols,
            "data": [[_short(x) for x in row] for row in m]}


def var_model(name: str, var, changed: bool = False, max_preview: int = 16,
              user_names: dict | None = None) -> dict:
    """One runtime variable (see the module doc)."""
    out = {"name": name, "user_name": user_name(name, user_names),
           "kind": var.kind or "empty", "changed": bool(changed),
           "shape": None, "dtype": None, "stats": None, "preview": {"type": "empty"}}
    if var.kind is None:
        return out
    value = var.get()
    if var.kind == "tensor":
        a = _host(value)
        out.update(shape=list(a.shape), dtype=str(a.dtype), stats=stats(a),
                   preview=preview(a, max_preview, 4 * max_preview))
        if a.size <= SMALL:
            out["text"] = np.array2string(a, precision=4, separator=", ")
    elif var.kind == "selected_rows":
        out.update(selected_rows_model(value, max_preview))
    elif var.kind == "tensor_array":
        items = []
        for t in list(value)[:max_preview]:
            a = _host(t) if t is not None else None
            items.append(None if a is None else
                         {"shape": list(a.shape), "dtype": str(a.dtype), "stats": stats(a)})
        out["preview"] = {"type": "array", "length": len(value), "items": items}
    elif var.kind == "scopes":
        out["preview"] = {"type": "scopes", "length": len(value),
                          "names": [s.name for s in value][:4 * max_preview]}
    elif var.kind in ("int", "float", "half", "bool"):
        v = value.item() if hasattr(value, "item") else value
        out["preview"] = {"type": "scalar",
                          "value": v if isinstance(v, bool) else _num(v)}
        out["text"] = repr(v)
    elif var.kind == "scope":
        out["preview"] = {"type": "text", "text": f"scope {getattr(value, 'name', value)!r}"}
    else:
        out["preview"] = {"type": "text", "text": repr(value)[:80]}
    return out


MAX_ROWS_LISTED = 64     # a SelectedRows' rows (and distinct rows) sent to the page


def selected_rows_model(sr, max_preview: int = 16) -> dict:
    """The fields of a SelectedRows variable's model (see the module doc)."""
    sr = sr.to_host()
    rows, value = np.asarray(sr.rows), np.asarray(sr.value)
    touched = np.unique(rows)
    bins = _bins(sr.height, MAX_ROWS_LISTED) if sr.height else np.zeros(0, int)
    strip = np.zeros(len(bins), bool)
    if len(bins) and touched.size:
        strip[np.searchsorted(bins, touched[(touched >= 0) & (touched < sr.height)],
                              side="right") - 1] = True
    listed = ", ".join(str(int(r)) for r in touched[:MAX_ROWS_LISTED])
    more = ", ..." if touched.size > MAX_ROWS_LISTED else ""
    text = f"{sr!r}; rows touched: {listed}{more} ({touched.size} of {sr.height})"
    return {"shape": list(sr.shape), "dtype": str(value.dtype), "stats": stats(value),
            "text": text,
            "preview": {"type": "selected_rows", "height": sr.height,
                        "n_rows": int(rows.size), "rows": rows[:MAX_ROWS_LISTED].tolist(),
                        "touched": touched[:MAX_ROWS_LISTED].tolist(),
                        "n_touched": int(touched.size),
                        "strip": strip.astype(int).tolist(),
                        "value": preview(value, max_preview, 4 * max_preview)}}


def scope_model(scope, changed=(), max_preview: int = 16, current=None,
                user_names: dict | None = None) -> dict:
    """The scope forest below ``scope`` (see the module doc).

    changed:  names the last debugger step wrote; flagged where they resolve from
              ``current`` (the scope the step ran in), or everywhere when it is not given,
              so an outer ``x`` is not flagged when a step scope's own ``x`` was written
    current:  the scope the last step ran in; its node gets ``current: True`` and its id
              is the model's ``current`` (the page opens it and its ancestors)
    user_names: program name -> the user's name(s) (``NotebookProgram.user_names()``);
              each variable's ``user_name``
    """
    changed = set(changed)
    if current is not None:
        flagged = {id(v) for v in (current.find_var(n) for n in changed) if v is not None}
        is_changed = lambda name, v: id(v) in flagged            # noqa: E731
    else:
        is_changed = lambda name, v: name in changed            # noqa: E731
    found = {"current": None, "count": 0}

    def node(s, sid: str) -> dict:
        found["count"] += 1
        names = s.local_var_names()
        variables = []
        for name in names[:MAX_VARS]:
            v = s.find_local_var(name)
            if v is not None:
                variables.append(var_model(name, v, is_changed(name, v), max_preview,
                                           user_names))
        if s is current:
            found["current"] = sid
        return {"id": sid, "name": s.name, "current": s is current, "alive": s.alive,
                "vars": variables, "hidden_vars": max(0, len(names) - MAX_VARS),
                "children": [node(k, f"{sid}/{i}") for i, k in enumerate(s.kids)]}

    root = node(scope, "0")
    return {"root": root, "current": found["current"], "num_scopes": found["count"],
            "changed": sorted(changed)}


def find_scope_node(model: dict, name: str) -> dict | None:
    """The first node (depth first) named ``name`` in a scope model; for tests and tools."""
    stack = [model["root"]]
    while stack:
        n = stack.pop(0)
        if n["name"] == name:
            return n
        stack[0:0] = n["children"]
    return None


def find_var(node: dict, name: str) -> dict | None:
    return next((v for v in node["vars"] if v["name"] == name), None)
