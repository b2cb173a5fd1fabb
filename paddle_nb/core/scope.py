"""Scopes and the variables they own (the Scope and Framework designs).

A :class:`Scope` maps names to :class:`ScopeVariable` objects (what a name holds while a
program runs; ``pd.Variable`` is the declaration in a block) and has a parent. Looking a
name up searches this scope, then its parent, and so on up to the global scope, and never
searches kids: a block sees its enclosing blocks' variables, not its children's. Kid
scopes are how a running program realises nested blocks (the Block and Scope
design's "stack forest").

Only a scope creates variables (``ScopeVariable`` has no public constructor) and a variable
dies with its scope. Every method is thread-safe: one re-entrant lock per scope guards
its variables and kids.
"""
from __future__ import annotations

import contextlib
import threading
import weakref
from typing import Any, Iterator

import numpy as np

from .errors import ScopeError
from .selected_rows import SelectedRows

# What a ScopeVariable can hold (the Framework design). ``get_mutable(kind)`` creates an empty value
# of the kind on first use (lazy allocation).
KINDS = {
    "tensor": lambda: np.zeros((0,), np.float32),
    # an embedding's sparse gradient: rows + value (core/selected_rows.py)
    "selected_rows": lambda: SelectedRows(np.zeros(0, np.int64), np.zeros((0, 0), np.float32),
                                          0),
    "int": lambda: 0,
    "bool": lambda: False,
    "float": lambda: 0.0,
    "half": lambda: np.float16(0),
    "string": lambda: "",
    "operator": lambda: None,
    "scope": lambda: None,
    "scopes": list,           # a list of scopes: RNN step scopes
    "tensor_array": list,     # While's arrays
    "feed_list": list,
    "fetch_list": list,
}


def kind_of(value: Any) -> str:
    """The kind a Python value is stored as."""
    if isinstance(value, (bool, np.bool_)):
        return "bool"
    if isinstance(value, np.float16):
        return "half"
    if isinstance(value, (int, np.integer)):
        return "int"
    if isinstance(value, (float, np.floating)):
        return "float"
    if isinstance(value, str):
        return "string"
    if isinstance(value, Scope):
        return "scope"
    if value.__class__ is SelectedRows:     # (it has a shape and a dtype, but is no tensor)
        return "selected_rows"
    if isinstance(value, np.ndarray) or hasattr(value, "__cuda_array_interface__") or \
            hasattr(value, "copy_to_host"):       # numba device arrays (the simulator's too)
        return "tensor"
    if isinstance(value, list):
        if value and all(isinstance(v, Scope) for v in value):
            return "scopes"
        return "tensor_array"
    return "operator"


class ScopeVariable:
    """One value of one kind, owned by exactly one Scope. Make it with ``scope.var(name)``."""

    __slots__ = ("_value", "_kind", "estimated", "_scope", "__weakref__")

    def __init__(self, _scope: "Scope", _token: object):
        if _token is not _CREATE_TOKEN:
            raise ScopeError("a ScopeVariable is created only by a Scope: use scope.var(name)")
        self._scope = _scope
        self._value = None
        self._kind: str | None = None
        # the Framework design: "estimated" variables are updated by the backward algorithm.
        self.estimated = False

    @property
    def kind(self) -> str | None:
        return self._kind

    @property
    def scope(self) -> "Scope":
        return self._scope

    def is_initialized(self) -> bool:
        return self._kind is not None

    def is_type(self, kind: str) -> bool:
        return self._kind == kind

    def get(self):
        """The value; an error if nothing has been stored yet."""
        value, kind = self._value, self._kind
        if kind is None:
            if not self._scope.alive:     # _destroy cleared it: say so, not "nothing ran"
                raise ScopeError(f"variable's scope {self._scope.name!r} was deleted; "
                                 "its value went with it")
            raise ScopeError("variable holds no value yet (nothing ran that writes it)")
        return value

    def set(self, value, kind: str | None = None) -> None:
        """Store ``value``; its kind is guessed unless given (an empty list of scopes)."""
        self._value = value
        # kernels store numpy arrays: skip kind_of's chain of isinstance checks for them
        self._kind = kind or ("tensor" if value.__class__ is np.ndarray else kind_of(value))

    def get_mutable(self, kind: str):
        """The value, created empty as ``kind`` on first use; an error on a kind mismatch."""
        if kind not in KINDS:
            raise ScopeError(f"unknown variable kind {kind!r}; kinds are {sorted(KINDS)}")
        if self._kind is None:
            self._value = KINDS[kind]()
            self._kind = kind
        elif self._kind != kind:
            raise ScopeError(f"variable holds a {self._kind}, not a {kind}")
        return self._value

    def __repr__(self):
        if self._kind == "tensor":
            v = self._value
            shape = list(getattr(v, "shape", []))
            return f"<ScopeVariable tensor {getattr(v, 'dtype', '?')}{shape}>"
        if self._kind == "selected_rows":
            return f"<ScopeVariable {self._value!r}>"
        return f"<ScopeVariable {self._kind or 'empty'}>"


_CREATE_TOKEN = object()


class Scope:
    """A name -> ScopeVariable map with a parent, and the kid scopes made from it."""

    # Told of every kid made below this scope and of every scope about to be destroyed
    # (``scope_created(kid)``, ``scope_destroying(scope)``); kids inherit it. The debugger
    # sets it on a run scope to record what its step_back must undo (interactive/history.py).
    _observer = None

    def __init__(self, parent: "Scope | None" = None, name: str = ""):
        self._parent = parent
        self._vars: dict[str, ScopeVariable] = {}
        self._kids: list[Scope] = []
        self._lock = threading.RLock()
        self.name = name or ("global" if parent is None else "")
        self.alive = True
        _LIVE.add(self)

    # --- variables -------------------------------------------------------------
    def var(self, name: str) -> ScopeVariable:
        """Find ``name`` in this scope or create it here. Parents are not consulted."""
        v = self._vars.get(name)         # the common case: it exists (see find_var)
        if v is not None:
            return v
        if not isinstance(name, str) or not name:
            raise ScopeError(f"a variable name must be a non-empty string, got {name!r}")
        with self._lock:
            v = self._vars.get(name)
            if v is None:
                v = self._vars[name] = ScopeVariable(self, _CREATE_TOKEN)
            return v

    def declare(self, names) -> None:
        """``var(name)`` for each of ``names`` (valid names: a prepared block's locals),
        under one lock: the executor declares every local of a block each time the block
        runs, a thousand of them for a long program, so the per-call cost counts."""
        with self._lock:
            own = self._vars
            for name in names:
                if name not in own:
                    if not name or not isinstance(name, str):
                        raise ScopeError(f"a variable name must be a non-empty string, "
                                         f"got {name!r}")
                    own[name] = ScopeVariable(self, _CREATE_TOKEN)

    def find_var(self, name: str) -> ScopeVariable | None:
        """Search this scope, then its ancestors; ``None`` if no scope on the way has it."""
        # No lock to read: one dict lookup is atomic under the GIL, and writers (var,
        # erase_vars, _destroy) change the dict under the lock in single steps. This is
        # the executor's hottest path (every input and output of every op).
        scope = self
        while scope is not None:
            v = scope._vars.get(name)
            if v is not None:
                return v
            scope = scope._parent
        return None

    def find_local_var(self, name: str) -> ScopeVariable | None:
        with self._lock:
            return self._vars.get(name)

    def erase_vars(self, names) -> None:
        with self._lock:
            for n in names:
                self._vars.pop(n, None)

    def local_var_names(self) -> list[str]:
        with self._lock:
            return list(self._vars)

    # --- the hierarchy ---------------------------------------------------------
    @property
    def parent(self) -> "Scope | None":
        return self._parent

    @property
    def kids(self) -> list["Scope"]:
        with self._lock:
            return list(self._kids)

    def new_scope(self, name: str = "") -> "Scope":
        with self._lock:
            # a counter, not len(kids): names stay unique after a kid is deleted
            self._kids_made = getattr(self, "_kids_made", 0) + 1
            kid = Scope(self, name or f"{self.name}/{self._kids_made - 1}")
            self._kids.append(kid)
        if self._observer is not None:
            kid._observer = self._observer
            self._observer.scope_created(kid)
        return kid

    def find_scope(self, name: str) -> "Scope | None":
        """The kid named ``name`` (the Framework design's CreateScope finds, then creates), searched
        depth-first through this scope's descendants."""
        with self._lock:
            kids = list(self._kids)
        for kid in kids:
            if kid.name == name:
                return kid
            found = kid.find_scope(name)
            if found is not None:
                return found
        return None

    def delete_scope(self, kid: "Scope") -> None:
        """Destroy one kid scope and everything below it; an error if it is not our kid."""
        with self._lock:
            for i, k in enumerate(self._kids):
                if k is kid:
                    del self._kids[i]
                    break
            else:
                raise ScopeError(
                    f"scope {kid.name!r} is not a kid of scope {self.name!r}"
                    + (f" (its parent is {kid.parent.name!r})" if kid.parent else ""))
        kid._destroy()

    def drop_kids(self) -> None:
        """Destroy all kid scopes (the end of a minibatch in the Block and Scope design)."""
        with self._lock:
            kids, self._kids = self._kids, []
        for kid in kids:
            kid._destroy()

    def _destroy(self) -> None:
        if self._observer is not None:
            self._observer.scope_destroying(self)
        self.drop_kids()
        with self._lock:
            self.alive = False        # first: a reader that finds a value gone sees why
            for v in self._vars.values():
                v._value, v._kind = None, None
            self._vars.clear()
            self._parent = None
        _LIVE.discard(self)

    # --- for the debugger's step back (interactive/history.py) ---------------------------
    # Time travel moves scopes out of and back into the tree whole, and puts variables
    # back where kernels made them; these are the only ways it touches a scope.
    def local_vars(self) -> dict[str, ScopeVariable]:
        """name -> variable of this scope alone (a copy of the map)."""
        with self._lock:
            return dict(self._vars)

    def put_var(self, name: str, var: ScopeVariable) -> None:
        """Put ``var`` (made in this scope earlier, then erased) back under ``name``."""
        with self._lock:
            self._vars[name] = var

    def detach(self) -> None:
        """Take this scope out of its parent's kids, keeping it whole (it may come back)."""
        parent = self._parent
        if parent is not None:
            with parent._lock:
                parent._kids[:] = [k for k in parent._kids if k is not self]

    def attach(self, position) -> None:
        """Put this scope back among its parent's kids (if it is not there), before the
        first kid for which ``position(kid)`` is False (creation order, say)."""
        parent = self._parent
        with parent._lock:
            kids = parent._kids
            if not any(k is self for k in kids):
                kids.insert(sum(1 for k in kids if position(k)), self)

    def bury(self) -> None:
        """What deleting does to this one scope (its kids are buried on their own), without
        telling the observer: replaying a deletion the debugger already recorded."""
        self.detach()
        with self._lock:
            self.alive = False
            for v in self._vars.values():
                v._value, v._kind = None, None
            self._vars = {}
            self._parent = None
        _LIVE.discard(self)

    def revive(self, parent: "Scope | None", variables: dict) -> None:
        """A deleted scope alive again under ``parent`` with ``variables`` (their values
        are put back by the caller); attach() puts it among the parent's kids."""
        with self._lock:
            self._vars = dict(variables)
            self._parent = parent
            self.alive = True
        _LIVE.add(self)

    def walk(self, depth: int = 0) -> Iterator[tuple[int, "Scope"]]:
        yield depth, self
        for kid in self.kids:
            yield from kid.walk(depth + 1)

    def held_bytes(self) -> int:
        """Bytes of the tensors held by this scope's variables and its kids' (a tensor
        array counts its items; a value shared by two variables counts twice)."""
        total = 0
        for _, scope in self.walk():
            for var in list(scope._vars.values()):
                value = var._value
                for item in (value if isinstance(value, list) else (value,)):
                    total += getattr(item, "nbytes", 0) if hasattr(item, "shape") else 0
        return total

    def tree(self, show_values: bool = True) -> str:
        """The scope forest below this scope, one line per scope and per variable."""
        lines = []
        for depth, scope in self.walk():
            pad = "  " * depth
            lines.append(f"{pad}Scope {scope.name!r}")
            for name in scope.local_var_names():
                v = scope.find_local_var(name)
                if v is None:
                    continue
                lines.append(f"{pad}  {name}: {_summary(v) if show_values else v.kind}")
        return "\n".join(lines)

    def __contains__(self, name: str) -> bool:
        return self.find_var(name) is not None

    def __repr__(self):
        return f"<Scope {self.name!r} vars={len(self._vars)} kids={len(self._kids)}>"


def _summary(v: ScopeVariable) -> str:
    # Read kind and value once: another thread may destroy the scope between two reads,
    # and a summary of a variable that just died should say so, not raise.
    kind, a = v._kind, v._value
    if kind is None or a is None:
        return "(empty)"
    if kind == "tensor":
        if isinstance(a, np.ndarray) and a.size <= 6:
            return f"{a.dtype}{list(a.shape)} {np.array2string(a.ravel(), precision=4)}"
        return _shape_text(a)
    if kind == "selected_rows":
        return repr(a)
    if isinstance(a, (list, tuple)):       # a fetch list, a tensor array, a scope list
        items = ", ".join(_shape_text(x) if hasattr(x, "shape") else repr(x) for x in a[:3])
        return f"{kind} [{len(a)}: {items}{', ...' if len(a) > 3 else ''}]"
    return f"{kind} {a!r}".replace("\n", " ")[:80]     # one line per variable


def _shape_text(a) -> str:
    return f"{getattr(a, 'dtype', '?')}{list(getattr(a, 'shape', []))}"


_LIVE: "weakref.WeakSet[Scope]" = weakref.WeakSet()


def live_count() -> int:
    """How many scopes exist and have not been destroyed (for leak checks)."""
    return sum(1 for s in list(_LIVE) if s.alive)


# --- the current scope (the Framework design's paddle.scope.current() / paddle.scope.global()) ---
_GLOBAL = Scope(name="global")
_local = threading.local()


def global_() -> Scope:
    """The top-level scope (``global`` is a Python keyword, hence the underscore)."""
    return _GLOBAL


global_scope = global_


def current() -> Scope:
    """The scope ops run in when no scope is given: the global one unless a guard is active."""
    stack = getattr(_local, "stack", None)
    return stack[-1] if stack else _GLOBAL


@contextlib.contextmanager
def scope_guard(scope: Scope):
    """Make ``scope`` the current scope inside the ``with`` block (this thread only)."""
    if not isinstance(scope, Scope):
        raise ScopeError(f"scope_guard needs a Scope, got {type(scope).__name__}")
    stack = getattr(_local, "stack", None)
    if stack is None:
        stack = _local.stack = []
    stack.append(scope)
    try:
        yield scope
    finally:
        stack.pop()


def reset_global() -> None:
    """Empty the global scope (its kids and variables); used by ``pd.reset()``."""
    _GLOBAL.drop_kids()
    with _GLOBAL._lock:
        _GLOBAL._vars.clear()
