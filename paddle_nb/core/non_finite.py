"""NaN and Inf in values: the tests ``check_nan_inf`` runs on every output (the executor's
check, which raises, and the debugger's, which stops at the first bad value), and the
executor's error naming the op, the output and what its inputs held."""
from __future__ import annotations

import math

import numpy as np

from .errors import ExecutionError, FeedError
from .grad_maker import EMPTY_VAR
from .selected_rows import SelectedRows

_SMALL = 4096      # below this many elements, one sum is the quickest test for non-finites


def all_finite(a: np.ndarray) -> bool:
    if a.size <= _SMALL:
        # NaN and Inf survive a sum (Inf - Inf is NaN); a sum that overflows to Inf from
        # finite values is a false alarm that the exact count below clears.
        if math.isfinite(np.add.reduce(a, axis=None)):
            return True
    elif np.isfinite(a).all():
        return True
    return not any(count_non_finite(a))


def count_non_finite(a: np.ndarray) -> tuple[int, int]:
    """(NaN count, Inf count)."""
    return int(np.count_nonzero(np.isnan(a))), int(np.count_nonzero(np.isinf(a)))


def float_arrays(value):
    """(item, array) for the float arrays a variable's value holds: itself (item None), or
    a tensor array's items; a SelectedRows' value. Device arrays are copied to the host to
    be checked: the check is a debugging mode."""
    if value.__class__ is SelectedRows:
        value = value.to_host().value
    if hasattr(value, "copy_to_host") and not isinstance(value, np.ndarray):
        value = value.copy_to_host()
    elif isinstance(value, list):
        value = [v.copy_to_host() if hasattr(v, "copy_to_host") else v for v in value]
    if isinstance(value, np.ndarray):
        if value.dtype.kind == "f" and value.size:
            yield None, value
    elif isinstance(value, list):
        for i, item in enumerate(value):
            if isinstance(item, np.ndarray) and item.dtype.kind == "f" and item.size:
                yield i, item


def check_feed_finite(feed: dict) -> None:
    """A FeedError for the first fed float array holding a NaN or Inf (a value that is not
    an array yet is left to the feed's own checks)."""
    for key, value in (feed or {}).items():
        name = key if isinstance(key, str) else getattr(key, "name", key)
        try:
            a = np.asarray(value)
        except (TypeError, ValueError):
            continue
        if a.dtype.kind == "f" and a.size and not all_finite(a):
            nan, inf = count_non_finite(a)
            raise FeedError(f"feed {name!r} has {nan} NaN and {inf} Inf values "
                            f"(check_nan_inf is on)")


# --- the executor's check (RunHooks.check_nan_inf), after each op -----------------------------
def first_non_finite(pop, scope):
    """(slot, name, item, nan, inf) of the op's first output holding a NaN or Inf, or None."""
    ndarray = np.ndarray
    for slot, name in pop.output_pairs:
        var = scope.find_var(name)
        if var is None:
            continue
        value = var._value
        if value.__class__ is ndarray:            # the common case, without a generator
            if value.dtype.kind != "f" or not value.size or all_finite(value):
                continue
            return (slot, name, None) + count_non_finite(value)
        for item, a in float_arrays(value):
            if not all_finite(a):
                return (slot, name, item) + count_non_finite(a)
    return None


def non_finite_error(pop, scope, slot, name, item, nan, inf):
    what = f"var {name!r}" if item is None else f"item {item} of tensor array {name!r}"
    lines = [f"{pop.where}: output {slot} ({what}) has {nan} NaN and {inf} Inf values"]
    if scope.name != "run":
        lines.append(f"  in scope {scope.name!r}")
    shown = 0
    for in_slot, names in pop.inputs.items():
        for n in names:
            var = scope.find_var(n) if n != EMPTY_VAR else None
            if var is None or var._kind is None or shown >= 8:
                continue
            arrays = list(float_arrays(var._value))
            if not arrays:
                continue
            shown += 1
            a = arrays[0][1] if len(arrays) == 1 else None
            if a is None:
                lines.append(f"  input {in_slot} ({n!r}): a tensor array of {len(arrays)}")
            elif all_finite(a):
                lines.append(f"  input {in_slot} ({n!r}): {a.dtype}{list(a.shape)}, finite, "
                             f"min {a.min():.4g}, max {a.max():.4g}")
            else:
                i_nan, i_inf = count_non_finite(a)
                lines.append(f"  input {in_slot} ({n!r}): {a.dtype}{list(a.shape)} already "
                             f"had {i_nan} NaN and {i_inf} Inf values (not made by an op of "
                             f"this run: fed, loaded or left in the scope)")
    if pop.created_at:
        lines.append(f"  op created at: {pop.created_at}")
    e = ExecutionError("\n".join(lines))
    e._paddle_nb_located = True
    e.failed_op = pop.op
    e.op_where, e.output_slot, e.var_name, e.nan_count, e.inf_count = \
        pop.where, slot, name, nan, inf
    return e
