"""Files: one per variable, writes that land all together or not at all, and reads that
take only what a loader should take.

Reading trusts neither the file system nor the size: :func:`read_file` opens without
blocking, looks at what it opened (``fstat`` on the descriptor, so a symlink is followed
but what it leads to is checked), reads only regular files, refuses one larger than its
limit before reading it, and never reads more than the limit plus one byte (a file that
grows while it is read is caught too). The limits are module attributes of
:mod:`paddle_nb.core.limits`: ``MAX_PROGRAM_BYTES`` for program files and
``MAX_PARAMS_BYTES`` for parameter files.
"""
from __future__ import annotations

import contextlib
import errno
import os
import stat
import uuid

from ..core import limits as _limits
from ..core.errors import IOFormatError, SaveError
from ..core.limits import human_bytes

NAME_MAX = 255          # bytes in one file name (Linux, macOS; Windows counts 255 characters)


def short_name(name: str) -> str:
    """A name as an error shows it: whole if short, else its start and its length."""
    return repr(name) if len(name) <= 60 else f"{name[:40]!r}... ({len(name):,} characters)"


def file_for(dirname: str, name: str, error=IOFormatError) -> str:
    """The file of one variable. A '/' in the name is a subdirectory, as in Paddle; parts that
    would lead out of ``dirname`` are refused, and so are parts too long for a file name."""
    parts = name.split("/")
    if (any(p in ("", ".", "..") for p in parts) or "\\" in name or "\0" in name
            or os.path.isabs(name) or not _encodable(name)):
        raise error(f"variable {short_name(name)} cannot have a file of its own under {dirname} "
                    f"(its name is not a plain relative path); use filename= for one "
                    f"combined file")
    longest = max(len(os.fsencode(p)) for p in parts)
    if longest > NAME_MAX:
        raise error(f"variable {short_name(name)} cannot have a file of its own under {dirname}: "
                    f"its file name would be {longest:,} bytes, and a file name is limited to "
                    f"{NAME_MAX} bytes. Use filename= to keep every variable in one combined "
                    f"file (it does not store names, so any name fits)")
    return os.path.join(dirname, *parts)


def _encodable(name: str) -> bool:
    """Whether ``name`` can be a file name here at all (not every str can: a lone
    surrogate cannot be encoded)."""
    try:
        os.fsencode(name)
    except UnicodeError:
        return False
    return True


def _temporary(path: str) -> str:
    """A new name next to ``path`` for writing it: ``.name.1a2b3c4d.tmp``, or without the
    name when that would be too long for a file name."""
    directory, base = os.path.split(path)
    tag = uuid.uuid4().hex[:8]
    name = f".{base}.{tag}.tmp"
    if len(os.fsencode(name)) > NAME_MAX:
        name = f".paddle_nb.{tag}.tmp"
    return os.path.join(directory, name)


# --- writing files: all or nothing -------------------------------------------------------------
def write_files(files: dict[str, bytes]) -> None:
    """Write every file or none. Each file goes to a temporary file next to it (same
    directory, so same file system, so ``os.replace`` is an atomic rename); only when every
    temporary is complete and synced are they moved into place. On any error, Ctrl-C
    included, the temporaries are removed and the old files are untouched."""
    for path in files:                   # a name the file system refuses: before any write
        base = os.path.basename(path)
        if not _encodable(path) or "\0" in path:
            raise SaveError(f"cannot save {short_name(path)}: it is not a valid file name")
        if len(os.fsencode(base)) > NAME_MAX:
            raise SaveError(f"cannot save {path}: its file name {short_name(base)} is "
                            f"{len(os.fsencode(base)):,} bytes, and a file name is limited to "
                            f"{NAME_MAX} bytes; choose a shorter filename=")
    staged: list[tuple[str, str]] = []
    try:
        for path, data in files.items():
            directory = os.path.dirname(path) or "."
            os.makedirs(directory, exist_ok=True)
            tmp = _temporary(path)
            staged.append((tmp, path))
            # os.open with 0o666 lets the umask decide the mode, as for an ordinary file.
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0),
                         0o666)
            with open(fd, "wb") as f:
                f.write(data)
                f.flush()
                os.fsync(f.fileno())     # the bytes are on disk before the name points at them
        for tmp, path in staged:
            os.replace(tmp, path)
    except BaseException as e:
        for tmp, _ in staged:
            with contextlib.suppress(OSError):   # already moved into place, or never created
                os.remove(tmp)
        if isinstance(e, OSError) and e.errno == errno.ENAMETOOLONG:   # the whole path
            raise SaveError(f"cannot save {short_name(path)}: the path is too long for the "
                            f"file system (a path is limited to about 4096 bytes, a file name "
                            f"to {NAME_MAX}); choose a shorter directory or filename="
                            ) from None
        raise


# --- reading files: regular files only, and only so much ------------------------------------------
def _kind(mode: int) -> str:
    for test, kind in ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO (named pipe)"),
                       (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
                       (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return kind
    return "not a regular file"


def read_file(path: str, what: str, limit: str, hint: str = "") -> bytearray:
    """The bytes of the regular file ``path``. ``what`` names it in errors (``variable
    'fc_0.w_0'``); ``limit`` is the name of its limit in paddle_nb.core.limits
    (``MAX_PROGRAM_BYTES`` or ``MAX_PARAMS_BYTES``). Anything else, a larger file, or one
    that cannot be read is an :class:`IOFormatError` naming the file."""
    cap = getattr(_limits, limit)
    with open_checked(path, what, limit, hint) as (f, size):
        try:
            data = _read_at_most(f.fileno(), size, cap)
        except OSError as e:
            raise IOFormatError(f"cannot load {what}: cannot read {path}: "
                                f"{e.strerror or e}") from None
    if data is None:
        raise IOFormatError(f"cannot load {what}: {path} grew past the limit "
                            f"paddle_nb.core.limits.{limit} = {human_bytes(cap)} while it "
                            f"was read (is something still writing it?)")
    return data


@contextlib.contextmanager
def open_checked(path: str, what: str, limit: str, hint: str = ""):
    """The regular file ``path`` opened for reading (unbuffered) and its size, as
    :func:`read_file` checks it, without reading it: for a reader that takes only parts
    of a large file (the tensor headers of a parameter file: tensor_format.FileReader)."""
    cap = getattr(_limits, limit)
    # O_NONBLOCK: opening a FIFO nobody writes to returns at once instead of waiting for a
    # writer (for a regular file it changes nothing). No O_NOFOLLOW: a symlink to a regular
    # file is fine, and fstat below sees what the link leads to.
    flags = (os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
             | getattr(os, "O_CLOEXEC", 0))
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        raise IOFormatError(f"cannot load {what}: there is no file {path}{hint}") from None
    except OSError as e:
        raise IOFormatError(f"cannot load {what}: cannot open {short_name(path)}: "
                            f"{_open_error(path, e)}") from None
    except (ValueError, UnicodeError):    # a NUL byte, a lone surrogate
        raise IOFormatError(f"cannot load {what}: {short_name(path)} is not a valid file "
                            f"name") from None
    try:
        st = os.fstat(fd)
    except OSError as e:
        os.close(fd)
        raise IOFormatError(f"cannot load {what}: cannot read {path}: {e.strerror or e}"
                            ) from None
    problem = None
    if not stat.S_ISREG(st.st_mode):
        problem = (f"{path} is {_kind(st.st_mode)}, not a regular file (only regular files, "
                   f"or symlinks to them, are read)")
    elif st.st_size > cap:
        problem = (f"{path} is {human_bytes(st.st_size)} ({st.st_size:,} bytes), more than "
                   f"the limit paddle_nb.core.limits.{limit} = {human_bytes(cap)}; nothing "
                   f"was read. If the file is right, raise the limit")
    if problem:
        os.close(fd)
        raise IOFormatError(f"cannot load {what}: {problem}")
    with open(fd, "rb", buffering=0) as f:       # a regular file: closed with f
        yield f, st.st_size


def _open_error(path: str, e: OSError) -> str:
    if e.errno == errno.ENAMETOOLONG:
        return (f"the name is too long for the file system (a file name is limited to "
                f"{NAME_MAX} bytes, a path to about 4096)")
    if e.errno == errno.ENXIO:            # what opening a socket gives
        with contextlib.suppress(OSError):
            return f"it is {_kind(os.stat(path).st_mode)}, not a regular file"
    return e.strerror or str(e)


def _read_at_most(fd: int, size: int, cap: int) -> bytearray | None:
    """Read the file: the ``size`` bytes fstat promised, in place, then whatever follows in
    small steps up to ``cap + 1`` bytes in all. None when it holds more than ``cap``."""
    buf = bytearray(size)                 # one allocation for a file that stays as it is
    got = 0
    with open(fd, "rb", buffering=0, closefd=False) as f:
        with memoryview(buf) as view:
            while got < size:
                n = f.readinto(view[got:])
                if not n:                 # shorter than fstat said: it shrank meanwhile
                    break
                got += n
        del buf[got:]
        while len(buf) <= cap:            # longer than fstat said: read on, one step at a time
            more = f.read(min(1 << 16, cap + 1 - len(buf)))   # read() allocates this much
            if not more:
                return buf
            buf += more
    return None
