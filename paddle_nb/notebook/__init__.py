"""The notebook front end: the ``%%paddle`` magic, widgets and the step debugger.

It depends on the core (never the reverse) and imports IPython / anywidget only here, so
``import paddle_nb`` works without a notebook stack. ``%load_ext paddle_nb`` calls
:func:`paddle_nb.load_ipython_extension`.
"""
