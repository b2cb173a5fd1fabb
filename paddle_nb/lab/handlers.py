"""The Jupyter server's side of the *Paddle program* tab: small JSON routes under
``/paddle-nb/`` (``program_file.py`` does the work; these only check, dispatch, answer).

- ``GET    program?path=P&tab=T``   the tab's state: the ProgramView's traits, the inputs,
                                    outputs and parameters of the file at P; tab T shows it
- ``POST   program``  {path, tab, changes | message}   a trait change or a view message,
                                    answered with the new state (the view re-renders in Python)
- ``DELETE program?path=P&tab=T``   tab T closed: the program is freed when no tab shows it
- ``POST   notebook`` {path}        writes the notebook that runs P (kept if it exists)
- ``GET    asset/NAME``             the views' ES module or stylesheet, the same text a
                                    notebook's widget loads
Every route needs the server's login, as every Jupyter API does.

**Never on the event loop.** Reading a program, building its view and running graphviz
take from milliseconds to seconds (a program of 2,000 blocks: about 2 s), and the server
answers nobody while its event loop is busy. So the work runs on a small pool of threads
(``WORKERS``) and the loop only awaits it: the rest of Jupyter keeps answering. (The
server's garbage collector is left as it is: ``gc.freeze()`` after the first load shortened
the collector's pauses, but the process is the server's, not paddle_nb's.) The work's
modules (numpy, numba, protobuf, the widgets) load on the first request, through
``paddle_nb/lazy.py``: importing this module costs the server's start nothing.

**Errors.** A body or query that is not what the tab sends is a 400 saying what was
expected (``request_bodies.py``, the one place that knows); a file the tab cannot open or
write is the status its error carries (403, 404, 409, 507, ...) with its message; anything
else is a 500 whose message names the exception (and the server's log has the traceback),
never the bare "Unhandled error" of an escaped exception.
"""
from __future__ import annotations

import functools
import json
import threading
from concurrent.futures import ThreadPoolExecutor

import tornado
from jupyter_server.base.handlers import APIHandler
from jupyter_server.utils import url_path_join
from tornado.ioloop import IOLoop

from .. import lazy
from . import request_bodies
from .request_bodies import BadRequest

ASSETS = {"program_view.js": "application/javascript", "widgets.css": "text/css"}
WORKERS = 4          # requests worked on at once (each view is used by one at a time)


class Programs:
    """The server's OpenedPrograms, made on the first request (its module is heavy), and
    the pool the work runs on."""

    def __init__(self, root_dir: str):
        self.root_dir = root_dir
        self.pool = ThreadPoolExecutor(WORKERS, thread_name_prefix="paddle-nb")
        self._programs = None
        self._lock = threading.Lock()

    def opened(self):
        """(program_file module, its OpenedPrograms); call in a worker thread."""
        program_file = lazy.server_part()
        with self._lock:
            if self._programs is None:
                self._programs = program_file.OpenedPrograms(self.root_dir)
        return program_file, self._programs


class _Base(APIHandler):
    def initialize(self, programs: Programs):
        self.programs = programs

    async def answer(self, work) -> None:
        """Run ``work(OpenedPrograms)`` (returns JSON text) on the pool; answer with it, or
        with the error as {"error": message} and its status."""
        status, text = await IOLoop.current().run_in_executor(self.programs.pool, self._run,
                                                              work)
        self.set_status(status)
        self.set_header("Content-Type", "application/json")
        self.finish(text)

    def _run(self, work) -> tuple[int, str]:
        try:
            program_file, programs = self.programs.opened()
        except Exception as e:      # noqa: BLE001 (a missing extra: said, not a bare 500)
            return self._failure("could not load", e)
        try:
            return 200, work(programs)
        except BadRequest as e:
            return e.status, _error(str(e))
        except program_file.PaddleNBError as e:     # the file's fault: its status, if any
            return getattr(e, "status", 400), _error(str(e))
        except OSError as e:
            where = f" ({e.filename})" if e.filename else ""
            return 500, _error(f"the server could not read or write a file{where}: "
                               f"{e.strerror or e}")
        except Exception as e:      # noqa: BLE001 (a bug: answered, and logged)
            return self._failure("failed", e)

    def _failure(self, what: str, e: Exception) -> tuple[int, str]:
        self.log.exception("paddle_nb: %s %s", what, self.request.uri)
        return 500, _error(f"paddle_nb's server extension {what}: {type(e).__name__}: {e} "
                           f"(the server's log has the traceback)")

    def refuse(self, e: BadRequest) -> None:
        self.set_status(e.status)
        self.set_header("Content-Type", "application/json")
        self.finish(_error(str(e)))

    def path_and_tab(self) -> tuple[str, str]:
        """The ``?path=P&tab=T`` of a GET or DELETE, checked (a BadRequest if not)."""
        return (request_bodies.program_path(self.get_query_argument("path", "")),
                request_bodies.tab_id(self.get_query_argument("tab", "")))


def _error(message: str) -> str:
    return json.dumps({"error": message})


def _checked(method):
    """A route whose request is checked before any work: a BadRequest it raises (before it
    hands the work to the pool) is answered at once, with its status and message."""
    @functools.wraps(method)
    async def route(self, *args):
        try:
            return await method(self, *args)
        except BadRequest as e:
            self.refuse(e)
    return route


class ProgramHandler(_Base):
    @tornado.web.authenticated
    @_checked
    async def get(self):
        path, tab = self.path_and_tab()
        await self.answer(lambda programs: _state(programs, programs.get(path, tab)))

    @tornado.web.authenticated
    @_checked
    async def post(self):
        post = request_bodies.program_post(self.request.body)

        def change(programs):
            opened = programs.get(post.path, post.tab)
            with opened.lock:
                if post.changes:
                    opened.apply(post.changes)
                if post.message is not None:
                    opened.message(post.message)
                text = opened.state_json()
            programs.recount()
            return text
        await self.answer(change)

    @tornado.web.authenticated
    @_checked
    async def delete(self):
        path, tab = self.path_and_tab()
        await self.answer(lambda programs: json.dumps(
            {"path": path, "tabs": programs.release(path, tab), **programs.held()}))


def _state(programs, opened) -> str:
    with opened.lock:
        text = opened.state_json()
    programs.recount()
    return text


class NotebookHandler(_Base):
    @tornado.web.authenticated
    @_checked
    async def post(self):
        path = request_bodies.notebook_post(self.request.body)
        await self.answer(lambda programs: json.dumps({"path": programs.notebook(path)}))


class AssetHandler(_Base):
    @tornado.web.authenticated
    async def get(self, name):
        if name not in ASSETS:
            raise tornado.web.HTTPError(404)
        status, text = await IOLoop.current().run_in_executor(self.programs.pool, self._run,
                                                              lambda _: _asset(name))
        self.set_status(status)
        self.set_header("Content-Type", ASSETS[name] if status == 200 else "application/json")
        self.finish(text)


def _asset(name: str) -> str:
    return lazy.server_part().view_asset(name)


def setup_handlers(web_app, root_dir: str) -> None:
    programs = Programs(root_dir)
    base = url_path_join(web_app.settings["base_url"], "paddle-nb")
    web_app.add_handlers(".*$", [
        (url_path_join(base, "program"), ProgramHandler, {"programs": programs}),
        (url_path_join(base, "notebook"), NotebookHandler, {"programs": programs}),
        (url_path_join(base, "asset", "([a-z_]+\\.(?:js|css))"), AssetHandler,
         {"programs": programs}),
    ])
