"""Running the web application: uvicorn on 127.0.0.1 (another host only when asked, with a
warning), the address with its token printed, the browser opened."""

from __future__ import annotations

import contextlib
import socket
import threading
import webbrowser
from collections.abc import Callable
from pathlib import Path

from versapub.errors import ConfigError

LOCAL = ("127.0.0.1", "localhost")
#: Hosts meaning "every address of this computer".
ANY = ("0.0.0.0", "::", "[::]")


def own_addresses() -> tuple[str, ...]:
    """This computer's names and addresses (what a browser elsewhere puts in ``Host`` when
    the server listens on every address)."""
    names = {socket.gethostname(), socket.getfqdn()}
    with contextlib.suppress(OSError):
        names |= {str(info[4][0]) for info in socket.getaddrinfo(socket.gethostname(), None)}
    try:  # the address this computer reaches others from (no packet is sent)
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            s.connect(("192.0.2.1", 9))
            names.add(str(s.getsockname()[0]))
    except OSError:
        pass
    return tuple(sorted(n for n in names if n and n not in LOCAL))


def allowed_hosts(host: str) -> tuple[str, ...]:
    """The ``Host`` names a server listening on ``host`` answers to: this computer's own
    names and addresses when it listens on every address, else ``host`` (and the loopback)."""
    if host in LOCAL:
        return LOCAL
    return (host, *own_addresses(), *LOCAL) if host in ANY else (host, *LOCAL)


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket() as s:
        s.bind((host, 0))
        return int(s.getsockname()[1])


def serve(
    root: str | Path,
    port: int = 0,
    host: str = "127.0.0.1",
    open_browser: bool = True,
    say: Callable[[str], None] = lambda _: None,
    max_upload_mb: int = 200,
    token: str | None = None,
) -> None:
    """Serve ``root`` until interrupted; ``port`` 0: a free one."""
    try:  # before anything of the web package, which needs them: one sentence, not a traceback
        import starlette  # noqa: F401
        import uvicorn
    except ImportError:
        raise ConfigError(
            "The web interface needs the web extra: pip install 'versapub[web]' (Starlette, uvicorn)."
        ) from None
    from versapub.web.app import make_app
    from versapub.web.security import new_token

    token = token or new_token()
    port = port or free_port(host if host not in ("localhost",) else "127.0.0.1")
    hosts = allowed_hosts(host)
    app = make_app(root, token, hosts, max_upload=max_upload_mb * 1024 * 1024)
    url = f"http://{'127.0.0.1' if host in LOCAL or host in ANY else host}:{port}/?token={token}"
    say(f"versapub serves {Path(root).resolve()} at {url}")
    if host in ANY:
        shown = [a for a in hosts if a not in LOCAL and a not in ANY and ":" not in a]
        say(f"From other computers: {', '.join(f'http://{a}:{port}/?token={token}' for a in shown)}")
    say("Open that address (it carries the access token); stop with Ctrl+C.")
    if open_browser:
        threading.Timer(0.8, webbrowser.open, args=(url,)).start()
    uvicorn.run(app, host=host, port=port, log_level="warning")
