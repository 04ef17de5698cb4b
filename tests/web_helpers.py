"""Shared by the web tests: waiting for a task a route started."""

from __future__ import annotations

import time
from typing import Any


def finished(c: Any, started: Any, timeout: float = 120) -> dict[str, Any]:
    """The task a route started (``started``: its answer), polled until it ends."""
    assert started.status_code == 200, started.text
    task = started.json()
    deadline = time.monotonic() + timeout
    while task["status"] in ("running", "cancelling"):
        assert time.monotonic() < deadline, task
        time.sleep(0.05)
        task = c.get(f"/api/tasks/{task['id']}").json()
    return task  # type: ignore[no-any-return]
