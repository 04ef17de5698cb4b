"""The ``versapub`` command line: a thin front end over :mod:`versapub.workflow` (publish side)
and :mod:`versapub.inspect` (read side); each command group lives in its own module.

Errors the user can cause are printed as one paragraph on stderr with a non-zero exit
status (2: bad input, 3: verification failed, 4: internal schema error); ``--debug``
shows the traceback as well.
"""

from __future__ import annotations

from versapub.cli import data_cmds, experiment_cmds, marginals_cmds, publish_cmds, read_cmds, risk_cmds, web_cmds
from versapub.cli.app import ATTENTION_EXIT, VERDICT_MARKUP, cli
from versapub.cli.experiment_cmds import EXPERIMENT_DATASETS

__all__ = ["ATTENTION_EXIT", "EXPERIMENT_DATASETS", "VERDICT_MARKUP", "cli", "main"]
_COMMANDS = (
    data_cmds,
    experiment_cmds,
    marginals_cmds,
    publish_cmds,
    read_cmds,
    risk_cmds,
    web_cmds,
)  # registered on import


def main() -> None:
    cli(prog_name="versapub")


if __name__ == "__main__":
    main()
