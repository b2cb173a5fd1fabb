"""The notebook front end: the ``%%paddle`` magic, the widgets and the sidebar's inspector.

It is the layer above :mod:`paddle_nb.interactive` (the step debugger and the model of the
``%%paddle`` cells, which need no IPython) and the core, never below them. IPython and
anywidget are imported by the modules that need them (``magic.py``, ``widgets.py``,
``inspector.py``), never by this one, so ``import paddle_nb`` (and ``pd.notebook``) works
without a notebook stack. ``%load_ext paddle_nb`` calls
:func:`paddle_nb.load_ipython_extension`.
"""


def program(name: str = "main"):
    """The notebook program that ``%%paddle`` cells built (``--program NAME``): its
    ``main`` and ``startup`` Programs and the ``scope`` it runs in, for plain cells that
    want to look at it (``pd.notebook.program().main.to_code()``)."""
    from .magic import get_notebook   # noqa: PLC0415 (IPython: pd.notebook loads without it)
    programs = get_notebook().programs
    if name not in programs:
        known = ", ".join(programs) or "none yet: run a %%paddle cell first"
        raise LookupError(f"no notebook program named {name!r} (programs: {known})")
    return programs[name]
