"""What stands between the served data and anyone else (docs/web.md): a token on every
request (a cookie after the first visit), state-changing requests only from the page itself
(the token in a header, a same-origin ``Origin``), the ``Host`` the server was started for
(no DNS rebinding), and no caching of confidential answers."""

from __future__ import annotations

import hmac
import secrets
from http.cookies import CookieError, SimpleCookie
from urllib.parse import parse_qs, urlsplit

from starlette.types import ASGIApp, Message, Receive, Scope, Send

COOKIE = "versapub_token"
HEADER = "x-versapub-token"
SAFE_METHODS = ("GET", "HEAD")


def new_token() -> str:
    return secrets.token_urlsafe(24)


def _same(a: str | None, b: str) -> bool:
    return a is not None and hmac.compare_digest(a.encode(), b.encode())


class Guard:
    """ASGI middleware enforcing the rules above; ``hosts``: the host names the server
    answers to (``127.0.0.1``, ``localhost``, or the one given with ``--host``)."""

    def __init__(self, app: ASGIApp, token: str, hosts: tuple[str, ...]) -> None:
        self.app, self.token, self.hosts = app, token, hosts

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
        host = headers.get("host", "")
        hostname = urlsplit(f"//{host}").hostname or ""
        if hostname not in self.hosts:
            await _reply(send, 421, "This server answers only to its own address (versapub serve printed it).")
            return
        query = parse_qs(scope.get("query_string", b"").decode("latin-1"))
        given = (query.get("token") or [None])[0]
        if scope["path"] == "/" and _same(given, self.token):  # the printed URL: set the cookie, drop the token
            await send(
                {
                    "type": "http.response.start",
                    "status": 303,
                    "headers": [
                        (b"location", b"/"),
                        (b"set-cookie", f"{COOKIE}={self.token}; HttpOnly; SameSite=Strict; Path=/".encode()),
                        (b"cache-control", b"no-store"),
                    ],
                }
            )
            await send({"type": "http.response.body", "body": b""})
            return
        cookie = SimpleCookie()
        try:
            cookie.load(headers.get("cookie", ""))
        except CookieError:  # a malformed cookie header holds no token
            cookie = SimpleCookie()
        held = cookie[COOKIE].value if COOKIE in cookie else None
        if not _same(held, self.token):
            await _reply(send, 401, "Open the address versapub serve printed (it carries the access token).")
            return
        if scope["method"] not in SAFE_METHODS:
            origin = headers.get("origin")
            scheme = str(scope.get("scheme") or "http")  # the Origin's scheme, host and port all match (issue 66)
            foreign = origin is not None and (urlsplit(origin).scheme != scheme or urlsplit(origin).netloc != host)
            if not _same(headers.get(HEADER), self.token) or foreign:
                await _reply(send, 403, "Refused: a change must come from the versapub page itself.")
                return

        async def send_private(message: Message) -> None:
            if message["type"] == "http.response.start":
                message.setdefault("headers", [])
                message["headers"] = [
                    *message["headers"],
                    (b"cache-control", b"no-store"),
                    (b"x-content-type-options", b"nosniff"),
                    (b"x-frame-options", b"SAMEORIGIN"),
                    (b"referrer-policy", b"no-referrer"),
                ]
            await send(message)

        await self.app(scope, receive, send_private)


async def _reply(send: Send, status: int, text: str) -> None:
    body = text.encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [(b"content-type", b"text/plain; charset=utf-8"), (b"cache-control", b"no-store")],
        }
    )
    await send({"type": "http.response.body", "body": body})
