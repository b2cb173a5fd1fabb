"""The notebook front end: the ``%%paddle`` magic, widgets and the step debugger.

It depends on the core (never the reverse) and imports IPython / anywidget only here, so
``import paddle_nb`` works without a notebook stack. ``%load_ext paddle_nb`` calls
:func:`paddle_nb.load_ipython_extension`.
"""


def program(name: str = "main"):
    """The notebook program that ``%%paddle`` cells built (``--program NAME``): its
    ``main`` and ``startup`` Programs and the ``scope`` it runs in, for plain cells that
    want to look at it (``pd.notebook.program().main.to_code()``)."""
    from .magic import get_notebook   # noqa: PLC0415 (imports IPython)
    programs = get_notebook().programs
    if name not in programs:
        known = ", ".join(programs) or "none yet: run a %%paddle cell first"
        raise LookupError(f"no notebook program named {name!r} (programs: {known})")
    return programs[name]
