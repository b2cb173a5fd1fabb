"""Files: one per variable, and writes that land all together or not at all."""
from __future__ import annotations

import contextlib
import os
import uuid


from ..core.errors import IOFormatError

def file_for(dirname: str, name: str, error=IOFormatError) -> str:
    """The file of one variable. A '/' in the name is a subdirectory, as in Paddle; parts that
    would lead out of ``dirname`` are refused."""
    parts = name.split("/")
    if any(p in ("", ".", "..") for p in parts) or "\\" in name or os.path.isabs(name):
        raise error(f"variable {name!r} cannot have a file of its own under {dirname} "
                    f"(its name is not a plain relative path); use filename= for one "
                    f"combined file")
    return os.path.join(dirname, *parts)


# --- writing files: all or nothing -------------------------------------------------------------
def write_files(files: dict[str, bytes]) -> None:
    """Write every file or none. Each file goes to a temporary file next to it (same
    directory, so same file system, so ``os.replace`` is an atomic rename); only when every
    temporary is complete and synced are they moved into place. On any error, Ctrl-C
    included, the temporaries are removed and the old files are untouched."""
    staged: list[tuple[str, str]] = []
    try:
        for path, data in files.items():
            directory = os.path.dirname(path) or "."
            os.makedirs(directory, exist_ok=True)
            tmp = os.path.join(directory, f".{os.path.basename(path)}.{uuid.uuid4().hex[:8]}.tmp")
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
    except BaseException:
        for tmp, _ in staged:
            with contextlib.suppress(OSError):   # already moved into place, or never created
                os.remove(tmp)
        raise


def read_file(path: str, what: str, hint: str = "") -> bytes:
    try:
        with open(path, "rb") as f:
            return f.read()
    except FileNotFoundError:
        raise IOFormatError(f"cannot load {what}: there is no file {path}{hint}") from None
    except OSError as e:
        raise IOFormatError(f"cannot load {what}: cannot read {path}: "
                            f"{e.strerror or e}") from None
