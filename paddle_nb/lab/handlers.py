"""The Jupyter server's side of the *Paddle program* tab: three small JSON routes under
``/paddle-nb/`` (``program_file.py`` does the work; these only parse and answer).

- ``GET  program?path=P``           the tab's state: the ProgramView's traits, the inputs,
                                    outputs and parameters of the file at P
- ``POST program``  {path, changes | message}   a trait change or a view message, answered
                                    with the new state (the view re-renders in Python)
- ``POST notebook`` {path}          writes the notebook that runs P (kept if it exists)
- ``GET  asset/NAME``               the views' ES module or stylesheet, the same text a
                                    notebook's widget loads
Every route needs the server's login, as every Jupyter API does.
"""
from __future__ import annotations

import json

import tornado
from jupyter_server.base.handlers import APIHandler
from jupyter_server.utils import url_path_join

from ..core.errors import PaddleNBError
from . import program_file

ASSETS = {"program_view.js": "application/javascript", "widgets.css": "text/css"}


class _Base(APIHandler):
    def initialize(self, programs: program_file.OpenedPrograms):
        self.programs = programs

    def answer(self, fn):
        try:
            self.finish(json.dumps(fn()))
        except PaddleNBError as e:
            self.set_status(400)
            self.finish(json.dumps({"error": str(e)}))


class ProgramHandler(_Base):
    @tornado.web.authenticated
    def get(self):
        path = self.get_query_argument("path", "")
        self.answer(lambda: self.programs.get(path).state())

    @tornado.web.authenticated
    def post(self):
        body = self.get_json_body() or {}

        def change():
            opened = self.programs.get(body.get("path", ""))
            if body.get("changes"):
                opened.apply(dict(body["changes"]))
            if body.get("message"):
                opened.message(dict(body["message"]))
            return opened.state()
        self.answer(change)


class NotebookHandler(_Base):
    @tornado.web.authenticated
    def post(self):
        body = self.get_json_body() or {}
        self.answer(lambda: {"path": program_file.write_notebook(
            self.programs.get(body.get("path", "")))})


class AssetHandler(APIHandler):
    @tornado.web.authenticated
    def get(self, name):
        if name not in ASSETS:
            raise tornado.web.HTTPError(404)
        from ..notebook.widgets import view_asset   # noqa: PLC0415 (the notebook extra)
        self.set_header("Content-Type", ASSETS[name])
        self.finish(view_asset(name))


def setup_handlers(web_app, root_dir: str) -> None:
    programs = program_file.OpenedPrograms(root_dir)
    base = url_path_join(web_app.settings["base_url"], "paddle-nb")
    web_app.add_handlers(".*$", [
        (url_path_join(base, "program"), ProgramHandler, {"programs": programs}),
        (url_path_join(base, "notebook"), NotebookHandler, {"programs": programs}),
        (url_path_join(base, "asset", "([a-z_]+\\.(?:js|css))"), AssetHandler),
    ])
