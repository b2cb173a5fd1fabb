"""NaN and Inf in values: the tests ``check_nan_inf`` runs on every output (the executor's
check, which raises, and the debugger's, which stops at the first bad value)."""
from __future__ import annotations

import math

import numpy as np

from .errors import FeedError
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
