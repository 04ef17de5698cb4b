"""The Dask backend on a real cluster: a ``dask scheduler`` and two ``dask worker``
processes on localhost (subprocesses, bounded, torn down after).  Publishing through
``--scheduler`` must give a release that ``versapub check`` accepts and that agrees with
the in-memory backend on the same data: the same tables, guarantee, groups per table and
published marginals.  A killed worker leaves no release and no temporary directory, and the
run can be restarted; an unreachable scheduler, GD, an anonymizer that needs the records in
memory and a missing Dask are one-paragraph errors (generalization: ``test_dask_generalize.py``)."""

from __future__ import annotations

import gzip
import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from versapub.cli.main import cli
from versapub.datasets import texas_like

pytest.importorskip("distributed", reason="the Dask extra is installed by make test (pip install '.[test,dask]')")

DASK = str(Path(sys.executable).with_name("dask"))
VERSAPUB = str(Path(sys.executable).with_name("versapub"))
ADULT = Path(__file__).resolve().parents[1] / "src/versapub/datasets/data/adult"
#: Seconds a cluster may take to start, and a publish to finish.
START_S, RUN_S = 60, 300


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Cluster:
    """A scheduler and workers as subprocesses of this test (their own process groups)."""

    def __init__(self, root: Path, workers: int = 2, env: dict[str, str] | None = None) -> None:
        self.port = _free_port()
        self.address = f"tcp://127.0.0.1:{self.port}"
        self.root, self.env = root, {**os.environ, **(env or {})}
        self.scheduler = self._spawn("scheduler", "--host", "127.0.0.1", "--port", str(self.port), "--no-dashboard")
        self.workers = [self.add_worker() for _ in range(workers)]
        self.wait_for(workers)

    def _spawn(self, role: str, *args: str) -> subprocess.Popen[bytes]:
        log = open(self.root / f"{role}-{time.monotonic_ns()}.log", "wb")  # noqa: SIM115 - closed with the process
        return subprocess.Popen(
            [DASK, role, *args], stdout=log, stderr=subprocess.STDOUT, env=self.env, start_new_session=True
        )

    def add_worker(self) -> subprocess.Popen[bytes]:
        return self._spawn(
            "worker",
            self.address,
            "--nworkers",
            "1",
            "--nthreads",
            "1",
            "--memory-limit",
            "2GiB",
            "--no-nanny",
            "--no-dashboard",
            "--local-directory",
            str(self.root),
        )

    def wait_for(self, n: int) -> None:
        from distributed import Client

        with Client(self.address, timeout=f"{START_S}s") as c:
            c.wait_for_workers(n, timeout=START_S)

    def close(self) -> None:
        for p in [*self.workers, self.scheduler]:
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGTERM)
        for p in [*self.workers, self.scheduler]:
            try:
                p.wait(10)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait(10)


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    c = Cluster(tmp_path_factory.mktemp("cluster"))
    try:
        yield c
    finally:
        c.close()


def _adult_parts(directory: Path, n_parts: int = 3) -> Path:
    """The embedded Adult table as ``n_parts`` uncompressed CSV files (Dask splits them)."""
    directory.mkdir(parents=True)
    with gzip.open(ADULT / "adult.csv.gz", "rt", encoding="utf-8") as f:
        header, *rows = f.read().splitlines()
    for i, chunk in enumerate(np.array_split(np.array(rows, dtype=object), n_parts)):
        (directory / f"part-{i}.csv").write_text("\n".join([header, *chunk]) + "\n", encoding="utf-8")
    return directory


def _adult_config(tmp: Path, data: Path) -> Path:
    """The demo's job (adult.toml: four rules, hierarchy levels applied when reading) on ``data``."""
    text = (ADULT / "adult.toml").read_text(encoding="utf-8")
    text = text.replace('path = "adult.csv.gz"', f'path = "{data}"').replace(
        'file = "table5a/', f'file = "{ADULT}/table5a/'
    )
    text = text.replace('format = "csv"', 'format = "parquet"')
    out = tmp / "adult.toml"
    out.write_text(text, encoding="utf-8")
    return out


def _published_marginals(release: Path) -> dict[str, dict[str, dict[str, int]]]:
    """Per table, per attribute (not ``group_id``), the records per published value —
    read from the files (one Parquet file or a directory of parts)."""
    manifest = json.loads((release / "manifest.json").read_text())
    out: dict[str, dict[str, dict[str, int]]] = {}
    for t in manifest["tables"]:
        seen: dict[str, dict[str, int]] = {}
        for f in t["files"].values():
            data = pq.read_table(release / f)
            weights = data.column("count").to_numpy()
            for name in data.column_names:
                if name in ("count", "group_id") or name in seen:
                    continue
                values = np.array(data.column(name).to_pylist(), dtype=object).astype(str)
                v, inv = np.unique(values, return_inverse=True)
                seen[name] = {str(a): int(b) for a, b in zip(v, np.bincount(inv.ravel(), weights=weights), strict=True)}
        out[t["name"]] = seen
    return out


def _shape(release: Path) -> list[tuple[object, ...]]:
    manifest = json.loads((release / "manifest.json").read_text())
    return [
        (
            t["name"],
            tuple(t["attributes"]),
            t["kind"],
            json.dumps(t.get("enforces"), sort_keys=True),
            t["stats"].get("rows_st"),
            t["stats"].get("groups"),
            json.dumps(t["stats"].get("group_sizes"), sort_keys=True),
            t["stats"].get("achieved"),
        )
        for t in manifest["tables"]
    ]


def _leftovers(parent: Path) -> list[str]:
    return sorted(p.name for p in parent.iterdir() if ".versapub-scratch-" in p.name or ".tmp-" in p.name)


def test_cluster_release_matches_memory(cluster: Cluster, tmp_path: Path) -> None:
    """The demo's job, read from three CSV parts on the cluster, against the in-memory run
    of the same job: same tables, guarantee, group statistics, published marginals and
    input counts; ``versapub check`` accepts the cluster's release."""
    data = _adult_parts(tmp_path / "adult")
    cfg = _adult_config(tmp_path, data)
    runner = CliRunner()
    on_dask = runner.invoke(cli, ["publish", str(cfg), "--scheduler", cluster.address, "--out", str(tmp_path / "d")])
    assert on_dask.exit_code == 0, on_dask.output
    assert "Utility: KL-divergence" in on_dask.stdout  # measured out of core, shown as in memory
    single = tmp_path / "adult.csv"
    texts = [p.read_text(encoding="utf-8") for p in sorted(data.glob("*.csv"))]
    single.write_text(texts[0] + "".join(t.split("\n", 1)[1] for t in texts[1:]), encoding="utf-8")
    (tmp_path / "m").mkdir()
    mem_cfg = _adult_config(tmp_path / "m", single)
    in_memory = runner.invoke(cli, ["publish", str(mem_cfg), "--out", str(tmp_path / "m" / "rel")])
    assert in_memory.exit_code == 0, in_memory.output

    d, m = tmp_path / "d", tmp_path / "m" / "rel"
    md, mm = (json.loads((r / "manifest.json").read_text()) for r in (d, m))
    assert md["backend"]["name"] == "dask" and md["backend"]["workers"] == 2 and md["backend"]["partitions"] >= 3
    assert mm["backend"] == {"name": "memory"}
    assert md["guarantee"] == mm["guarantee"] and md["rules"] == mm["rules"]
    assert md["input"]["rows_read"] == mm["input"]["rows_read"] == 30162
    assert _shape(d) == _shape(m)
    assert _published_marginals(d) == _published_marginals(m)
    assert all((d / f).is_dir() for t in md["tables"] for f in t["files"].values())  # partitioned Parquet
    assert "- Computed: Dask, 2 worker(s) on tcp://127.0.0.1" in (d / "report.md").read_text()
    assert "computed Dask, 2 worker(s)" in (d / "report.html").read_text()
    assert "- Computed: in memory" in (m / "report.md").read_text()
    check = runner.invoke(cli, ["check", str(d), "--original", str(single), "--json"])
    assert check.exit_code == 0, check.output
    assert json.loads(check.output)["ok"] is True
    # The utility is measured out of core from the same model: the KL-divergences agree
    # to the randomness of the groups (the schema and group sizes are the same).
    assert md["utility"]["kl_divergence"] == pytest.approx(mm["utility"]["kl_divergence"], rel=0.05)


def test_parquet_dataset_and_missing_values(cluster: Cluster, tmp_path: Path) -> None:
    """A Parquet dataset with missing cells: the same error as in memory (naming the column)
    by default, and with ``--missing drop`` the same records dropped and the same groups."""
    t = texas_like(6_000, 3)
    arrays = [pa.array(c.values.astype(str), type=pa.string()).take(pa.array(c.codes)) for c in t.columns]
    table = pa.Table.from_arrays(arrays, names=list(t.names))
    race = np.array(table.column("race").to_pylist(), dtype=object)
    race[[5, 2_500, 5_999]] = ""
    table = table.set_column(table.column_names.index("race"), "race", pa.array(race.tolist(), pa.string()))
    (tmp_path / "ds").mkdir()
    for i in range(3):
        pq.write_table(table.slice(2_000 * i, 2_000), tmp_path / "ds" / f"part-{i}.parquet")
    pq.write_table(table, tmp_path / "all.parquet")
    rules = [
        "--rule",
        "county, gender -> diag1",
        "--rule",
        "race, pat_age -> diag2",
        "--l",
        "4",
        "--others",
        "insensitive",
    ]
    rules += [f"--column={c}" for c in ("county", "gender", "race", "pat_age", "diag1", "diag2", "hcfa_mdc")]
    runner = CliRunner()
    refused = runner.invoke(
        cli,
        [
            "publish",
            "--input",
            str(tmp_path / "ds"),
            *rules,
            "--scheduler",
            cluster.address,
            "--out",
            str(tmp_path / "no"),
        ],
    )
    assert refused.exit_code == 2 and "race" in refused.output and "Traceback" not in refused.output
    assert not (tmp_path / "no").exists() and _leftovers(tmp_path) == []
    drop = [*rules, "--missing", "drop", "--format", "parquet"]
    a = runner.invoke(
        cli,
        [
            "publish",
            "--input",
            str(tmp_path / "ds"),
            *drop,
            "--scheduler",
            cluster.address,
            "--out",
            str(tmp_path / "d"),
        ],
    )
    b = runner.invoke(cli, ["publish", "--input", str(tmp_path / "all.parquet"), *drop, "--out", str(tmp_path / "m")])
    assert a.exit_code == 0 and b.exit_code == 0, a.output + b.output
    ma, mb = (json.loads((tmp_path / r / "manifest.json").read_text()) for r in ("d", "m"))
    assert ma["input"]["rows_dropped_missing"] == mb["input"]["rows_dropped_missing"] == 3
    assert _shape(tmp_path / "d") == _shape(tmp_path / "m")
    assert _published_marginals(tmp_path / "d") == _published_marginals(tmp_path / "m")


def _run_cli(args: list[str], cwd: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen([VERSAPUB, *args], cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def wait_held(folder: Path, point: str, proc: subprocess.Popen[bytes], cluster: Cluster) -> subprocess.Popen[bytes]:
    """The worker whose task holds at ``point`` (it says so: :mod:`versapub.scale.hold`), waited
    for on that report alone — the job cannot finish meanwhile, whatever the load."""
    deadline = time.monotonic() + RUN_S
    while True:
        for marker in folder.glob(f"{point}-*.held"):
            pid = int(marker.stem.rsplit("-", 1)[1])
            for w in cluster.workers:
                if w.pid == pid:
                    return w
        assert proc.poll() is None, f"the job ended before a task held at {point}: {proc.stderr}"
        assert time.monotonic() < deadline, f"no task held at {point} within {RUN_S} s"
        time.sleep(0.02)


def test_killed_worker_leaves_nothing_and_rerun_works(tmp_path: Path) -> None:
    """A worker SIGKILLed mid-run (the scheduler allows no task to fail): no release, no
    scratch or staging directory, a one-paragraph error; a rerun on a healthy cluster
    publishes a release that checks."""
    held = tmp_path / "held"
    held.mkdir()
    hold = {"VERSAPUB_HOLD": "encode", "VERSAPUB_HOLD_DIR": str(held)}
    c = Cluster(tmp_path, env={"DASK_DISTRIBUTED__SCHEDULER__ALLOWED_FAILURES": "0", **hold})
    try:
        t = texas_like(120_000, 5)
        arrays = [pa.array(col.values.astype(str), type=pa.string()).take(pa.array(col.codes)) for col in t.columns]
        table = pa.Table.from_arrays(arrays, names=list(t.names))
        (tmp_path / "ds").mkdir()
        for i in range(6):
            pacsv.write_csv(table.slice(20_000 * i, 20_000), tmp_path / "ds" / f"part-{i}.csv")
        out = tmp_path / "rel"
        args = [
            "publish",
            "--input",
            str(tmp_path / "ds"),
            "--rule",
            "county, gender -> diag1",
            "--rule",
            "thcic -> diag2",
            "--l",
            "5",
            "--scheduler",
            c.address,
            "--others",
            "insensitive",
            "--out",
            str(out),
        ]
        args += [f"--column={a}" for a in ("county", "gender", "thcic", "diag1", "diag2", "pat_age")]
        proc = _run_cli(args, tmp_path)
        victim = wait_held(held, "encode", proc, c)  # a worker reports it is encoding records: kill it then
        os.killpg(victim.pid, signal.SIGKILL)
        victim.wait(RUN_S)  # dead: the tasks held elsewhere may go on (the job fails on the lost one)
        (held / "encode.release").write_text("")
        _, stderr = proc.communicate(timeout=RUN_S)
        text = stderr.decode()
        assert proc.returncode == 5, text
        assert "The Dask cluster failed" in text and "Traceback" not in text
        assert not out.exists() and _leftovers(tmp_path) == []

        c.workers.append(c.add_worker())  # the cluster healed: the same command publishes
        c.wait_for(2)
        proc = _run_cli(args, tmp_path)
        _, stderr = proc.communicate(timeout=RUN_S)
        assert proc.returncode == 0, stderr.decode()
        assert _leftovers(tmp_path) == []
        check = CliRunner().invoke(cli, ["check", str(out)])
        assert check.exit_code == 0, check.output
    finally:
        c.close()


def test_local_cluster(tmp_path: Path) -> None:
    """``--backend dask`` without a scheduler starts a LocalCluster (one worker here)."""
    t = texas_like(3_000, 1)
    arrays = [pa.array(c.values.astype(str), type=pa.string()).take(pa.array(c.codes)) for c in t.columns]
    pq.write_table(pa.Table.from_arrays(arrays, names=list(t.names)), tmp_path / "t.parquet")
    r = CliRunner().invoke(
        cli,
        [
            "publish",
            "--input",
            str(tmp_path / "t.parquet"),
            "--rule",
            "county -> diag1",
            "--column=county",
            "--column=diag1",
            "--l",
            "3",
            "--backend",
            "dask",
            "--workers",
            "1",
            "--worker-memory",
            "1GiB",
            "--out",
            str(tmp_path / "rel"),
        ],
    )
    assert r.exit_code == 0, r.output
    backend = json.loads((tmp_path / "rel" / "manifest.json").read_text())["backend"]
    assert backend == {"name": "dask", "scheduler": "LocalCluster", "workers": 1, "partitions": 1}
    assert _leftovers(tmp_path) == []


def test_local_workers_start_without_a_fixed_malloc_trim_threshold() -> None:
    """A LocalCluster's workers get Dask's environment minus MALLOC_TRIM_THRESHOLD_ (choice
    116), and Dask's own setting is left as it was."""
    import dask

    from versapub.scale.cluster import local_worker_environ

    before = dict(dask.config.get("distributed.nanny.pre-spawn-environ"))
    env = local_worker_environ()
    assert "MALLOC_TRIM_THRESHOLD_" not in env
    assert env == {k: v for k, v in before.items() if k != "MALLOC_TRIM_THRESHOLD_"}
    assert dict(dask.config.get("distributed.nanny.pre-spawn-environ")) == before


def _one_paragraph(text: str) -> str:
    body = text.strip()
    assert "Traceback" not in body and "\n\n" not in body, body
    return body


def test_unreachable_scheduler(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import versapub.scale.cluster as cluster_module

    monkeypatch.setattr(cluster_module, "CONNECT_TIMEOUT", 2.0)
    (tmp_path / "t.csv").write_text("a,b\n" + "x,1\ny,2\n" * 5)
    address = f"tcp://127.0.0.1:{_free_port()}"
    r = CliRunner().invoke(
        cli,
        [
            "publish",
            "--input",
            str(tmp_path / "t.csv"),
            "--rule",
            "a -> b",
            "--scheduler",
            address,
            "--out",
            str(tmp_path / "rel"),
        ],
    )
    assert r.exit_code == 2
    assert f"No Dask scheduler answers at {address!r}" in _one_paragraph(r.output)
    assert not (tmp_path / "rel").exists() and _leftovers(tmp_path) == []


@pytest.mark.parametrize(
    ("flags", "says"),
    [
        (["--decomposition", "gd"], "publishes with the uad decomposition; gd is not available"),
        (["--anonymizer", "sequential-sweep"], "sequential-sweep needs the records in memory (its sweeps move single"),
        (["--format", "csv"], "--backend dask writes Parquet"),
    ],
)
def test_refused_before_any_work(tmp_path: Path, flags: list[str], says: str) -> None:
    """What the Dask backend cannot do is refused before a cluster starts or a record is read."""
    (tmp_path / "t.csv").write_text("a,b\n" + "x,1\ny,2\n" * 5)
    start = time.perf_counter()
    r = CliRunner().invoke(
        cli,
        [
            "publish",
            "--input",
            str(tmp_path / "t.csv"),
            "--rule",
            "a -> b",
            "--backend",
            "dask",
            *flags,
            "--out",
            str(tmp_path / "rel"),
        ],
    )
    assert r.exit_code == 2 and says in _one_paragraph(r.output)
    assert time.perf_counter() - start < 10 and not (tmp_path / "rel").exists()


def test_missing_dask_says_how_to_install(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("dask", "dask.dataframe", "distributed"):
        monkeypatch.setitem(sys.modules, name, None)  # import fails as if not installed
    (tmp_path / "t.csv").write_text("a,b\n" + "x,1\ny,2\n" * 5)
    r = CliRunner().invoke(
        cli,
        [
            "publish",
            "--input",
            str(tmp_path / "t.csv"),
            "--rule",
            "a -> b",
            "--backend",
            "dask",
            "--out",
            str(tmp_path / "rel"),
        ],
    )
    assert r.exit_code == 2 and "pip install 'versapub[dask]'" in _one_paragraph(r.output)


def test_stale_scratch_of_a_dead_client_is_swept(tmp_path: Path) -> None:
    from versapub.io.workdirs import sweep

    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    host = socket.gethostname()
    mine = {"stale": f"{host} {dead.pid}", "live": f"{host} {os.getpid()}", "other-host": f"elsewhere {dead.pid}"}
    for name, owner in mine.items():
        d = tmp_path / f".rel.versapub-scratch-{name}"
        (d / "codes").mkdir(parents=True)
        (tmp_path / f"{d.name}.owner").write_text(owner)
    (tmp_path / ".other.versapub-scratch-x").mkdir()  # another output's: not touched
    (tmp_path / ".rel.versapub-scratch-noowner").mkdir()  # no owner mark: not ours to judge
    gone = sweep(tmp_path, ".rel.versapub-scratch-")
    assert [p.name for p in gone] == [".rel.versapub-scratch-stale"]
    left = sorted(p.name for p in tmp_path.iterdir())
    assert left == [
        ".other.versapub-scratch-x",
        ".rel.versapub-scratch-live",
        ".rel.versapub-scratch-live.owner",
        ".rel.versapub-scratch-noowner",
        ".rel.versapub-scratch-other-host",
        ".rel.versapub-scratch-other-host.owner",
    ]


def test_date_format_on_the_cluster_as_in_memory(cluster: Cluster, tmp_path: Path) -> None:
    """``--date-format`` on the Dask backend: the dictionary read in the format and written in
    ISO 8601 as in memory (one conversion per distinct value, folded into the codes)."""
    rng = np.random.default_rng(3)
    days = rng.integers(1, 29, 3_000)
    months = rng.integers(1, 13, 3_000)
    dx = rng.choice(list("abcd"), 3_000)
    lines = ["admitted,dx", *(f"{d:02d}/{m:02d}/2021,{x}" for d, m, x in zip(days, months, dx, strict=True))]
    data = tmp_path / "adm.csv"
    data.write_text("\n".join(lines) + "\n")
    args = ["--input", str(data), "--rule", "admitted -> dx", "--l", "2", "--date-format", "admitted=%d/%m/%Y"]
    args += ["--allow-unique", "admitted", "--format", "parquet"]
    runner = CliRunner()
    a = runner.invoke(cli, ["publish", *args, "--scheduler", cluster.address, "--out", str(tmp_path / "d")])
    b = runner.invoke(cli, ["publish", *args, "--out", str(tmp_path / "m")])
    assert a.exit_code == 0 and b.exit_code == 0, a.output + b.output
    assert _published_marginals(tmp_path / "d") == _published_marginals(tmp_path / "m")
    published = json.dumps(_published_marginals(tmp_path / "d"), default=str)
    assert "2021-03-" in published and "/2021" not in published


def test_the_adversary_attacks_a_seeded_sample_on_the_cluster(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 67: the Dask backend ran no adversary (its records are not in memory). It now
    attacks a seeded sample drawn on the cluster, said beside the figures: on a file smaller
    than the sample, every record — and the figures are exactly those of the in-memory
    check of the same release; with a smaller sample, its size is what ``check.json`` states
    and the report says so."""
    from versapub import read_table
    from versapub.verify.check import run_check

    examples = Path(__file__).resolve().parents[1] / "examples"
    job = ["publish", "--input", str(examples / "discharges.csv"), "--rule", "age, sex -> diagnosis", "--l", "4"]
    job += ["--identifying", "encounter_id", "--identifying", "patient_nbr", "--others", "insensitive"]
    job += ["--allow-proxy", "diagnosis_chapter", "--no-utility", "--backend", "dask", "--workers", "1"]
    r = CliRunner().invoke(cli, [*job, "--out", str(tmp_path / "all")])
    assert r.exit_code == 0, r.output
    adv = json.loads((tmp_path / "all" / "check.json").read_text())["adversary"]
    assert adv["sample"]["records"] == 2000 and adv["rules"] and adv["tables"]
    t = read_table(examples / "discharges.csv")
    mine = run_check(
        tmp_path / "all", original=t.select([a for a in t.names if a not in ("encounter_id", "patient_nbr")])
    )
    assert json.loads(json.dumps(mine.adversary)) == {k: v for k, v in adv.items() if k != "sample"}

    import versapub.verify.adversary.sample as sample

    monkeypatch.setattr(sample, "SAMPLE_RECORDS", 600)
    r = CliRunner().invoke(cli, [*job, "--out", str(tmp_path / "part")])
    assert r.exit_code == 0, r.output
    adv = json.loads((tmp_path / "part" / "check.json").read_text())["adversary"]
    assert adv["sample"]["records"] == 600 and adv["n_attacks"] == 500
    # the precision stated: the widest 95 % Wilson half-width over 500 targets (by hand, at 250 of 500:
    # 1.96 / 503.84 * sqrt(125 + 0.9604) = 0.0437)
    assert adv["half_width"] == 0.0437
    assert (
        "a seeded sample of the input&#39;s records drawn on the cluster"
        in (tmp_path / "part" / "report.html").read_text()
    )
