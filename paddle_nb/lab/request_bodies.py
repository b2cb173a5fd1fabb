"""What the *Paddle program* tab may send the server, checked in one place.

Every request body and query the routes take is checked here, before anything is done
with it, against what the tab sends (``extension/src/program_tab.ts``) and what each of
the ProgramView's traits must hold: a wrong one is a :class:`BadRequest` (HTTP 400) that
says which field, what was expected and what was given. Nothing here imports more than
the standard library: the server imports it at start.

    GET    program?path=P&tab=T              open P in tab T (T: any id of the tab's own)
    POST   program   {"path": P, "tab": T, "changes": {trait: value}, "message": {...}}
    POST   notebook  {"path": P}
    DELETE program?path=P&tab=T              tab T was closed
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field

MAX_PATH_CHARS = 4096
MAX_TAB_CHARS = 100
MAX_SHOWN_CHARS = 80            # of a wrong value, in the error message


class BadRequest(Exception):
    """A request the routes refuse (HTTP 400); the message says what was wrong."""
    status = 400


def shown(value) -> str:
    """A value as the error shows it: JSON, cut short."""
    try:
        text = json.dumps(value)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= MAX_SHOWN_CHARS else text[:MAX_SHOWN_CHARS - 3] + "..."


def _kind(value) -> str:
    for t, name in ((bool, "a boolean"), (int, "a number"), (float, "a number"),
                    (str, "a string"), (list, "a list"), (dict, "an object")):
        if isinstance(value, t):
            return name
    return "null" if value is None else type(value).__name__


def _refuse(where: str, expected: str, value) -> BadRequest:
    return BadRequest(f"{where}: expected {expected}, got {_kind(value)}: {shown(value)}")


def _index(value) -> bool:      # a JSON integer >= 0 (true and false are not numbers here)
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _pair(value) -> bool:
    return isinstance(value, list) and len(value) == 2 and all(map(_index, value))


# --- the traits the page sets, and what each must hold ---------------------------------------
# (name: (test, what the error says it expects)). The page sets these (program_view.js:
# a click selects an op, switches the tab, collapses a block or group); the others the
# tab reads (model, svg, ...) only the server computes.
SETTABLE_TRAITS = {
    "selected": (lambda v: v == [] or _pair(v),
                 "[] or [block, op index] (two integers >= 0)"),
    "collapsed": (lambda v: isinstance(v, list) and all(
                      _index(k) or (isinstance(k, str) and 0 < len(k) <= 200) for k in v),
                  "a list of block indices (integers >= 0) and group names (strings)"),
    "tab": (lambda v: v in ("code", "graph"), '"code" or "graph"'),
    "breakpoints": (lambda v: isinstance(v, list) and all(map(_pair, v)),
                    "a list of [block, op index] pairs (integers >= 0)"),
    "debug": (lambda v: isinstance(v, bool), "true or false"),
}
SERVER_TRAITS = ("model", "svg", "graph_text", "highlight", "running", "graph_groups")


def view_changes(changes) -> dict:
    """``changes`` checked: trait names the page may set, each with a value it may hold."""
    if not isinstance(changes, dict):
        raise _refuse("changes", "an object of trait names and values", changes)
    for name, value in changes.items():
        if name in SERVER_TRAITS:
            raise BadRequest(f"changes.{name}: the program view's {name} is computed by the "
                             f"server, the page cannot set it (it may set "
                             f"{', '.join(SETTABLE_TRAITS)})")
        if name not in SETTABLE_TRAITS:
            raise BadRequest(f"changes: the program view has no trait {shown(name)} that the "
                             f"page may set (it may set {', '.join(SETTABLE_TRAITS)})")
        test, expected = SETTABLE_TRAITS[name]
        if not test(value):
            raise _refuse(f"changes.{name}", expected, value)
    return changes


def view_message(message) -> dict:
    """A message for the view (what its ``model.send`` sends): an object with a ``cmd``."""
    if not isinstance(message, dict) or not isinstance(message.get("cmd"), str):
        raise _refuse("message", 'an object with a "cmd" string (the view\'s message)',
                      message)
    return message


def program_path(value, where: str = "path") -> str:
    """A program's path as the file browser names it (resolve() then checks where it
    leads)."""
    if not isinstance(value, str) or not value:
        raise _refuse(where, "the program file's path (a non-empty string)", value)
    if len(value) > MAX_PATH_CHARS or "\x00" in value:
        raise BadRequest(f"{where}: not a file path (longer than {MAX_PATH_CHARS:,} characters "
                         f"or holding a NUL character): {shown(value)}")
    return value


def tab_id(value, where: str = "tab") -> str:
    """The tab's own id ("" where the client sends none: then the program is held only
    until it is evicted)."""
    if value is None or value == "":
        return ""
    if not isinstance(value, str) or len(value) > MAX_TAB_CHARS or \
            not all(c.isalnum() or c in "-_" for c in value):
        raise _refuse(where, f"a tab id (letters, digits, - and _, at most {MAX_TAB_CHARS})",
                      value)
    return value


# --- the bodies --------------------------------------------------------------------------------
def json_object(body: bytes, route: str, fields: tuple[str, ...]) -> dict:
    """The body of a POST to ``route``: a JSON object of (some of) ``fields``."""
    try:
        value = json.loads(body or b"null")
    except (ValueError, UnicodeDecodeError) as e:
        raise BadRequest(f"the body of POST {route} is not JSON ({e})") from None
    if not isinstance(value, dict):
        raise _refuse(f"the body of POST {route}",
                      "a JSON object {" + ", ".join(f'"{f}": ...' for f in fields) + "}", value)
    unknown = sorted(set(value) - set(fields))
    if unknown:
        raise BadRequest(f"the body of POST {route} has no field {', '.join(map(shown, unknown))}"
                         f" (its fields: {', '.join(fields)})")
    return value


@dataclass
class ProgramPost:
    path: str
    tab: str = ""
    changes: dict = field(default_factory=dict)
    message: dict | None = None


def program_post(body: bytes) -> ProgramPost:
    value = json_object(body, "program", ("path", "tab", "changes", "message"))
    post = ProgramPost(program_path(value.get("path")), tab_id(value.get("tab")))
    if value.get("changes") is not None:
        post.changes = view_changes(value["changes"])
    if value.get("message") is not None:
        post.message = view_message(value["message"])
    return post


def notebook_post(body: bytes) -> str:
    return program_path(json_object(body, "notebook", ("path",)).get("path"))
