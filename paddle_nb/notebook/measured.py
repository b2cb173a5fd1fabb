"""The numbers a notebook section measured, shown as a captioned table.

The course's prose states numbers (a test accuracy, which rows took a branch, how many step
scopes a loop kept). The cell that ends a section gathers them with :func:`measured`, so a
student sees them under a caption that says what they are, instead of a bare dict, and
``tests/test_notebooks.py`` reads the same values back (from the output's
``application/vnd.paddle-nb.measured+json`` part, which no front end draws) to check that the
prose still holds.

    measured("The digits model after training", {"digits_test_accuracy": 0.96})
"""
from __future__ import annotations

import html
import json

import numpy as np

MIME = "application/vnd.paddle-nb.measured+json"


def _plain(value):
    """JSON-ready: numpy scalars and arrays become Python numbers and lists."""
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, np.ndarray):
        return _plain(value.tolist())
    if isinstance(value, np.generic):
        return value.item()
    return value


def _label(key: str) -> str:
    return key.replace("_", " ")


class Measured:
    """A caption and its named values; displays as a table (text in a terminal)."""

    def __init__(self, caption: str, values: dict):
        self.caption = caption
        self.values = _plain(dict(values))

    def __getitem__(self, key):
        return self.values[key]

    def __repr__(self) -> str:
        width = max((len(k) for k in self.values), default=0)
        rows = [f"  {_label(k):<{width}}  {v!r}" for k, v in self.values.items()]
        return "\n".join([self.caption + ":", *rows])

    def _repr_html_(self) -> str:
        rows = "".join(
            f"<tr><th style='text-align:left;font-weight:normal'>{html.escape(_label(k))}</th>"
            f"<td style='text-align:left'><code>{html.escape(repr(v))}</code></td></tr>"
            for k, v in self.values.items())
        return (f"<table class='paddle-nb-measured'><caption style='text-align:left'>"
                f"<b>{html.escape(self.caption)}</b></caption>{rows}</table>")

    def _repr_mimebundle_(self, include=None, exclude=None):
        # Only the machine-readable part here: IPython adds text/plain and text/html from
        # the methods above, and front ends draw the HTML (they have no renderer for MIME).
        return {MIME: json.loads(json.dumps(self.values))}


def measured(caption: str, values: dict) -> Measured:
    """Show ``values`` (name -> number, list, bool or string) under ``caption``."""
    return Measured(caption, values)
