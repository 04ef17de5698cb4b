"""Hidden working directories beside an output — the staging directory of a release being
written (``.OUT.tmp-*``), the Dask backend's scratch (``.OUT.versapub-scratch-*``) — and
their owner marks.

Each directory has a mark beside it (``<directory>.owner``: host and process id), so that a
later run towards the same output removes the directories of a client killed before it
could clean up (SIGKILL, out of memory); never one whose process is alive, one made on
another host (its process cannot be asked) or one without a mark (not ours to judge).
"""

from __future__ import annotations

import glob
import os
import shutil
import socket
from pathlib import Path

#: The suffix of a working directory's owner mark (a file beside it).
OWNER_SUFFIX = ".owner"


def owner_mark(directory: Path) -> Path:
    """The file naming the host and process that own ``directory``."""
    return directory.with_name(directory.name + OWNER_SUFFIX)


def claim(directory: Path) -> Path:
    """Create ``directory`` (and its parents) with this process's owner mark beside it."""
    directory.parent.mkdir(parents=True, exist_ok=True)
    owner_mark(directory).write_text(f"{socket.gethostname()} {os.getpid()}\n", encoding="utf-8")
    directory.mkdir()
    return directory


def remove(directory: Path) -> None:
    """Remove ``directory`` (if still there) and its owner mark."""
    shutil.rmtree(directory, ignore_errors=True)
    owner_mark(directory).unlink(missing_ok=True)


def sweep(root: Path, prefix: str) -> list[Path]:
    """Remove the working directories ``root/<prefix>*`` whose owner process (on this host)
    is gone; the removed paths."""
    gone = []
    for mark in sorted(root.glob(glob.escape(prefix) + "*" + OWNER_SUFFIX)):
        try:
            host, pid = mark.read_text(encoding="utf-8").split()
            alive = host != socket.gethostname() or _alive(int(pid))
        except (OSError, ValueError):
            continue  # not ours, or still being written
        if alive:
            continue
        directory = mark.with_name(mark.name[: -len(OWNER_SUFFIX)])
        remove(directory)
        gone.append(directory)
    return gone


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def dask_scratch(dest: Path, scratch: Path | None) -> Path:
    """A fresh scratch directory's path for a Dask job writing ``dest`` (under ``scratch``,
    else beside ``dest``), after sweeping those a killed client left there (not created)."""
    import uuid

    root = (scratch or dest.parent).resolve()
    sweep(root, f".{dest.name}.versapub-scratch-")  # of a client killed before it could
    return root / f".{dest.name}.versapub-scratch-{uuid.uuid4().hex[:12]}"
