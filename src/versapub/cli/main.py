"""The ``versapub`` command line: a thin front end over :mod:`versapub.workflow` (publish side)
and :mod:`versapub.inspect` (read side); each command group lives in its own module.

Errors the user can cause are printed as one paragraph on stderr with a non-zero exit
status (2: bad input, 3: verification failed, 4: internal schema error); ``--debug``
shows the traceback as well.
"""

from __future__ import annotations

from typing import Any

from versapub.cli.app import ATTENTION_EXIT, VERDICT_MARKUP, cli

__all__ = ["ATTENTION_EXIT", "VERDICT_MARKUP", "cli", "main"]


def __getattr__(name: str) -> Any:
    if name == "EXPERIMENT_DATASETS":  # the command modules load when a command is named
        from versapub.cli.experiment_cmds import EXPERIMENT_DATASETS

        return EXPERIMENT_DATASETS
    raise AttributeError(name)


def main() -> None:
    cli(prog_name="versapub")


if __name__ == "__main__":
    main()
