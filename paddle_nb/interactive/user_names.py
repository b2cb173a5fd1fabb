"""The user's names for program variables: ``x`` where the program says ``minibatch_0``.

A ``%%paddle`` cell binds notebook names to Variables (``x = pd.minibatch(...)``), but the
program, its scopes and the debugger only know the names the framework generated. The
notebook session records which notebook name was bound to which Variable and hands the
views a map *program name -> user name(s)* (``NotebookProgram.user_names()``). This module is
the one place that reads such a map, so every view shows a variable the same way: the
user's name first, the program's name beside it. Without a map (plain Python, no notebook)
the views show program names only.
"""
from __future__ import annotations

from ..core.grad_maker import GRAD_SUFFIX, forward_name


def user_name(name: str, user_names: dict | None) -> str | None:
    """The user's name(s) for program variable ``name``, or None where the user bound none.

    A gradient is named after its variable: ``x@GRAD`` for ``minibatch_0@GRAD`` (and for a
    renamed copy, ``x@GRAD@RENAME@1``), so the backward ops read as the forward ones do."""
    if not user_names:
        return None
    if name in user_names:
        return user_names[name]
    base = forward_name(name)
    if GRAD_SUFFIX not in name or base not in user_names:
        return None
    suffix = name[len(base):]
    return ", ".join(u + suffix for u in user_names[base].split(", "))


def shown_name(name: str, user_names: dict | None) -> str:
    """``x (minibatch_0)`` where the user named it, else just ``minibatch_0``."""
    user = user_name(name, user_names)
    return f"{user} ({name})" if user else name


def user_names_of(bindings) -> dict[str, str]:
    """``{program name: "h, h_prev"}`` from ``(user name, program name)`` pairs in the order
    the user wrote them; several user names for one variable are joined with ", "."""
    names: dict[str, list[str]] = {}
    for user, program_name in bindings:
        users = names.setdefault(program_name, [])
        if user not in users:
            users.append(user)
    return {n: ", ".join(users) for n, users in names.items()}
