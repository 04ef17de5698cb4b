"""The web interface's security (issue 30): no token -> refused; a cross-site or token-less
change -> refused; a foreign Host -> refused; no path outside the root is read or written
(``..``, absolute paths, symlinks); uploads size-limited and never over a file; the API
answers bad input with one paragraph, never a traceback."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

pytest.importorskip("starlette", reason="the web extra is installed by make test (pip install '.[test,dask,web]')")
import warnings

with warnings.catch_warnings():  # Starlette's TestClient prefers httpx2; httpx is what it drives here
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient

from tests.web_helpers import finished
from versapub.web.app import make_app

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
TOKEN = "test-token-123"


@pytest.fixture
def root(tmp_path: Path) -> Path:
    r = tmp_path / "root"
    r.mkdir()
    shutil.copy(EXAMPLES / "data.csv", r / "data.csv")
    (tmp_path / "secret.csv").write_text("name,dx\nAnn,flu\nBob,cold\n")
    return r


def client(root: Path, **kw: object) -> TestClient:
    c = TestClient(make_app(root, TOKEN, max_upload=4096), base_url="http://127.0.0.1:8000", **kw)  # type: ignore[arg-type]
    return c


def authed(root: Path) -> TestClient:
    c = client(root)
    r = c.get(f"/?token={TOKEN}", follow_redirects=False)
    assert (
        r.status_code == 303 and "versapub_token" in r.headers["set-cookie"] and "HttpOnly" in r.headers["set-cookie"]
    )
    return c


POST = {"x-versapub-token": TOKEN}
JOB = {"input": "data.csv"}


def test_no_token_is_refused(root: Path) -> None:
    c = client(root)
    for path in ("/", "/api/files", "/raw/data.csv", "/static/app.js"):
        assert c.get(path).status_code == 401
    assert c.get("/?token=wrong").status_code == 401
    assert c.get("/api/files", headers={"cookie": 'versapub_token="\\x"; bad\x7f=1'}).status_code == 401
    assert c.post("/api/profile", json={"job": JOB}, headers=POST).status_code == 401  # the header alone is not enough


def test_the_token_sets_a_cookie_and_the_page_works(root: Path) -> None:
    c = authed(root)
    page = c.get("/")
    assert page.status_code == 200 and TOKEN in page.text and "no-store" in page.headers["cache-control"]
    assert "cdn" not in page.text.lower() and "https://" not in page.text  # every asset is local
    assert c.get("/api/files").json()["data"] == ["data.csv"]
    raw = c.get("/raw/data.csv")  # a file of the root runs sandboxed: no access to the page's token or API
    assert raw.status_code == 200 and "sandbox" in raw.headers["content-security-policy"]


def test_changes_need_the_pages_token_and_origin(root: Path) -> None:
    c = authed(root)
    assert c.post("/api/profile", json={"job": JOB}).status_code == 403  # a form posted from elsewhere
    evil = {**POST, "origin": "http://evil.example"}
    assert c.post("/api/profile", json={"job": JOB}, headers=evil).status_code == 403
    assert c.post("/api/profile", json={"job": JOB}, headers={"x-versapub-token": "guess"}).status_code == 403
    # issue 66: the same host and port over another scheme is another origin
    other = {**POST, "origin": "https://127.0.0.1:8000"}
    assert c.post("/api/profile", json={"job": JOB}, headers=other).status_code == 403
    ok = c.post("/api/profile", json={"job": JOB}, headers={**POST, "origin": "http://127.0.0.1:8000"})
    assert finished(c, ok)["result"]["records"] == 1000  # type: ignore[index]


def test_a_foreign_host_is_refused(root: Path) -> None:
    c = TestClient(make_app(root, TOKEN), base_url="http://rebound.example:8000")
    assert c.get(f"/?token={TOKEN}").status_code == 421


@pytest.mark.parametrize("path", ["../secret.csv", "/etc/passwd", "sub/../../secret.csv", "link.csv", "..", ""])
def test_no_path_outside_the_root(root: Path, path: str) -> None:
    (root / "link.csv").symlink_to(root.parent / "secret.csv")
    c = authed(root)
    r = c.post("/api/profile", json={"job": {"input": path}}, headers=POST)
    assert r.status_code == 400 and "Traceback" not in r.text
    assert str(root.parent) not in r.text  # the refusal does not reveal where the root lies
    h = c.post("/api/rules", json={"job": {**JOB, "hierarchies": {"age": "../secret.csv"}}}, headers=POST)
    assert h.status_code == 400 and "outside the served folder" in h.json()["error"]
    assert "Ann" not in r.text
    if path:
        raw = c.get("/raw/" + path.replace(".", "%2E"))  # encoded: the client does not normalize it away
        assert raw.status_code in (403, 404) and "Ann" not in raw.text
    for route, body in (
        ("/api/job/save", {"job": JOB, "path": "../evil.toml"}),
        ("/api/job/load", {"path": "../secret.csv"}),
        ("/api/hierarchy/build", {"data": "data.csv", "column": "zip", "kind": "mask", "out": "../h.csv"}),
        ("/api/publish", {"job": JOB, "out": "../rel"}),
        ("/api/query", {"release": "..", "text": "age = '1'"}),
    ):
        r = c.post(route, json=body, headers=POST)
        assert r.status_code == 400 and "error" in r.json(), (route, r.text)
    assert sorted(p.name for p in root.parent.iterdir()) == ["root", "secret.csv"]  # nothing written outside
    assert "link.csv" not in c.get("/api/files").json()["data"]  # a link out is not even listed


def test_uploads_are_limited_and_never_replace_a_file(root: Path) -> None:
    c = authed(root)
    r = c.post("/api/upload", files={"file": ("small.csv", b"a,b\n1,2\n")}, data={"folder": "up"}, headers=POST)
    assert r.status_code == 200 and r.json()["path"] == "up/small.csv"
    again = c.post("/api/upload", files={"file": ("small.csv", b"x\n")}, data={"folder": "up"}, headers=POST)
    assert again.status_code == 400 and (root / "up" / "small.csv").read_bytes() == b"a,b\n1,2\n"
    big = c.post("/api/upload", files={"file": ("big.csv", b"x" * 10_000)}, headers=POST)
    assert big.status_code == 400 and "larger than" in big.json()["error"]
    assert not (root / "uploads" / "big.csv").exists()
    out = c.post("/api/upload", files={"file": ("x.csv", b"a\n")}, data={"folder": "../"}, headers=POST)
    assert out.status_code == 400 and not (root.parent / "x.csv").exists()
    assert c.post("/api/upload", files={"file": (".hidden", b"a\n")}, headers=POST).status_code == 400


def test_bad_input_is_one_paragraph(root: Path) -> None:
    c = authed(root)
    r = c.post("/api/rules", json={"job": {**JOB, "rules": [{"rule": "age -> nope"}]}}, headers=POST)
    t = finished(c, r)  # found while reading the data, in the worker: the task fails with one paragraph
    assert t["status"] == "failed" and "nope" in str(t["message"]) and "Traceback" not in str(t["message"])
    r = c.post("/api/profile", content=b"{not json", headers={**POST, "content-type": "application/json"})
    assert r.status_code == 400 and "JSON" in r.json()["error"]
    assert c.get("/api/tasks/nothing").status_code == 400


def test_versapub_serve_prints_its_address_and_serves_only_with_the_token(root: Path) -> None:
    """The command as a user runs it: 127.0.0.1, a free port, the address with its token."""
    import subprocess
    import sys
    import urllib.error
    import urllib.request

    exe = str(Path(sys.executable).with_name("versapub"))
    proc = subprocess.Popen(
        [exe, "serve", "--no-browser", "--root", str(root)], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    try:
        line = proc.stdout.readline() if proc.stdout else ""
        assert "http://127.0.0.1:" in line and "?token=" in line, line
        url = line[line.index("http://") :].split()[0]
        base = url.split("/?")[0]
        import http.cookiejar
        import time

        deadline = time.monotonic() + 30
        while True:  # the address is printed as the server starts
            try:
                urllib.request.urlopen(f"{base}/api/files", timeout=10)
            except urllib.error.HTTPError as refused:
                assert refused.code == 401
                break
            except urllib.error.URLError:
                assert time.monotonic() < deadline
                time.sleep(0.1)
        browser = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar()))
        with browser.open(url, timeout=10) as page:  # the redirect sets the cookie, the page follows
            assert page.status == 200 and b"versapub" in page.read()
    finally:
        proc.terminate()
        proc.wait(10)


def test_risk_of_a_release_and_of_a_data_file(root: Path) -> None:
    """The browser's risk view answers what ``versapub risk --json`` answers (issue 32)."""
    import versapub
    from versapub.inspect import risk

    table = versapub.read_table(root / "data.csv")
    rel = versapub.publish(
        table,
        ["age, sex -> disease"],
        l=2,
        columns=versapub.ColumnRoles(identifying=("patient_id",), others="insensitive"),
    )
    versapub.write_release(rel, root / "rel")
    c = authed(root)
    r = finished(c, c.post("/api/risk", json={"release": "rel", "sampling_fraction": "0.1"}, headers=POST))
    # by default on the quasi-identifiers the release declares (the rule's left-hand side), SUDA only when asked
    assert r["result"]["qi"] == ["age", "sex"]  # type: ignore[index]
    want = risk(root / "rel", qi=["age", "sex"], sampling_fraction=0.1, with_suda=False).to_json()
    got = {k: v for k, v in r["result"].items() if k not in ("source", "qi", "view", "before")}  # type: ignore[attr-defined]
    assert got == {k: v for k, v in want.items() if k != "source"}
    with_suda = c.post("/api/risk", json={"release": "rel", "qi": ["age", "sex", "race"], "suda": True}, headers=POST)
    t = finished(c, with_suda)["result"]
    assert t["qi"] == ["age", "sex", "race"] and t["tables"][0]["suda"]["attributes"]  # type: ignore[index]
    r = finished(c, c.post("/api/risk", json={"data": "data.csv", "qi": ["age", "sex"]}, headers=POST))
    assert r["result"]["records"] == table.n_rows  # type: ignore[index]
    r = finished(c, c.post("/api/risk", json={"data": "data.csv"}, headers=POST))
    assert r["status"] == "failed" and "--qi" in str(r["message"])
    r = c.post("/api/risk", json={"release": "rel", "sampling_fraction": "0.01"}, headers=POST)
    assert finished(c, r)["status"] == "done"  # a small fraction: valid JSON (no NaN), not a failure
    r = c.post("/api/risk", json={"release": "rel", "sampling_fraction": "lots"}, headers=POST)
    assert r.status_code == 400 and "sampling fraction" in r.json()["error"]


def test_the_release_view_says_what_k_would_cost(root: Path) -> None:
    """Without --k the release view lists what --k 3 and --k 5 would cost (issue 47, item 3),
    the sentences of the summary and the report, read from the manifest."""
    import json

    import versapub
    from versapub.release.value import k_preview_text

    table = versapub.read_table(root / "data.csv")
    rel = versapub.publish(
        table,
        ["age, sex -> disease"],
        l=2,
        columns=versapub.ColumnRoles(identifying=("patient_id",), others="insensitive"),
    )
    versapub.write_release(rel, root / "rel")
    r = authed(root).get("/api/release?path=rel")
    assert r.status_code == 200
    preview = json.loads((root / "rel" / "manifest.json").read_text())["k_preview"]
    facts = r.json()["facts"]
    assert facts and all(s in facts for s in k_preview_text(preview)) and any("--k 5" in s for s in facts)
