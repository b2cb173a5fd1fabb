"""The notebook the *Paddle program* tab's "Open in a notebook" writes beside a program.

``X.ipynb`` beside ``X.pdmodel`` or Paddle 3's ``X.json`` (``model.ipynb`` beside a
``__model__``) loads the program and its parameters and opens the step debugger on a
made-up input. It is written once: an existing notebook of that name is the user's and is
kept, never overwritten.

The name is a user's folder entry, so it is written without trusting what is there: the
file is created with ``O_CREAT | O_EXCL | O_NOFOLLOW`` (never through a symlink, dangling
or not, and never over anything that appeared meanwhile). A symlink there counts as the
user's notebook only when it leads to a regular file inside the server's root; one that
leads outside it or nowhere, a folder of that name, or a folder the server may not write
in is a :class:`NotebookNotWritten` with an HTTP status and what to do.
"""
from __future__ import annotations

import errno
import os
import stat

import nbformat
import numpy as np

from ..core.errors import PaddleNBError


class NotebookNotWritten(PaddleNBError):
    """The notebook could not be written (or a thing of its name is not a notebook)."""

    def __init__(self, message: str, status: int):
        super().__init__(message)
        self.status = status


def _feed_line(feed: dict) -> str:
    shape = tuple(1 if d is None or d < 0 else int(d) for d in feed["shape"]) or (1,)
    kind = np.dtype(feed["dtype"]).kind
    value = (f"rng.standard_normal({shape}).astype(np.{feed['dtype']})" if kind == "f" else
             f"np.zeros({shape}, np.{feed['dtype']})")
    return f"    {feed['name']!r}: {value},"


def notebook_for(opened) -> dict:
    """A notebook (nbformat 4, as a dict) that loads the program and its parameters and
    opens the step debugger on a made-up input; it lives beside the program file."""
    name = os.path.basename(opened.full_path)
    v4 = nbformat.v4
    if opened.feeds and opened.fetches and opened.params_file is not None:
        load_code = (
            f"program, feed_names, fetch_targets = pd.io.load_inference_model(\n"
            f"    '.', exe, model_filename={name!r}, params_filename={opened.params_file!r},\n"
            f"    scope=scope)")
    else:            # no feed and fetch ops to load by, or no parameter file: read the program
        pir = name.endswith(".json")          # Paddle 3's PIR JSON, translated on reading
        load_code = (
            (f"from paddle_nb.io.pir import program_from_pir\n"
             f"program = program_from_pir(open({name!r}, 'rb').read())\n" if pir else
             f"program = pd.Program.from_bytes(open({name!r}, 'rb').read())\n")
            + (f"pd.io.load_persistables(exe, '.', program, filename={opened.params_file!r}, "
               f"scope=scope)\n" if opened.params else "")
            + f"fetch_targets = {opened.fetches!r}")
    feed_lines = "\n".join(_feed_line(f) for f in opened.feeds)
    cells = [
        v4.new_markdown_cell(
            f"# {name}\n\nThe program in `{name}`"
            + (f" with its parameters from `{opened.params_file}`" if opened.params else "")
            + ", loaded by paddle_nb. Run the cells, then step through it with the "
            "debugger's buttons (Step, Back, Over, Out, Continue)."),
        v4.new_code_cell(
            "import numpy as np\nimport paddle_nb as pd\n"
            "from paddle_nb.notebook.widgets import DebuggerView, ProgramView\n\n"
            "exe = pd.Executor(pd.CPUPlace())\nscope = pd.Scope()\n" + load_code
            + f"\nProgramView(program, source={name!r})"),
        v4.new_markdown_cell("A made-up input of the shapes the program declares (-1, the "
                             "batch, taken as 1): put real data here."),
        v4.new_code_cell("rng = np.random.default_rng(0)\nfeed = {\n" + feed_lines + "\n}"),
        v4.new_code_cell("dbg = DebuggerView.from_program(program, feed=feed, "
                         "fetch_list=fetch_targets, scope=scope)\ndbg"),
    ]
    nb = v4.new_notebook(cells=cells)
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}
    return nb


def write_notebook(opened) -> str:
    """Write :func:`notebook_for` beside the program unless a notebook of that name is
    there (kept as the user left it); returns its path as the file browser names it."""
    folder, name = os.path.split(opened.full_path)
    stem = "model" if name == "__model__" else os.path.splitext(name)[0]
    target = os.path.join(folder, stem + ".ipynb")
    rel_folder = os.path.dirname(opened.path.lstrip("/"))
    shown = f"{rel_folder}/{stem}.ipynb" if rel_folder else f"{stem}.ipynb"
    if _users_notebook(target, shown, opened.root_dir):
        return shown
    text = nbformat.writes(nbformat.from_dict(notebook_for(opened))).encode("utf-8")
    flags = (os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
             | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0))
    try:
        fd = os.open(target, flags, 0o666)     # the umask decides the mode, as for any file
    except FileExistsError:                    # appeared since we looked: look again
        if _users_notebook(target, shown, opened.root_dir):
            return shown
        raise _not_written(shown, "something else took its name meanwhile", errno.EEXIST)
    except OSError as e:
        raise _not_written(shown, e.strerror or str(e), e.errno) from None
    try:
        with open(fd, "wb") as f:
            f.write(text)
    except OSError as e:                       # a full disk: no half notebook is left
        os.unlink(target)                      # ours: created above, never a link
        raise _not_written(shown, e.strerror or str(e), e.errno) from None
    return shown


def _users_notebook(target: str, shown: str, root_dir: str) -> bool:
    """Whether a notebook of the user's is at ``target`` (False: nothing is there); a
    thing there that is not one is refused."""
    try:
        st = os.lstat(target)
    except FileNotFoundError:
        return False
    if stat.S_ISLNK(st.st_mode):
        real, root = os.path.realpath(target), os.path.realpath(root_dir)
        if os.path.commonpath([root, real]) != root:
            raise NotebookNotWritten(
                f"{shown} is a symlink to {real}, outside the folder this server serves: it "
                f"is not followed, and nothing was written. Remove or rename the link", 409)
        if not os.path.isfile(real):
            raise NotebookNotWritten(
                f"{shown} is a symlink to {real}, which is "
                + ("missing" if not os.path.lexists(real) else "not a file")
                + ": it is not followed, and nothing was written. Remove or rename the link",
                409)
        return True
    if stat.S_ISREG(st.st_mode):
        return True
    kind = "a folder" if stat.S_ISDIR(st.st_mode) else "not a regular file"
    raise NotebookNotWritten(f"{shown} is {kind}, not a notebook: nothing was written. "
                             f"Rename it to let the tab write the notebook there", 409)


def _not_written(shown: str, why: str, code: int | None) -> NotebookNotWritten:
    status = {errno.EACCES: 403, errno.EPERM: 403, errno.EROFS: 403, errno.ENOSPC: 507,
              errno.EDQUOT: 507, errno.EEXIST: 409}.get(code, 500)
    hint = " (the folder is read-only for the server?)" if status == 403 else ""
    return NotebookNotWritten(f"cannot write {shown}: {why}{hint}", status)
