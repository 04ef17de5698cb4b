"""The web application: one page (``templates/index.html``, ``static/app.js``) and a JSON
API, each route a thin call into :mod:`versapub.workflow` / :mod:`versapub.inspect`
(publishing, checking, querying) or the hierarchy builders the CLI uses; every path
through :class:`~versapub.web.paths.Root`, every request through
:class:`~versapub.web.security.Guard`."""

from __future__ import annotations

import io
import json
import threading
import zipfile
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import FileResponse, HTMLResponse, Response, StreamingResponse
from starlette.responses import JSONResponse as _StarletteJSON
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from versapub.errors import ConfigError, VersapubError
from versapub.formats import json_text, read_manifest
from versapub.release.perturbed import perturbation_text
from versapub.release.value import manifest_facts
from versapub.web import jobs
from versapub.web.paths import Root
from versapub.web.security import Guard

HERE = Path(__file__).parent
#: Largest upload accepted (bytes), unless the server is started with another.
MAX_UPLOAD = 200 * 1024 * 1024
#: Where uploads go, under the root.
UPLOADS = "uploads"

Handler = Callable[[Request], Awaitable[Response]]


class JSONResponse(_StarletteJSON):
    """Every answer through the tool's one JSON writer (valid JSON: a measure that does not
    apply is ``null``, never ``NaN``)."""

    def render(self, content: Any) -> bytes:
        return json_text(content).encode("utf-8")


#: Seconds a cancelled job has to reach its next progress report before it is interrupted.
CANCEL_GRACE_S = 0.3


def _json_errors(fn: Callable[[Request], Awaitable[Any]]) -> Handler:
    """A route returning data as JSON; bad input as ``{"error": paragraph}`` (400), never a
    traceback."""

    site = getattr(fn, "__self__", None)
    base = getattr(site, "base", None)

    def hide(text: str) -> str:  # no message names the server's own folders
        return base.hide(text) if base is not None else text

    async def route(request: Request) -> Response:
        try:
            return JSONResponse(await fn(request))
        except VersapubError as exc:
            return JSONResponse({"error": hide(str(exc))}, status_code=400)
        except (ValueError, KeyError, TypeError) as exc:
            return JSONResponse({"error": hide(f"Bad request: {exc}.")}, status_code=400)

    return route


async def _body(request: Request) -> dict[str, Any]:
    try:
        data = await request.json()
    except json.JSONDecodeError:
        raise ConfigError("The request is not JSON.") from None
    if not isinstance(data, dict):
        raise ConfigError("The request must be a JSON object.")
    return data


class _Site:
    """The routes of one served folder: each a thin call into the read and publish sides."""

    def __init__(self, root: str | Path, token: str, max_upload: int) -> None:
        from jinja2 import Environment, FileSystemLoader, select_autoescape

        self.base = Root.of(root)
        self.tasks = jobs.Tasks()
        self.token = token
        self.max_upload = max_upload
        self.env = Environment(loader=FileSystemLoader(HERE / "templates"), autoescape=select_autoescape(["html"]))

    async def index(self, request: Request) -> Response:
        from versapub import __version__
        from versapub.anonymizers import ANONYMIZERS
        from versapub.decompositions import DECOMPOSITIONS
        from versapub.privacy.guarantees.guarantee import GUARANTEES
        from versapub.treatments import TREATMENTS

        examples = [
            (n, f"{n}:" + ",".join(f"{k}={v}" for k, v in getattr(t, "example", {}).items()))
            for n, t in TREATMENTS.items()
        ]
        page = self.env.get_template("index.html").render(
            token=self.token,
            root=str(self.base.path),
            version=__version__,
            anonymizers=sorted(ANONYMIZERS),
            decompositions=sorted(DECOMPOSITIONS),
            guarantees=sorted(GUARANTEES),
            treatments=examples,
        )
        return HTMLResponse(page)

    async def files(self, request: Request) -> dict[str, Any]:
        return await run_in_threadpool(self.base.listing)

    async def upload(self, request: Request) -> dict[str, Any]:
        too_big = f"The file is larger than the {self.max_upload // (1024 * 1024)} MB this server accepts."
        if int(request.headers.get("content-length") or 0) > self.max_upload + 64 * 1024:
            raise ConfigError(too_big)
        form = await request.form(max_files=1, max_fields=4, max_part_size=self.max_upload)
        item = form.get("file")
        if item is None or isinstance(item, str) or not item.filename:
            raise ConfigError("Choose a file to upload.")
        name = Path(item.filename).name
        if not name or name.startswith("."):
            raise ConfigError(f"Upload name {item.filename!r}: give the file a plain name.")
        folder = str(form.get("folder") or UPLOADS)
        if any(part.startswith(".") for part in Path(folder).parts if part not in (".",)):
            raise ConfigError(f"Upload folder {folder!r}: a hidden folder (starting with a dot) is not for uploads.")
        dest_dir = self.base.resolve(folder)
        inside = [d for d in [dest_dir, *dest_dir.parents] if d == self.base.path or self.base.path in d.parents]
        release = next((d for d in inside if (d / "manifest.json").is_file()), None)
        if release is not None:  # a release holds only the files its manifest lists (issue 66)
            raise ConfigError(
                f"Upload folder {folder!r} lies in the release {self.base.relative(release)}: a release holds only "
                f"the files its manifest lists. Upload into {UPLOADS} (or another folder outside every release)."
            )
        dest_dir.mkdir(parents=True, exist_ok=True)
        dest = self.base.resolve(f"{self.base.relative(dest_dir)}/{name}")
        if dest.exists():
            raise ConfigError(f"{self.base.relative(dest)} exists already; rename the file or remove the old one.")
        written = 0
        with dest.open("xb") as f:
            while chunk := await item.read(1 << 20):
                written += len(chunk)
                if written > self.max_upload:
                    f.close()
                    dest.unlink()
                    raise ConfigError(
                        f"The file is larger than the {self.max_upload // (1024 * 1024)} MB this server accepts."
                    )
                f.write(chunk)
        return {"path": self.base.relative(dest), "bytes": written}

    async def profile(self, request: Request) -> dict[str, Any]:
        """Reading a data file, in a worker (a new profile supersedes a running one)."""
        job = (await _body(request)).get("job") or {}
        cfg = jobs.job_config(self.base, job)

        def work(task: jobs.Task) -> dict[str, Any]:
            from versapub.inspect import profile as prof

            task.say(f"reading {job.get('input')}")
            return prof(cfg).to_dict() | {"input": job.get("input")}

        return self.tasks.start("profile", str(job.get("input") or ""), work, supersede=True).to_dict()

    async def rules(self, request: Request) -> dict[str, Any]:
        """Feasibility of the job's rules (or a collection's checks), in a worker."""
        job = (await _body(request)).get("job") or {}
        cfg = jobs.job_config(self.base, job)

        def work(task: jobs.Task) -> dict[str, Any]:
            from versapub.inspect import marginals_check, rules_report

            if cfg.marginals is not None:  # a collection: its checks (k-link, k-combinatorial, maxent diversity)
                task.say("checking the collection of marginals")
                return {"marginals": marginals_check(cfg).to_dict(), "input": job.get("input")}
            return rules_report(cfg, task.progress).to_dict() | {"input": job.get("input")}

        return self.tasks.start("rules", str(job.get("input") or ""), work, supersede=True).to_dict()

    async def toml(self, request: Request) -> dict[str, Any]:
        body = await _body(request)
        path = str(body.get("path") or jobs.UNSAVED)
        self.base.resolve(path)
        return {"toml": jobs.job_toml(body.get("job") or {}, path)}

    async def save_job(self, request: Request) -> dict[str, Any]:
        body = await _body(request)
        path = str(body.get("path") or "")
        if not path.endswith(".toml"):
            raise ConfigError("Save the job as a .toml file, e.g. jobs/my-job.toml.")
        dest = self.base.resolve(path)
        text = jobs.job_toml(body.get("job") or {}, path)
        jobs.parse_config(text, dest)  # what the CLI would refuse is never written
        if dest.exists() and not body.get("overwrite"):
            raise ConfigError(f"{path} exists; tick 'replace' to overwrite it.")
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_text(text, encoding="utf-8")
        return {"path": self.base.relative(dest), "toml": text}

    async def load_job(self, request: Request) -> dict[str, Any]:
        path = str((await _body(request)).get("path") or "")
        src = self.base.resolve(path)
        if not src.is_file():
            raise ConfigError(f"{path} is not a file under the served folder.")
        return {"job": jobs.job_of_toml(src.read_text(encoding="utf-8"), self.base.relative(src))}

    async def publish(self, request: Request) -> dict[str, Any]:
        body = await _body(request)
        out = str(body.get("out") or "")
        if not out:
            raise ConfigError("Name the release folder (e.g. releases/first).")
        cfg = jobs.job_config(self.base, body.get("job") or {})
        self.sweep()
        return self.tasks.start_publish(self.base, cfg, out, overwrite=bool(body.get("overwrite"))).to_dict()

    def sweep(self) -> None:
        """Remove the staging folders of publishes whose process is gone (a killed server)."""
        from versapub.io import workdirs

        for folder in [self.base.path, *self.base.folders()]:
            workdirs.sweep(folder, ".")

    async def task(self, request: Request) -> dict[str, Any]:
        return self._task_shown(self.tasks.get(request.path_params["task_id"]).to_dict())

    async def cancel(self, request: Request) -> dict[str, Any]:
        t = self.tasks.get(request.path_params["task_id"])
        t.cancel.set()
        timer = threading.Timer(CANCEL_GRACE_S, t.interrupt)  # a step that reports nothing: interrupted
        timer.daemon = True
        timer.start()
        return self._task_shown(t.to_dict())

    def _task_shown(self, task: dict[str, Any]) -> dict[str, Any]:
        """A task as the page reads it, its message and result naming no folder of the server."""

        def hidden(x: Any) -> Any:
            if isinstance(x, str):
                return self.base.hide(x)
            if isinstance(x, dict):
                return {k: hidden(v) for k, v in x.items()}
            if isinstance(x, list):
                return [hidden(v) for v in x]
            return x

        out: dict[str, Any] = hidden(task)
        return out

    def _release(self, rel: str) -> Path:
        d = self.base.resolve(rel)
        if not (d / "manifest.json").is_file():
            raise ConfigError(f"{rel} is not a release folder (it has no manifest.json).")
        return d

    async def release(self, request: Request) -> dict[str, Any]:
        rel = request.query_params.get("path", "")
        d = self._release(rel)
        manifest = read_manifest(d)
        check = json.loads((d / "check.json").read_text(encoding="utf-8")) if (d / "check.json").is_file() else None
        listing = sorted(p.relative_to(d).as_posix() for p in d.rglob("*") if p.is_file())
        raw = json.loads((d / "manifest.json").read_text(encoding="utf-8"))
        return {
            "path": self.base.relative(d),
            "files": listing,
            "tables": [{"name": t.name, "kind": t.kind, "attributes": list(t.attributes)} for t in manifest.entries()],
            "notes": list(manifest.notes),
            "check": check,
            "report": "report.html" if (d / "report.html").is_file() else None,
            # records removed, columns recoded for --k, what --k 3 / --k 5 would cost, what treatments changed
            "facts": manifest_facts(raw) + perturbation_text(raw.get("perturbation") or {}),
        }

    async def query(self, request: Request) -> dict[str, Any]:
        body = await _body(request)
        d = self._release(str(body.get("release") or ""))
        text = str(body.get("text") or "")

        def work() -> dict[str, Any]:
            from versapub.inspect import query as q

            res = q(d, text, within=self.base.path)  # the recorded input: only under the root
            return res.to_dict() | {
                "relative_error": res.relative_error,
                "range_text": res.bound.text() if res.bound is not None else None,
                "original_note": None if res.actual is not None else self._no_original(d),
            }

        return await run_in_threadpool(work)

    def _no_original(self, d: Path) -> str:
        name = Path(str(read_manifest(d).input.get("path") or "")).name or "its input"
        return (
            f"The release's input ({name}, by name and SHA-256) is not under the served folder, so the figures that "
            "need the original are not shown; nothing outside the folder is read."
        )

    def _original(self, d: Path, task: jobs.Task) -> Any:
        """The release's recorded input, found under the root only (``None``: not there)."""
        from versapub.inspect import original_table

        task.say("looking for the release's input under the served folder")
        try:
            return original_table(d, within=self.base.path, households=True)
        except VersapubError:
            return None

    async def domains(self, request: Request) -> dict[str, Any]:
        from versapub.inspect import domains as dom

        d = self._release(request.query_params.get("path", ""))
        return {"domains": await run_in_threadpool(dom, d)}

    async def check(self, request: Request) -> dict[str, Any]:
        """Every check of the release, in a worker; the attacks on everything published run
        against the recorded input when it is under the root."""
        d = self._release(str((await _body(request)).get("release") or ""))

        def work(task: jobs.Task) -> dict[str, Any]:
            from versapub.inspect import check as chk

            original = self._original(d, task)
            task.say("checking the release")
            rep = chk(d, original, progress=task.say)
            adv = rep.adversary or {}
            attacks = [r["message"] for r in adv.get("rules", [])] + [
                f"{t['table']}: {t['message']}" for t in adv.get("tables", [])
            ]
            return {
                "verdict": rep.verdict,
                "failures": rep.failures(),
                "attention": rep.attention,
                "attacks": attacks,
                "original": original is not None,
                "original_note": None if original is not None else self._no_original(d),
                "report": rep.to_json(),
            }

        return self.tasks.start("check", self.base.relative(d), work).to_dict()

    async def evaluate(self, request: Request) -> dict[str, Any]:
        """Utility of the release against its recorded input (under the root), in a worker,
        with the view the page draws (:mod:`versapub.web.views`)."""
        d = self._release(str((await _body(request)).get("release") or ""))

        def work(task: jobs.Task) -> dict[str, Any]:
            from versapub.inspect import evaluate as ev
            from versapub.reports.file_metrics import group_sizes
            from versapub.web.views import evaluation_view

            try:  # the recorded input, found under the root only
                e = ev(d, within=self.base.path, progress=task.progress).to_dict()
            except ConfigError as exc:
                why = str(exc).replace(str(self.base.path), "the served folder")
                raise ConfigError(f"{self._no_original(d)} Evaluating utility needs it: {why}") from None
            reference = (read_manifest(d).raw.get("utility") or {}).get("kl_all_attributes_alone")
            return e | {"view": evaluation_view(e, reference, group_sizes(d))}

        return self.tasks.start("evaluate", self.base.relative(d), work).to_dict()

    async def risk_choices(self, request: Request) -> dict[str, Any]:
        """The columns a release's risk can be measured on, those it declares, SUDA's cost."""
        from versapub.inspect import risk_choices

        d = self._release(request.query_params.get("path", ""))
        choices = await run_in_threadpool(risk_choices, d)
        qi = [c for c in request.query_params.get("qi", "").split(",") if c]
        return choices.to_dict() | ({"suda": choices.suda_plan_text(qi)} if qi else {})

    async def risk(self, request: Request) -> dict[str, Any]:
        """Re-identification risk of a release (or a data file with ``qi``), as ``versapub
        risk --json``, in a worker: on the quasi-identifiers the release declares unless
        ``qi`` names others; SUDA only when ``suda`` is true (bounded, with its progress)."""
        from versapub.errors import InputError

        body = await _body(request)
        fraction = body.get("sampling_fraction")
        try:
            pi = float(fraction) if fraction not in (None, "") else None
        except (TypeError, ValueError):
            raise InputError(f"The sampling fraction is a number in (0, 1], got {fraction!r}.") from None
        if pi is not None and not 0 < pi <= 1:
            raise InputError(f"The sampling fraction is a number in (0, 1], got {fraction!r}.")
        release = body.get("release")
        source = self._release(str(release)) if release else self.base.resolve(str(body.get("data") or ""))
        qi = [c for c in body.get("qi") or [] if isinstance(c, str)] or None
        with_suda = bool(body.get("suda"))

        def work(task: jobs.Task) -> dict[str, Any]:
            from versapub.inspect import risk as measure
            from versapub.inspect import risk_choices
            from versapub.web.views import risk_view

            chosen = qi if qi is not None or not release else list(risk_choices(source).declared)
            task.say("counting the classes")
            rep = measure(
                source,
                qi=chosen,
                sampling_fraction=pi,
                delimiter=body.get("delimiter") or None,
                with_suda=with_suda,
                progress=task.progress,
            ).to_json()
            before = None
            original = self._original(source, task) if release else None
            if original is not None and chosen:  # the input on the same quasi-identifiers: risk before and after
                qi_in = [a for a in chosen if a in original.table.names]
                before = measure(original.table, qi=qi_in, sampling_fraction=pi, with_suda=False).to_json()
            return rep | {"qi": chosen, "before": before, "view": risk_view(rep, before)}

        return self.tasks.start("risk", str(release or body.get("data") or ""), work).to_dict()

    async def compare(self, request: Request) -> dict[str, Any]:
        """Two or more releases of one input side by side, in a worker."""
        named = (await _body(request)).get("releases") or []
        dirs = [self._release(str(r)) for r in named if str(r)]
        if len(dirs) < 2:
            raise ConfigError("Choose two or more releases of one input to compare.")

        def work(task: jobs.Task) -> dict[str, Any]:
            from versapub.inspect import compare
            from versapub.web.views import comparison_view

            c = compare(dirs, within=self.base.path, progress=task.progress).to_dict()
            c["rows"] = [r | {"release": self._shown(r["release"])} for r in c["rows"]]
            return c | {"view": comparison_view(c)}

        return self.tasks.start("compare", ", ".join(self.base.relative(d) for d in dirs), work).to_dict()

    def _shown(self, path: str) -> str:
        """A path as the page names it (relative to the root)."""
        try:
            return self.base.relative(Path(path))
        except ValueError:
            return path

    async def eligible(self, request: Request) -> dict[str, Any]:
        from versapub.inspect import eligible as elig

        body = await _body(request)
        taxonomy = body.get("taxonomy")
        level = body.get("max_level")
        args = (
            self.base.resolve(str(body.get("data") or "")),
            str(body.get("sensitive") or ""),
            self.base.resolve(str(taxonomy)) if taxonomy else None,
            int(level) if level not in (None, "") else None,
            body.get("delimiter") or None,
        )
        return {"ranges": await run_in_threadpool(elig, *args)}

    async def hierarchy_build(self, request: Request) -> dict[str, Any]:
        from versapub.web import hierarchies

        return await run_in_threadpool(hierarchies.build, self.base, await _body(request))

    async def hierarchy_show(self, request: Request) -> dict[str, Any]:
        from versapub.web import hierarchies

        return await run_in_threadpool(hierarchies.show, self.base, await _body(request))

    async def raw(self, request: Request) -> Response:
        try:
            p = self.base.resolve(request.path_params["path"])
        except VersapubError as exc:
            return JSONResponse({"error": str(exc)}, status_code=403)
        if not p.is_file():
            return JSONResponse({"error": "No such file under the served folder."}, status_code=404)
        # A file of the root (a report, an uploaded page) runs as a sandboxed origin of its own:
        # its scripts cannot read the page's token or call the API.
        return FileResponse(p, headers={"content-security-policy": "sandbox allow-scripts allow-popups"})

    async def zipped(self, request: Request) -> Response:
        try:
            d = self._release(request.query_params.get("path", ""))
        except VersapubError as exc:
            return JSONResponse({"error": str(exc)}, status_code=400)
        buf = io.BytesIO()
        with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
            for p in sorted(d.rglob("*")):
                if p.is_file() and not p.is_symlink():
                    z.write(p, f"{d.name}/{p.relative_to(d).as_posix()}")
        buf.seek(0)
        headers = {"content-disposition": f'attachment; filename="{d.name}.zip"'}
        return StreamingResponse(buf, media_type="application/zip", headers=headers)

    def routes(self) -> list[Route | Mount]:
        """Every route: the page, the JSON API, raw files and the static assets."""
        return [
            Route("/", self.index),
            Route("/api/files", _json_errors(self.files)),
            Route("/api/upload", _json_errors(self.upload), methods=["POST"]),
            Route("/api/profile", _json_errors(self.profile), methods=["POST"]),
            Route("/api/rules", _json_errors(self.rules), methods=["POST"]),
            Route("/api/job/toml", _json_errors(self.toml), methods=["POST"]),
            Route("/api/job/save", _json_errors(self.save_job), methods=["POST"]),
            Route("/api/job/load", _json_errors(self.load_job), methods=["POST"]),
            Route("/api/publish", _json_errors(self.publish), methods=["POST"]),
            Route("/api/tasks/{task_id}", _json_errors(self.task)),
            Route("/api/tasks/{task_id}/cancel", _json_errors(self.cancel), methods=["POST"]),
            Route("/api/release", _json_errors(self.release)),
            Route("/api/domains", _json_errors(self.domains)),
            Route("/api/query", _json_errors(self.query), methods=["POST"]),
            Route("/api/check", _json_errors(self.check), methods=["POST"]),
            Route("/api/evaluate", _json_errors(self.evaluate), methods=["POST"]),
            Route("/api/eligible", _json_errors(self.eligible), methods=["POST"]),
            Route("/api/risk", _json_errors(self.risk), methods=["POST"]),
            Route("/api/risk/choices", _json_errors(self.risk_choices)),
            Route("/api/compare", _json_errors(self.compare), methods=["POST"]),
            Route("/api/hierarchy/build", _json_errors(self.hierarchy_build), methods=["POST"]),
            Route("/api/hierarchy/show", _json_errors(self.hierarchy_show), methods=["POST"]),
            Route("/api/zip", self.zipped),
            Route("/raw/{path:path}", self.raw),
            Mount("/static", StaticFiles(directory=HERE / "static"), name="static"),
        ]


def make_app(
    root: str | Path, token: str, hosts: tuple[str, ...] = ("127.0.0.1", "localhost"), max_upload: int = MAX_UPLOAD
) -> Guard:
    """The application serving ``root`` to holders of ``token``."""
    site = _Site(root, token, max_upload)
    site.sweep()  # staging folders a killed server left behind
    return Guard(Starlette(routes=site.routes()), token, hosts)
