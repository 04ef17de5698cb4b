"""A job as the browser edits it, the same TOML a CLI user writes (``versapub publish
JOB.toml``), and publishing it in the background with progress and a Cancel that leaves
nothing behind (the release writer removes a release it did not finish)."""

from __future__ import annotations

import os
import re
import threading
import time
import tomllib
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import tomli_w

from versapub.errors import ConfigError, VersapubError
from versapub.io.config import PublishConfig, parse_config
from versapub.privacy.guarantees.guarantee import parse_guarantee
from versapub.web.paths import Root

#: Column roles as the browser names them, and their ``[columns]`` keys; ``key`` is a
#: quasi-identifying column the adversary is assumed to know (``[privacy] keys``); ``household``
#: the one column of each person's household id (``[columns] household``, issue 68).
ROLES = ("identifying", "quasi_identifying", "key", "sensitive", "insensitive", "household")
#: Settings the page has no field for, carried from a loaded job into the one it saves
#: unchanged (a job loaded and saved again publishes as the CLI would publish it).
CARRIED = {
    "privacy": (
        "k",
        "max_risk",
        "risk_measure",
        "max_singling_out",
        "suppression",
        "suppression_mode",
        "importance",
        "unit",
    ),
    "columns": ("allow_unique", "others", "allow_proxy"),
    "publish": (
        "format",
        "detach_others",
        "backend",
        "scheduler",
        "workers",
        "worker_memory",
        "gd_stop_when_worse",
        "gd_max_candidates",
        "multi_sa_time_limit",
        "multi_sa_max_combinations",
    ),
    "input": ("columns", "names", "strip", "population"),
}
#: Where a job that was not saved is read from (never written): paths relative to the root.
UNSAVED = ".versapub-job.toml"


def _rel(target: str, job_dir: str) -> str:
    """``target`` (relative to the root) as seen from ``job_dir`` (relative to the root)."""
    return Path(os.path.relpath(target, job_dir or ".")).as_posix()


def _guarantee_entry(text: str) -> dict[str, Any]:
    spec = parse_guarantee(text)
    return {"guarantee": spec.pop("name"), **spec}


def job_toml(job: dict[str, Any], job_path: str = UNSAVED) -> str:
    """The browser's job (``input``, ``delimiter``, ``na_values``, ``missing``, ``roles``
    {column: role}, ``rules`` [{rule, guarantee?}], ``guarantee``, ``anonymizer``,
    ``decomposition``, ``hierarchies`` {column: file}, ``date_formats``, ``seed``) as the
    TOML configuration of ``versapub publish``, its paths relative to ``job_path``."""
    if not isinstance(job.get("input"), str) or not job["input"]:
        raise ConfigError("Choose the data file first.")
    here = str(Path(job_path).parent)
    inp: dict[str, Any] = {"path": _rel(job["input"], here)}
    for key in ("delimiter", "missing"):
        if job.get(key):
            inp[key] = str(job[key])
    if job.get("header") is False:
        inp["header"] = False
    if job.get("na_values") or (job.get("na_values") == [] and job.get("na_values_set")):
        inp["na_values"] = [str(v) for v in job["na_values"]]
    if job.get("date_formats"):
        inp["date_formats"] = {str(k): str(v) for k, v in job["date_formats"].items() if v}
    if job.get("hierarchies"):
        inp["hierarchies"] = {str(a): {"file": _rel(str(f), here)} for a, f in job["hierarchies"].items() if f}
    privacy: dict[str, Any] = {}
    if job.get("mechanism"):  # differential privacy: the budget and the domains, no rule nor guarantee
        privacy["mechanism"] = str(job["mechanism"]).strip()
        domains = {str(c): _domain_entry(str(v), here) for c, v in (job.get("domains") or {}).items() if str(v).strip()}
        if domains:
            privacy["domains"] = domains
    rules = []
    for r in job.get("rules") or []:
        text = str(r.get("rule", "")).strip()
        if not text:
            continue
        own = str(r.get("guarantee") or "").strip()
        rules.append({"rule": text, **_guarantee_entry(own)} if own else text)
    if rules and not job.get("mechanism"):
        privacy["rules"] = rules
    if job.get("guarantee") and not job.get("mechanism"):
        privacy.update(_guarantee_entry(str(job["guarantee"])))
    roles = job.get("roles") or {}
    unknown = sorted({str(r) for r in roles.values()} - {*ROLES, ""})
    if unknown:
        raise ConfigError(f"Unknown column role(s) {unknown}; choose among {', '.join(ROLES)}.")
    columns = {role: [c for c, r in roles.items() if r == role] for role in ROLES}
    homes = columns.pop("household")
    if len(homes) > 1:
        raise ConfigError(f"One column holds the household id; {', '.join(homes)} are all marked household.")
    keys = columns.pop("key")
    if keys:  # key variables are quasi-identifying, and the ones --k and the risk count
        columns["quasi_identifying"] += keys
        privacy["keys"] = keys
    publish = {k: job[k] for k in ("anonymizer", "decomposition") if job.get(k)}
    if job.get("seed") not in (None, ""):
        publish["seed"] = int(job["seed"])
    doc: dict[str, Any] = {"input": inp, "privacy": privacy}
    m = job.get("marginals") or {}
    if m.get("sensitive"):  # a collection of anonymized marginals instead of rules: it publishes the
        named = [a.split("@")[0].strip() for x in m.get("marginals") or [] for a in str(x).split(",")]
        inp["columns"] = list(dict.fromkeys([*named, str(m["sensitive"])]))  # columns its marginals name
        spec = parse_guarantee(str(m.get("diversity") or "l-diversity:l=2"))
        doc["marginals"] = {
            "sensitive": str(m["sensitive"]),
            "k": int(m.get("k") or 2),
            "diversity": spec,
            **({"base": str(m["base"])} if m.get("base") else {}),
            "marginals": [str(x) for x in m.get("marginals") or [] if str(x).strip()],
            "inject": int(m.get("inject") or 0),
        }
    if any(columns.values()) or homes:
        doc["columns"] = {k: v for k, v in columns.items() if v}
        if homes:
            doc["columns"]["household"] = homes[0]
    for section, carried in (job.get("carried") or {}).items():
        if section in CARRIED and isinstance(carried, dict):
            known = {k: v for k, v in carried.items() if k in CARRIED[section]}
            if known:
                doc.setdefault(section, {}).update(known)
    treatments = [_treatment_entry(str(t)) for t in job.get("treatments") or [] if str(t).strip()]
    if treatments:
        doc["treatment"] = treatments
    if publish:
        doc["publish"] = publish
    command = "versapub marginals publish" if "marginals" in doc else "versapub publish"
    return f"# A versapub job, saved by versapub serve: {command} THIS.toml --out DIR\n" + tomli_w.dumps(doc)


def job_of_toml(text: str, job_path: str) -> dict[str, Any]:
    """A saved TOML job (``job_path`` relative to the root) as the browser's job; refused
    when the browser cannot show it (it is still a valid CLI job)."""
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{job_path} is not valid TOML: {exc}.") from None
    here = Path(job_path).parent
    inp, priv = doc.get("input") or {}, doc.get("privacy") or {}
    cols, pub = doc.get("columns") or {}, doc.get("publish") or {}

    def from_job(p: str) -> str:
        return Path(os.path.normpath(here / p)).as_posix()

    def guarantee_text(d: dict[str, Any]) -> str:
        name = d.get("guarantee")
        if not isinstance(name, str):
            return ""
        params = ",".join(f"{k}={v}" for k, v in d.items() if k not in ("guarantee", "rule", "rules", "anonymizer"))
        return f"{name}:{params}" if params else name

    rules = []
    for r in priv.get("rules") or []:
        rules.append(
            {"rule": r, "guarantee": ""}
            if isinstance(r, str)
            else {"rule": r.get("rule", ""), "guarantee": guarantee_text(r)}
        )
    listed = [k for k in cols if k.replace("-", "_") in ROLES and k != "household"]  # household: one name
    roles = {c: k.replace("-", "_") for k in listed for c in cols[k]}
    if isinstance(cols.get("household"), str):
        roles[cols["household"]] = "household"
    keys = priv.get("keys") or []
    roles.update({str(c): "key" for c in (keys.split(",") if isinstance(keys, str) else keys)})
    carried = {
        section: {k.replace("-", "_"): v for k, v in (doc.get(section) or {}).items() if k.replace("-", "_") in names}
        for section, names in CARRIED.items()
    }
    hier = {a: from_job(h["file"] if isinstance(h, dict) else h) for a, h in (inp.get("hierarchies") or {}).items()}
    return {
        "input": from_job(str(inp.get("path", ""))),
        "delimiter": inp.get("delimiter") or "",
        "header": inp.get("header", True),
        "missing": inp.get("missing") or "error",
        "na_values": list(inp.get("na_values") or []),
        **({"na_values_set": True} if inp.get("na_values") == [] else {}),
        "date_formats": dict(inp.get("date_formats") or {}),
        "roles": roles,
        "rules": rules,
        "guarantee": guarantee_text(
            {k: v for k, v in priv.items() if k not in ("rules", "keys", "mechanism", "domains", *CARRIED["privacy"])}
        )
        or "",
        "anonymizer": pub.get("anonymizer") or "",
        "decomposition": pub.get("decomposition") or "",
        "hierarchies": hier,
        "seed": pub.get("seed", ""),
        "treatments": [_treatment_text(t) for t in doc.get("treatment") or [] if isinstance(t, dict)],
        "marginals": _marginals_of(doc.get("marginals")),
        "mechanism": str(priv.get("mechanism") or ""),
        "domains": {str(c): _domain_text(v, here) for c, v in (priv.get("domains") or {}).items()},
        **({"carried": {k: v for k, v in carried.items() if v}} if any(carried.values()) else {}),
    }


#: A declared domain as the page writes it: a range of whole numbers, values separated by ``;``,
#: or a file of values (a path relative to the root).
_RANGE = re.compile(r"-?\d+\.\.-?\d+")


def _domain_entry(text: str, here: str) -> Any:
    """A domain line of the page (``17..90``, ``F;M``, or a file) as its ``[privacy.domains]``
    value, a file's path relative to the job's folder."""
    text = text.strip()
    if _RANGE.fullmatch(text):
        return text
    if ";" in text:
        return [v.strip() for v in text.split(";") if v.strip()]
    return _rel(text, here)


def _domain_text(value: Any, here: Path) -> str:
    """A ``[privacy.domains]`` value as the page's line (a file's path relative to the root)."""
    if isinstance(value, list):
        return ";".join(str(v) for v in value)
    if isinstance(value, dict) and set(value) == {"from", "to"}:
        return f"{value['from']}..{value['to']}"
    text = str(value)
    return text if _RANGE.fullmatch(text.strip()) else Path(os.path.normpath(here / text)).as_posix()


def _treatment_entry(text: str) -> dict[str, Any]:
    """A treatment line (``noise:columns=a;b,magnitude=10``) as its ``[[treatment]]`` table,
    checked by the one builder first (a bad line is one paragraph, before anything is saved)."""
    from versapub.plugins import parse_spec
    from versapub.treatments import parse_treatment

    parse_treatment(text)
    name, params = parse_spec(text.strip(), "treatment")
    return {
        "name": name,
        **{k: (v.split(";") if k in _NAMES and isinstance(v, str) else v) for k, v in params.items()},
    }


#: Treatment parameters that name columns (a list in TOML, ``a;b`` on a line).
_NAMES = ("columns", "keys", "similar", "strata")


def _treatment_text(t: dict[str, Any]) -> str:
    """A ``[[treatment]]`` table as the line the browser shows."""
    params = ",".join(
        f"{k}={';'.join(map(str, v)) if isinstance(v, list) else str(v).lower() if isinstance(v, bool) else v}"
        for k, v in t.items()
        if k != "name"
    )
    return f"{t.get('name', '')}:{params}"


def _marginals_of(m: dict[str, Any] | None) -> dict[str, Any] | None:
    if not m:
        return None
    div = m.get("diversity") or {"name": "l-diversity", "l": m.get("l", 2)}
    if isinstance(div, str):
        div = {"name": div, **({"l": m["l"]} if "l" in m else {})}
    params = ",".join(f"{k}={v}" for k, v in div.items() if k != "name")
    return {
        "sensitive": m.get("sensitive", ""),
        "k": m.get("k", 2),
        "diversity": f"{div['name']}:{params}" if params else div["name"],
        "base": m.get("base", ""),
        "marginals": list(m.get("marginals") or []),
        "inject": m.get("inject", 0),
    }


def job_config(root: Root, job: dict[str, Any], job_path: str = UNSAVED) -> PublishConfig:
    """The browser's job as the CLI reads it (through its TOML)."""
    path = root.resolve(job_path)
    files = [str(v).strip() for v in (job.get("domains") or {}).values()]
    files = [f for f in files if f and not _RANGE.fullmatch(f) and ";" not in f]
    for named in [job.get("input") or "", *(job.get("hierarchies") or {}).values(), *files]:
        if named:
            root.resolve(str(named))  # every file the job names lies inside the root
    return parse_config(job_toml(job, job_path), path)


class Cancelled(VersapubError):
    """The user pressed Cancel."""


class Busy(ConfigError):
    """A job of the same kind is running (at most one heavy job per kind at a time)."""


#: What each kind of background job is called in a sentence.
KIND_TEXT = {
    "publish": "a publish",
    "profile": "reading the data file",
    "rules": "the feasibility check",
    "check": "a check",
    "evaluate": "an evaluation",
    "risk": "a risk measurement",
    "compare": "a comparison",
    "eligible": "the eligible ranges",
}


@dataclass
class Task:
    """A job running in a worker thread, off the server's event loop: its progress as the
    library reports it, its result, and a Cancel honoured at the next step it reports."""

    id: str
    kind: str
    out: str
    step: str = "starting"
    completed: int = 0
    total: int = 0
    status: str = "running"  # running | done | failed | cancelled
    message: str = ""
    started: float = field(default_factory=time.monotonic)
    #: When the current step began (a step's time left is measured from it).
    step_started: float = field(default_factory=time.monotonic)
    ended: float | None = None
    cancel: threading.Event = field(default_factory=threading.Event)
    result: dict[str, Any] = field(default_factory=dict)
    #: The worker thread, and whether it is inside the job's work (only then may Cancel
    #: interrupt it between two Python steps: :meth:`interrupt`).
    thread_id: int | None = None
    in_work: bool = False
    #: The furthest publish step reported (:data:`PUBLISH_STEPS`; -1: none yet).
    reached: int = -1
    guard: threading.Lock = field(default_factory=threading.Lock)

    def interrupt(self) -> None:
        """Cancel inside a long step (issue 66): when the work has not reached a progress report
        since Cancel was pressed, :class:`Cancelled` is raised in its thread at its next Python
        step — within a second of the click, whatever loop it is in; the release writer's
        staging then removes what was not finished, as for any error."""
        import ctypes

        if not self.guard.acquire(timeout=1):  # never wait on a worker that ended holding it
            return
        try:
            if self.in_work and self.thread_id is not None and self.status == "running":
                ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(self.thread_id), ctypes.py_object(Cancelled))
        finally:
            self.guard.release()

    def progress(self, description: str, completed: int, total: int) -> None:
        """The library's ``progress(description, done, total)``: raises :class:`Cancelled`
        once Cancel was pressed."""
        if self.cancel.is_set():
            raise Cancelled("Cancelled by the user; nothing was written.")
        if description != self.step:
            self.step_started = time.monotonic()
            at = next((i for i, (start, _) in enumerate(PUBLISH_STEPS) if description.startswith(start)), -1)
            self.reached = max(self.reached, at)  # the steps only move forward
        self.step, self.completed, self.total = description, completed, total

    def say(self, description: str) -> None:
        """The library's ``progress(description)`` (a step without a count)."""
        self.progress(description, 0, 0)

    @property
    def running(self) -> bool:
        return self.status == "running"

    def to_dict(self) -> dict[str, Any]:
        elapsed = (self.ended or time.monotonic()) - self.started
        share = 1.0 if self.status == "done" else (self.completed / self.total if self.total else None)
        # the current step's time left, once its count says enough (never "about 0 s left" at 6 %)
        in_step = time.monotonic() - self.step_started
        left = in_step * (1 - share) / share if share and share >= 0.1 and self.running else None
        status = "cancelling" if self.running and self.cancel.is_set() else self.status
        return {
            "id": self.id,
            "kind": self.kind,
            "out": self.out,
            "status": status,
            "step": self.step,
            "percent": None if share is None else round(100 * share),
            # a publish's whole job (the bar), from the furthest step reached and the step's own count
            "overall": (
                100
                if self.status == "done"
                else round(100 * publish_share(self.reached, share))
                if self.kind == "publish" and self.reached >= 0
                else None
            ),
            "elapsed_s": round(elapsed, 1),
            "left_s": None if left is None else round(left, 1),
            "message": self.message,
            "result": self.result,
        }


Work = Callable[[Task], dict[str, Any]]

#: A publish's steps in order, by the start of the sentence the library reports, with the share
#: of a whole publish each takes (measured on the examples and the survey; issue 66: the bar
#: follows the whole job, not only the step that counts).
PUBLISH_STEPS: tuple[tuple[str, float], ...] = (
    ("reading", 0.05),
    ("treating", 0.03),
    ("checking rules", 0.02),
    ("decomposing", 0.02),
    ("screening", 0.08),
    ("generalizing", 0.08),
    ("anonymizing", 0.15),
    ("measuring utility", 0.2),
    ("writing", 0.07),
    ("verifying", 0.15),
    ("attacks", 0.15),
)


def publish_share(reached: int, share: float | None) -> float:
    """The share of a whole publish done when step ``reached`` (an index of
    :data:`PUBLISH_STEPS`) is ``share`` done (``None``: a step that does not count: half)."""
    weights = [w for _, w in PUBLISH_STEPS]
    done = sum(weights[:reached]) + weights[reached] * (0.5 if share is None else share)
    return min(done / sum(weights), 1.0)


class Tasks:
    """The background jobs of one server: each in a thread of its own, at most one running
    per kind (a second is refused at once, naming the first; ``supersede`` cancels it
    instead, for a view the page re-reads as the user edits)."""

    #: Finished jobs kept for the page to read; older ones are forgotten (their results too).
    KEPT = 50

    def __init__(self) -> None:
        self._tasks: dict[str, Task] = {}
        self._lock = threading.Lock()

    def get(self, task_id: str) -> Task:
        with self._lock:
            if task_id not in self._tasks:
                raise ConfigError(f"No job {task_id!r} is known to this server.")
            return self._tasks[task_id]

    def running(self, kind: str) -> list[Task]:
        with self._lock:
            return [t for t in self._tasks.values() if t.kind == kind and t.running]

    def start(self, kind: str, label: str, work: Work, supersede: bool = False) -> Task:
        """Run ``work(task)`` in a thread; its dictionary becomes the task's result."""
        task = Task(uuid.uuid4().hex[:12], kind, label)
        with self._lock:
            busy = [t for t in self._tasks.values() if t.kind == kind and t.running]
            for t in busy:
                if supersede:
                    t.cancel.set()
                else:
                    what = KIND_TEXT.get(kind, kind)
                    on = f" of {t.out}" if t.out else ""
                    raise Busy(
                        f"{what[0].upper()}{what[1:]}{on} is running already ({t.to_dict()['elapsed_s']} s so far): "
                        "wait for it to finish or cancel it first."
                    )
            ended = [t for t in self._tasks.values() if not t.running]
            for old in ended[: max(0, len(ended) - self.KEPT)]:  # insertion order: the oldest first
                del self._tasks[old.id]
            self._tasks[task.id] = task

        def run() -> None:
            task.thread_id = threading.get_ident()
            try:
                try:
                    with task.guard:
                        task.in_work = True
                    result = work(task)
                finally:
                    with task.guard:
                        task.in_work = False
                if task.cancel.is_set():
                    raise Cancelled("Cancelled by the user.")
                task.result, task.status = result, "done"
            except Cancelled as exc:
                task.status, task.message = "cancelled", str(exc) or "Cancelled by the user; nothing was written."
            except VersapubError as exc:
                task.status, task.message = "failed", str(exc)
            except Exception as exc:
                task.status, task.message = "failed", f"Internal error ({type(exc).__name__}: {exc}); please report it."
            finally:
                task.ended = time.monotonic()

        threading.Thread(target=run, name=f"versapub-{kind}-{task.id}", daemon=True).start()
        return task

    def start_publish(self, root: Root, cfg: PublishConfig, out: str, overwrite: bool = False) -> Task:
        """Publish ``cfg`` to ``out`` (relative to the root) in a thread."""
        dest = root.resolve(out)
        from versapub import workflow
        from versapub.io.safety import check_destination

        check_destination(dest, overwrite, [*cfg.read_files()])  # refused before any work, as the CLI

        def work(task: Task) -> dict[str, Any]:
            if cfg.mechanism is not None:  # differential privacy, as publish --mechanism runs it
                from versapub.publishing.dp_release import run_dp

                run_dp(cfg, dest, overwrite=overwrite, progress=task.progress)
                return {}
            run = workflow.run_marginals if cfg.marginals is not None else workflow.run
            run(cfg, dest, overwrite=overwrite, progress=task.progress)
            return {}

        return self.start("publish", root.relative(dest), work)
