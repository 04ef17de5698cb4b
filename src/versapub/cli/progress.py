"""Progress on stderr, and running a publishing job under it."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from rich.markup import escape

from versapub.cli.app import T, err

if TYPE_CHECKING:
    from rich.progress import TaskID

    from versapub.io.config import PublishConfig
    from versapub.release.value import Release


class _Steps:
    """Progress on stderr: on a terminal a bar with percentage and time left for every step
    whose size is known; otherwise one line per step (and per tenth of a long step), so a
    log shows where a run is."""

    #: Seconds without a line before a step's progress is logged again.
    QUIET_S = 5.0

    def __init__(self, quiet: bool = False) -> None:
        from rich.progress import (
            BarColumn,
            Progress,
            SpinnerColumn,
            TaskProgressColumn,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )

        self.quiet = quiet
        self.live = err.is_terminal and not quiet
        self.bar = Progress(
            SpinnerColumn(),
            TextColumn("{task.description}"),
            BarColumn(),
            TaskProgressColumn(),
            TimeElapsedColumn(),
            TimeRemainingColumn(),
            console=err,
            transient=True,
            disable=not self.live,
        )
        self.start = time.perf_counter()
        self.printed = self.start
        self.last: tuple[str, int] = ("", -1)

    def __enter__(self) -> _Steps:
        self.bar.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self.bar.__exit__(*exc)  # type: ignore[arg-type]

    def add_task(self, description: str, total: int | None = None) -> TaskID:
        self._line(description, 0, total)
        return self.bar.add_task(description, total=total)

    def update(
        self, task: TaskID, description: str | None = None, completed: int | None = None, total: int | None = None
    ) -> None:
        self.bar.update(task, description=description, completed=completed, total=total)
        if description is not None:
            self._line(description, completed or 0, total)

    def _line(self, description: str, completed: int, total: int | None) -> None:
        if self.live or self.quiet:
            return
        tenth = int(10 * completed / total) if total else -1
        head = description.split(":")[0]
        now = time.perf_counter()
        if (head, tenth) == self.last or (completed > 0 and now - self.printed < self.QUIET_S):
            return  # a step's start always; its later tenths only when lines have been quiet a while
        self.last, self.printed = (head, tenth), now
        pct = f" ({completed}/{total}, {100 * completed / total:.0f}%)" if total and total > 1 else ""
        err.print(f"[{time.perf_counter() - self.start:7.1f} s] {escape(description)}{pct}", soft_wrap=True)


def _progress(quiet: bool = False) -> _Steps:
    return _Steps(quiet)


def _run_publish(
    cfg: PublishConfig, out_dir: Path, overwrite: bool, quiet: bool, utility: bool | str = True
) -> tuple[Release, float]:
    from versapub import workflow

    start = time.perf_counter()
    with _progress(quiet) as bar:
        task = bar.add_task(f"reading {cfg.input.name}", total=None)

        def hook(desc: str, done: int, total: int) -> None:
            bar.update(task, description=desc, completed=done, total=total or None)

        if cfg.backend == "dask":  # read on the cluster
            release = workflow.run(cfg, out_dir, overwrite=overwrite, utility=utility, progress=hook)
        else:
            table, problems = workflow.read_for_publish(cfg, hook)  # a bad rule: before the engines load
            read_s = time.perf_counter() - start
            release = workflow.run(
                cfg,
                out_dir,
                overwrite=overwrite,
                utility=utility,
                progress=hook,
                table=table,
                read_seconds=read_s,
                problems=problems,
            )
    return release, time.perf_counter() - start


def _with_bar(run: Callable[[Callable[[str, int, int], None]], T]) -> T:
    """``run(hook)`` under a progress bar that ``hook(description, done, total)`` moves."""
    with _progress() as bar:
        task = bar.add_task("starting", total=None)

        def hook(desc: str, done: int, total: int) -> None:
            bar.update(task, description=desc, completed=done, total=total)

        return run(hook)
