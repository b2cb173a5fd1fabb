"""What ``python -m paddle_nb <command>`` runs, one module a command (``ops.py``,
``upgrade.py``, ``distributed.py``; ``tour`` is ``paddle_nb/tour.py``, ``coverage``
``paddle_nb/coverage/cli.py``), and ``commands.py`` choosing among them.

``paddle_nb/__main__.py`` parses the arguments with nothing but argparse loaded, so that
``--help`` and a mistyped argument answer at once; only then does it import
``commands.py``, which loads the package (numpy, numba, every op).
"""
