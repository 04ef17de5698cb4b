"""``versapub serve``: the web interface (parsing only; :mod:`versapub.web`)."""

from __future__ import annotations

from pathlib import Path

import click

from versapub.cli.app import _errors, cli, out


@cli.command("serve")
@click.option("--port", type=int, default=0, help="The port (default: a free one).")
@click.option(
    "--root",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path("."),
    show_default=True,
    help="The folder the interface may read and write (nothing outside it is ever touched).",
)
@click.option(
    "--host",
    default="127.0.0.1",
    show_default=True,
    help="The address to listen on; anything but 127.0.0.1/localhost exposes confidential data to the network.",
)
@click.option("--no-browser", "no_browser", is_flag=True, help="Do not open a browser.")
@click.option("--max-upload-mb", type=int, default=200, show_default=True, help="Largest upload accepted.")
def serve(port: int, root: Path, host: str, no_browser: bool, max_upload_mb: int) -> None:
    """Start the local web interface: open data, decide columns, choose rules or a classic
    model, build hierarchies, publish with progress, read the report, query and check
    releases, save the job as TOML. Prints the address with its access token."""
    from versapub.web.server import LOCAL
    from versapub.web.server import serve as run

    with _errors():
        if host not in LOCAL:
            out.print(
                f"[bold red]Warning:[/] listening on {host} lets other computers reach this server; anyone with "
                "the printed address (and its token) can read the served folder's data."
            )
        run(root, port, host, not no_browser, out.print, max_upload_mb)
