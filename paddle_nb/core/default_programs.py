"""The process-wide default main and startup programs, as in Fluid.

Builders append to the current block of the default main program and put initialisers in
the default startup program; ``program_guard`` swaps them for a ``with`` block. They are
held here, in a module below ``program.py``, so that the modules ``program.py`` builds on
(``variable.py``'s ``pd.Variable(shape=...)`` form, the executor's default) reach them
without importing it; ``program.py`` sets them when it is imported and re-exports these
functions.
"""
from __future__ import annotations


class _Defaults:
    main = None        # a Program, set by program.py
    startup = None


_defaults = _Defaults()


def default_main_program():
    return _defaults.main


def default_startup_program():
    return _defaults.startup


def switch_main_program(program):
    """Make ``program`` the default main program; return the one it replaces."""
    old, _defaults.main = _defaults.main, program
    return old


def switch_startup_program(program):
    old, _defaults.startup = _defaults.startup, program
    return old
