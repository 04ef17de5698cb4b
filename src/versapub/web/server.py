"""Running the web application: uvicorn on 127.0.0.1 (another host only when asked, with a
warning), the address with its token printed, the browser opened."""

from __future__ import annotations

import socket
import threading
import webbrowser
from collections.abc import Callable
from pathlib import Path

from versapub.errors import ConfigError
from versapub.web.security import new_token

LOCAL = ("127.0.0.1", "localhost")


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
    try:
        import uvicorn
    except ImportError:
        raise ConfigError(
            "The web interface needs the web extra: pip install 'versapub[web]' (Starlette, uvicorn)."
        ) from None
    from versapub.web.app import make_app

    token = token or new_token()
    port = port or free_port(host if host not in ("localhost",) else "127.0.0.1")
    hosts = LOCAL if host in LOCAL else (host, *LOCAL)
    app = make_app(root, token, hosts, max_upload=max_upload_mb * 1024 * 1024)
    url = f"http://{'127.0.0.1' if host in LOCAL else host}:{port}/?token={token}"
    say(f"versapub serves {Path(root).resolve()} at {url}")
    say("Open that address (it carries the access token); stop with Ctrl+C.")
    if open_browser:
        threading.Timer(0.8, webbrowser.open, args=(url,)).start()
    uvicorn.run(app, host=host, port=port, log_level="warning")
