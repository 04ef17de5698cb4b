"""The ``versapub`` command group, its consoles and its one way of reporting errors.

Errors the user can cause are printed as one paragraph on stderr with a non-zero exit
status (2: bad input, 3: verification failed, 4: internal schema error); ``--debug``
shows the traceback as well.
"""

from __future__ import annotations

import importlib
import sys
import traceback
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, TypeVar

import click
from rich.console import Console
from rich.markup import escape

from versapub._version import __version__
from versapub.errors import VersapubError

#: ``check``'s exit status when every check passed with warnings that need attention.
ATTENTION_EXIT = 6
#: --record-input-path's help.
RECORD_HELP = (
    "Record the input's and hierarchies' absolute paths in the release (internal use; by default "
    "only their file names: a path can itself be confidential)."
)
#: The three verdicts as the console shows them.
VERDICT_MARKUP = {
    "passed": "[green]ALL CHECKS PASSED[/]",
    "attention": "[yellow]PASSED — NEEDS ATTENTION[/]",
    "failed": "[red]CHECKS FAILED[/]",
}

if TYPE_CHECKING:
    pass


out = Console(highlight=False, soft_wrap=not sys.stdout.isatty())  # a log gets whole lines
err = Console(stderr=True, highlight=False, soft_wrap=not sys.stderr.isatty())
F = TypeVar("F", bound=Callable[..., Any])
T = TypeVar("T")


class _State:
    debug = False


def _fail(exc: BaseException) -> None:
    if _State.debug:
        traceback.print_exception(exc)
    if isinstance(exc, VersapubError):
        err.print(f"[bold red]error:[/] {escape(str(exc))}", soft_wrap=True)
        sys.exit(exc.exit_code)
    err.print(
        f"[bold red]internal error:[/] {type(exc).__name__}: {escape(str(exc))}. This is a bug in versapub; "
        "run again with --debug for the traceback and report it.",
        soft_wrap=True,
    )
    sys.exit(70)


@contextmanager
def _errors() -> Iterator[None]:
    try:
        yield
    except (KeyboardInterrupt, SystemExit, click.exceptions.Exit, click.ClickException):
        raise
    except BaseException as exc:
        _fail(exc)


#: Each command, and the module that defines it (imported when the command is first named,
#: so ``versapub query`` does not load the publish side; ``tests/test_cli.py`` holds this map
#: to the modules' own registrations).
COMMAND_MODULES: dict[str, str] = {
    "check": "read_cmds",
    "compare": "compare_cmds",
    "demo": "publish_cmds",
    "eligible": "data_cmds",
    "evaluate": "read_cmds",
    "experiment": "experiment_cmds",
    "hierarchy": "data_cmds",
    "marginals": "marginals_cmds",
    "publish": "publish_cmds",
    "query": "read_cmds",
    "report": "read_cmds",
    "risk": "risk_cmds",
    "rules": "publish_cmds",
    "sample": "read_cmds",
    "serve": "web_cmds",
}


class _LazyGroup(click.Group):
    """A group whose commands' modules are imported on first use (click's lazy-loading pattern)."""

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands and cmd_name in COMMAND_MODULES:
            importlib.import_module(f"versapub.cli.{COMMAND_MODULES[cmd_name]}")
        return super().get_command(ctx, cmd_name)

    def list_commands(self, ctx: click.Context) -> list[str]:
        load_all()
        return super().list_commands(ctx)


def load_all() -> None:
    """Import every command module (``--help`` and the tests list every command)."""
    for module in sorted(set(COMMAND_MODULES.values())):
        importlib.import_module(f"versapub.cli.{module}")


@click.group(cls=_LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="versapub")
@click.option("--debug", is_flag=True, help="Show tracebacks on errors.")
def cli(debug: bool) -> None:
    """versapub: publish microdata under many privacy rules (Q -> S) at once.

    The table is decomposed into sub-tables in Guardian Normal Form (UAD by default; GD
    and the paper's single-attribute and multi-SA baselines on request), each sub-table
    is anonymized (Anatomy, frequency l-diversity), and the release is verified from its
    own files before it is written.  `experiment` re-runs the paper's §6.
    """
    _State.debug = debug


MISSING_HELP = "Missing-cell policy for reading --original (default: the one the release was published with)."

ORIGINAL_HELP = (
    "The original table: CSV/Parquet, or the TOML config it was published with (applies its "
    "hierarchies). Default: the input recorded in the manifest, if unchanged."
)
