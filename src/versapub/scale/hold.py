"""A seam for tests that kill a worker mid-task (issue 63, item 5): a kill must wait on a
state the code reports, never on time or on a folder that may come and go.

When the environment names a point in ``VERSAPUB_HOLD`` and a folder in
``VERSAPUB_HOLD_DIR`` — only a test's own workers ever have them — a task that reaches that
point writes ``POINT-PID.held`` there (``PID``: its worker's process) and waits until
``POINT.release`` appears (at most :data:`HOLD_S` seconds), so the test kills that very
worker while the task is running on it. Unset, :func:`hold` returns at once."""

from __future__ import annotations

import os
import time
from pathlib import Path

#: The longest a held task waits for its release (a test that never releases it ends first).
HOLD_S = 600.0


def hold(point: str) -> None:
    """Hold here when a test asked to (module docstring); otherwise nothing."""
    if os.environ.get("VERSAPUB_HOLD") != point or not os.environ.get("VERSAPUB_HOLD_DIR"):
        return
    folder = Path(os.environ["VERSAPUB_HOLD_DIR"])
    (folder / f"{point}-{os.getpid()}.held").write_text("", encoding="utf-8")
    deadline = time.monotonic() + HOLD_S
    while not (folder / f"{point}.release").exists() and time.monotonic() < deadline:
        time.sleep(0.01)
