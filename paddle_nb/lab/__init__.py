"""paddle_nb inside JupyterLab and Notebook 7 (the front end: the repository's ``extension/``
folder, TypeScript, built into ``paddle_nb/labextension/``, which pip installs where
JupyterLab looks for extensions).

Two halves talk to Python:
- the **Paddle inspector** in the right sidebar shows a widget that the notebook's own
  kernel makes (``paddle_nb.notebook.inspector``), so it needs nothing from the server;
- a **Paddle program** tab, for a ``.pdmodel``, a ``__model__`` or Paddle 3's PIR
  ``X.json`` beside its ``X.pdiparams`` double-clicked in the file browser, asks this server
  extension (``handlers.py``, ``program_file.py``): no kernel is started to read a file.

The server loads this module through ``jupyter-config/paddle_nb.json``, which pip installs
into ``etc/jupyter/jupyter_server_config.d``. Importing it (and ``handlers.py``) loads
nothing of the library's weight: the tab's work loads on its first request
(``paddle_nb/lazy.py``), so the server starts as fast without paddle_nb as with it.
"""


def _jupyter_server_extension_points():
    return [{"module": "paddle_nb.lab"}]


def _jupyter_labextension_paths():
    return [{"src": "labextension", "dest": "paddle-nb-inspector"}]


def _load_jupyter_server_extension(server_app) -> None:
    from .handlers import setup_handlers   # noqa: PLC0415 (tornado only inside a server)
    setup_handlers(server_app.web_app, server_app.root_dir)
    server_app.log.info("paddle_nb: the Paddle program routes are at /paddle-nb/")
