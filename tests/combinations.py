"""Random jobs over the whole option space, run through the command line, and what every
outcome must be (issue 63: "every combination a steward asks for publishes or refuses").

A draw is a small table (3 to a few hundred records; numeric, categorical, rare-valued,
near-unique and one-value columns, names drawn from a pool of awkward ones, missing cells
sometimes) and one command line over it: rules (per-rule guarantees included), the classic
jobs (quasi-identifiers, with or without sensitive columns, kept or detached others) or a
differentially private job; every anonymizer with its parameters, every decomposition, every
guarantee with parameters, ``--k``, ``--max-risk`` with both measures, ``--suppression`` and
both suppression modes, hierarchies, zero to three treatments, ``--allow-unique``,
``--allow-proxy``, both formats, utility on or off, and options that do not belong together.

:func:`outcome_problems` states what every draw must end in: exit 0 or 6 with a release that
``check`` accepts (and ``check --k`` with the floor asked for) and that :func:`reread` accepts
(an independent re-reading of the files: counts, totals, the floor), or exit 2 with one
paragraph and nothing written — never 3, 70 or a traceback.
"""

from __future__ import annotations

import csv
import json
import math
import shutil
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from hypothesis import strategies as st

#: Column names: ordinary ones, one-letter names the code might use internally, SQL words,
#: spaces, quotes, non-ASCII letters (issue 71, item 1).
NAMES = [
    "age",
    "sex",
    "zip",
    "income",
    "disease",
    "city",
    "c",
    "C",
    "n",
    "k",
    "s",
    "g",
    "v",
    "value",
    "group",
    "order",
    "leaf",
    "lo",
    "hi",
    "w",
    "row",
    "rid",
    "my col",
    "it's",
    "größe",
    "x -> y",
    "cid",
    "attribute",
    "position",
    "first",
    "last",
    "pos",
    "pv",
    "k0",
    "p0",
    "r",
]

GUARANTEES = [
    "l-diversity",
    "distinct-l-diversity",
    "entropy-l-diversity",
    "recursive-cl-diversity",
    "k-anonymity",
    "t-closeness",
    "functional-diversity",
    "beta-likeness",
    "delta-disclosure",
    "k-map",
    "delta-presence",
]
ANONYMIZERS = [
    None,
    "anatomy",
    "multi-sa",
    "mondrian",
    "incognito",
    "msa-decomposition",
    "sequential-sweep",
    "one-d-l-diversity",
]
DECOMPOSITIONS = [None, "uad", "gd", "single-attribute", "multi-sa"]
TREATMENTS = [
    "top-coding",
    "bottom-coding",
    "rounding",
    "microaggregation",
    "noise",
    "pram",
    "rank-swapping",
    "targeted-swapping",
]


@dataclass(frozen=True)
class Column:
    """One drawn column: its name, kind and text values (``""`` a missing cell)."""

    name: str
    kind: str  # num, cat, bin, rare, unique, const
    values: tuple[str, ...]

    @property
    def numeric(self) -> bool:
        return self.kind in ("num", "unique") and all(v == "" or v.lstrip("-").isdigit() for v in self.values)


@dataclass(frozen=True)
class Draw:
    """A table and the command line that publishes it (``{dir}`` stands for the draw's folder)."""

    columns: tuple[Column, ...]
    args: tuple[str, ...]
    files: tuple[tuple[str, str], ...] = ()
    k: int | None = None
    family: str = "rules"
    notes: tuple[str, ...] = field(default=())

    def write(self, folder: Path) -> list[str]:
        """Write the table and extra files into ``folder``; the argument list with paths filled in."""
        folder.mkdir(parents=True, exist_ok=True)
        with (folder / "t.csv").open("w", newline="", encoding="utf-8") as f:
            w = csv.writer(f)
            w.writerow([c.name for c in self.columns])
            w.writerows(zip(*(c.values for c in self.columns), strict=True))
        for name, text in self.files:
            (folder / name).write_text(text, encoding="utf-8")
        return ["--input", str(folder / "t.csv"), *(a.replace("{dir}", str(folder)) for a in self.args)]

    def command(self) -> str:
        """The command line, for a counterexample's message."""
        return "versapub publish " + " ".join(_shell(a) for a in self.args)


def _shell(arg: str) -> str:
    return arg if arg.replace("-", "").replace("=", "").replace(",", "").replace(".", "").isalnum() else repr(arg)


# ---------------------------------------------------------------------------------- tables


@st.composite
def columns(draw: st.DrawFn) -> tuple[Column, ...]:
    """2 to 6 columns of ``n`` records; kinds chosen so that jobs are often feasible."""
    n = draw(st.one_of(st.integers(3, 30), st.integers(30, 200), st.integers(200, 400)))
    m = draw(st.integers(2, 6))
    names = draw(st.lists(st.sampled_from(NAMES), min_size=m, max_size=m, unique_by=str.lower))
    seed = draw(st.integers(0, 2**16))
    rng = np.random.default_rng(seed)
    out = []
    for name in names:
        kind = draw(st.sampled_from(["num", "num", "cat", "cat", "cat", "cat", "bin", "rare", "unique", "const"]))
        out.append(Column(name, kind, tuple(_values(rng, kind, n))))
    return tuple(out)


def _values(rng: Any, kind: str, n: int) -> list[str]:
    if kind == "num":
        lo = int(rng.integers(0, 60))
        width = int(rng.choice([5, 20, 60]))
        vals = lo + np.floor(rng.beta(2, 2 + rng.random() * 3, size=n) * width).astype(int)
        return [str(v) for v in vals]
    if kind == "cat":
        card = int(rng.integers(2, 9))
        w = 1.0 / np.arange(1, card + 1) ** rng.random()
        return [f"v{c}" for c in rng.choice(card, size=n, p=w / w.sum())]
    if kind == "bin":
        return [str(v) for v in rng.choice(["F", "M"], size=n)]
    if kind == "rare":
        base = [f"r{c}" for c in rng.choice(3, size=n)]
        base[int(rng.integers(0, n))] = "rare"
        return base
    if kind == "unique":
        return [str(v) for v in rng.permutation(n) * 7 + 1000]
    return ["same"] * n


# ------------------------------------------------------------------------------ job parts


def rare(draw: st.DrawFn, one_in: int) -> bool:
    """True about once in ``one_in`` draws (False first: what Hypothesis shrinks towards)."""
    return draw(st.sampled_from([False] * (one_in - 1) + [True]))


def q(name: str) -> str:
    """``name`` as a rule writes it: quoted when it holds a comma, a quote or ``->``."""
    if any(ch in name for ch in ",'\"") or "->" in name or name != name.strip():
        return f"'{name}'" if "'" not in name else f'"{name}"'
    return name


@st.composite
def guarantee_spec(draw: st.DrawFn, name: str | None = None) -> str:
    g = name or draw(st.sampled_from(GUARANTEES))
    if g in ("l-diversity", "distinct-l-diversity"):
        return f"{g}:l={draw(st.integers(2, 4))}"
    if g == "entropy-l-diversity":
        return f"{g}:l={draw(st.sampled_from([1.5, 2, 2.5, 3]))}"
    if g == "recursive-cl-diversity":
        return f"{g}:c={draw(st.sampled_from([1, 2, 3]))},l={draw(st.integers(2, 3))}"
    if g == "k-anonymity":
        return f"{g}:k={draw(st.integers(2, 6))}"
    if g == "t-closeness":
        dist = draw(st.sampled_from(["", ",distance=equal", ",distance=hierarchical"]))
        return f"{g}:t={draw(st.sampled_from([0.1, 0.2, 0.35, 0.6]))}{dist}"
    if g == "functional-diversity":
        return f"{g}:tau={draw(st.sampled_from([0.3, 0.5, 0.8]))},lambda={draw(st.integers(2, 3))}"
    if g == "beta-likeness":
        enh = draw(st.sampled_from(["", ",enhanced=true"]))
        return f"{g}:beta={draw(st.sampled_from([0.5, 1, 3]))}{enh}"
    if g == "delta-disclosure":
        return f"{g}:delta={draw(st.sampled_from([0.5, 1, 2]))}"
    if g == "k-map":
        return f"{g}:k={draw(st.integers(2, 4))},fraction={draw(st.sampled_from([0.1, 0.5, 0.9]))}"
    return f"{g}:delta_min=0,delta_max={draw(st.sampled_from([0.5, 0.8]))}"


@st.composite
def anonymizer_spec(draw: st.DrawFn) -> str | None:
    a = draw(st.sampled_from(ANONYMIZERS))
    if a in ("mondrian", "incognito") and draw(st.booleans()):
        sup = draw(st.sampled_from([0.02, 0.1, 0.3]))
        mode = draw(st.sampled_from(["", ",suppression_mode=class", ",suppression_mode=remove"]))
        extra = draw(st.sampled_from(["", ",utility=discernibility", ",utility=loss"])) if a == "incognito" else ""
        return f"{a}:suppression={sup}{mode}{extra}"
    if a == "msa-decomposition" and draw(st.booleans()):
        return f"{a}:above_l_per=true"
    if a == "anatomy" and draw(st.booleans()):
        return "anatomy:grouping=wrap-around"
    return a


def _hierarchy(col: Column) -> str | None:
    """An ARX hierarchy (leaf;level1;...;*) for a column: intervals of numbers, groups of values."""
    leaves = sorted({v for v in col.values if v != ""}, key=lambda v: (len(v), v))
    if not leaves:
        return None
    rows = []
    for v in leaves:
        if col.numeric:
            x = int(v)
            rows.append([v, f"[{x // 5 * 5}, {x // 5 * 5 + 5}[", f"[{x // 20 * 20}, {x // 20 * 20 + 20}[", "*"])
        else:
            rows.append([v, f"grp{sum(map(ord, v)) % 2}", "*"])
    return "\n".join(";".join(r) for r in rows) + "\n"


@st.composite
def treatment_spec(draw: st.DrawFn, cols: tuple[Column, ...]) -> str | None:
    t = draw(st.sampled_from(TREATMENTS))
    nums = [c for c in cols if c.numeric]
    cats = [c for c in cols if not c.numeric]
    if t in ("top-coding", "bottom-coding", "rounding", "microaggregation", "noise", "rank-swapping"):
        if not nums:
            return None
        chosen = draw(st.lists(st.sampled_from(nums), min_size=1, max_size=2, unique_by=lambda c: c.name))
        names = ";".join(c.name for c in chosen)
        if t in ("top-coding", "bottom-coding"):
            how = draw(st.sampled_from(["quantile=0.9", "quantile=0.1", "threshold=30"]))
            val = draw(st.sampled_from(["", ",value=0"]))
            return f"{t}:columns={names},{how}{val}"
        if t == "rounding":
            return f"rounding:columns={names},base={draw(st.sampled_from([2, 5, 10]))}"
        if t == "microaggregation":
            method = draw(st.sampled_from(["", ",method=individual-ranking", ",method=optimal", ",aggregate=median"]))
            return f"microaggregation:columns={names},k={draw(st.integers(2, 8))}{method}"
        if t == "noise":
            method = draw(st.sampled_from(["", ",method=correlated"]))
            return f"noise:columns={names},magnitude={draw(st.sampled_from([5, 25]))}{method}"
        return f"rank-swapping:columns={names},p={draw(st.sampled_from([5, 20]))}"
    if not cats:
        return None
    col = draw(st.sampled_from(cats))
    if t == "pram":
        inv = draw(st.sampled_from(["", ",invariant=true"]))
        return f"pram:columns={col.name},retention={draw(st.sampled_from([0.7, 0.85, 0.95]))}{inv}"
    keys = [c for c in cols if c.name != col.name]
    if not keys:
        return None
    key = draw(st.sampled_from(keys))
    return f"targeted-swapping:columns={col.name},keys={key.name},rate={draw(st.sampled_from([0.05, 0.3]))}"


# ---------------------------------------------------------------------------------- jobs


@st.composite
def jobs(draw: st.DrawFn) -> Draw:
    """One table and one command line over it."""
    cols = draw(columns())
    names = [c.name for c in cols]
    args: list[str] = ["--seed", str(draw(st.integers(0, 3)))]
    files: list[tuple[str, str]] = []
    notes: list[str] = []
    family = draw(st.sampled_from(["rules", "rules", "rules", "classic", "classic", "dp"]))
    if any("" in c.values for c in cols):
        args += ["--missing", draw(st.sampled_from(["value", "drop", "error"]))]
    classic_k = False
    if family == "dp":
        return _dp_job(draw, cols, args, files)
    if family == "rules":
        args += _rules(draw, names)
    else:
        args += _classic(draw, names)
        classic_k = "--sensitive" not in args
    a = draw(anonymizer_spec())
    if a:
        args += ["--anonymizer", a]
    if rare(draw, 4):
        d = draw(st.sampled_from(DECOMPOSITIONS))
        if d:
            args += ["--decomposition", d]
    if classic_k and not rare(draw, 12):  # quasi-identifiers alone: k-anonymity (or k-map, delta-presence)
        g = draw(guarantee_spec(draw(st.sampled_from(["k-anonymity", "k-anonymity", "k-map", "delta-presence"]))))
        args += ["--guarantee", g]
        if g.startswith("delta-presence") or (g.startswith("k-map") and draw(st.booleans())):
            files.append(("pop.csv", _population(cols)))
            args += ["--population", "{dir}/pop.csv"]
    elif rare(draw, 3):
        g = draw(guarantee_spec())
        args += ["--guarantee", g]
        if g.startswith("delta-presence") or (g.startswith("k-map") and draw(st.booleans())):
            files.append(("pop.csv", _population(cols)))
            args += ["--population", "{dir}/pop.csv"]
    elif draw(st.booleans()):
        args += ["--l", str(draw(st.integers(2, 4)))]
    for col in cols:
        if rare(draw, 4):
            text = _hierarchy(col)
            if text:
                fname = f"h{names.index(col.name)}.csv"
                files.append((fname, text))
                args += ["--hierarchy", f"{col.name}={{dir}}/{fname}"]
    k = None
    if draw(st.booleans()):
        k = draw(st.sampled_from([2, 3, 5]))
        args += ["--k", str(k)]
    if rare(draw, 4):
        r = draw(st.sampled_from([0.5, 0.34, 0.2]))
        args += ["--max-risk", str(r)]
        if draw(st.booleans()):
            args += ["--risk-measure", draw(st.sampled_from(["highest", "average"]))]
    floors = "--k" in args or ("--max-risk" in args and "average" not in args)
    if (floors and rare(draw, 2)) or rare(draw, 25):  # without a floor: refused (it would do nothing)
        args += ["--suppression", str(draw(st.sampled_from([0.02, 0.1, 0.3])))]
    if (floors and rare(draw, 3)) or rare(draw, 25):  # key variables (issue 65): the floor counts these
        keys = draw(st.lists(st.sampled_from(names), min_size=1, max_size=len(names), unique=True))
        args += ["--keys", ",".join(keys)]
        if (floors and rare(draw, 2)) or rare(draw, 25):  # local suppression (refused without a floor)
            args += ["--suppression-mode", "cells"]
            if rare(draw, 2):
                args += ["--importance", ",".join(draw(st.permutations(keys)))]
    for _ in range(draw(st.integers(0, 3))):
        t = draw(treatment_spec(cols))
        if t:
            args += ["--treat", t]
    if rare(draw, 6):
        args += ["--allow-unique", draw(st.sampled_from(names))]
    if rare(draw, 6):
        args += ["--allow-proxy", draw(st.sampled_from(names))]
    if rare(draw, 7):
        args += ["--format", "parquet"]
    if rare(draw, 5):
        args += ["--utility", "basic"]
    else:
        args += ["--no-utility"]
    if rare(draw, 9):
        args += ["--max-singling-out", str(draw(st.sampled_from([0.1, 0.5])))]
    if rare(draw, 8):  # persons in households (issue 68): the id removed, household figures reported
        cols = (*cols, _households(draw, len(cols[0].values)))
        args += ["--household", "household_id"]
        if rare(draw, 2):  # the floor counts households (refused without a floor, with cells or the classic job)
            args += ["--unit", "household"]
    return Draw(tuple(cols), tuple(args), tuple(files), k, family, tuple(notes))


def _households(draw: st.DrawFn, n: int) -> Column:
    """A household id over ``n`` records: households of 1 to 4 consecutive records."""
    sizes = draw(st.lists(st.integers(1, 4), min_size=n, max_size=n))
    ids = [f"h{i}" for i, size in enumerate(sizes) for _ in range(size)][:n]
    return Column("household_id", "cat", tuple(ids))


def _rules(draw: st.DrawFn, names: list[str]) -> list[str]:
    args: list[str] = []
    n_rules = draw(st.integers(1, 3))
    for _ in range(n_rules):
        rhs = draw(st.sampled_from(names))
        others = [a for a in names if a != rhs]
        if not others:
            continue
        lhs = draw(st.lists(st.sampled_from(others), min_size=1, max_size=min(3, len(others)), unique=True))
        rule = f"{', '.join(map(q, lhs))} -> {q(rhs)}"
        if rare(draw, 4):
            rule += " | " + draw(guarantee_spec())
        args += ["--rule", rule]
    named = {a for i, a in enumerate(args) if i % 2 == 1}
    args += _roles(draw, [a for a in names if not any(q(a) in r for r in named)])
    return args


def _classic(draw: st.DrawFn, names: list[str]) -> list[str]:
    qi = draw(st.lists(st.sampled_from(names), min_size=1, max_size=min(3, len(names)), unique=True))
    args = ["--qi", ",".join(qi)]
    rest = [a for a in names if a not in qi]
    if rest and draw(st.booleans()):
        sens = draw(st.lists(st.sampled_from(rest), min_size=1, max_size=min(2, len(rest)), unique=True))
        spec = [s + (f":{draw(st.integers(2, 3))}" if rare(draw, 4) else "") for s in sens]
        args += ["--sensitive", ",".join(spec)]
    if draw(st.booleans()):
        args += ["--detach-others"]
    args += _roles(draw, rest)
    return args


def _roles(draw: st.DrawFn, names: list[str]) -> list[str]:
    """Roles of the columns the job does not name otherwise (``names``)."""
    choice = draw(st.sampled_from(["insensitive", "insensitive", "quasi-identifying", "identifying", "declare"]))
    if choice == "declare":
        if not names:
            return ["--others", "insensitive"]
        return ["--insensitive", draw(st.sampled_from(names)), "--others", "insensitive"]
    return ["--others", choice]


def _population(cols: tuple[Column, ...]) -> str:
    """The input's records and as many again (shifted by one), as a population file."""
    rows = list(zip(*(c.values for c in cols), strict=True))
    more = rows[1:] + rows[:1]
    lines = [",".join(_csv(c.name) for c in cols)]
    lines += [",".join(_csv(v) for v in r) for r in rows + more]
    return "\n".join(lines) + "\n"


def _csv(v: str) -> str:
    return '"' + v.replace('"', '""') + '"' if any(ch in v for ch in ',"\n') else v


def _dp_job(draw: st.DrawFn, cols: tuple[Column, ...], args: list[str], files: list[tuple[str, str]]) -> Draw:
    eps = draw(st.sampled_from([1e-4, 0.01, 0.5, 1, 4, 50]))
    delta = draw(st.sampled_from([1e-12, 1e-9, 1e-6, 0.1, 0.9]))
    spec = f"dp:epsilon={eps},delta={delta}"
    names = [c.name for c in cols]
    select = draw(st.sampled_from(["", "auto", "rules", "mst", "aim", "given"]))
    if select:
        spec += f",select={select}"
    if select == "aim" and draw(st.booleans()):
        spec += f",rounds={draw(st.sampled_from([1, len(cols) + 1, 2 * len(cols) + 2]))}"
    if select == "given" and draw(st.integers(0, 5)) > 0:
        chosen = draw(st.lists(st.sampled_from(names), min_size=1, max_size=2, unique=True))
        spec += ",marginals=" + "+".join(chosen)
    args += ["--mechanism", spec]
    if select in ("", "auto", "rules") and draw(st.booleans()):
        rhs = draw(st.sampled_from(names))
        others = [a for a in names if a != rhs]
        if others:
            args += ["--rule", f"{q(draw(st.sampled_from(others)))} -> {q(rhs)}"]
    for i, col in enumerate(cols):
        if rare(draw, 15):
            continue  # a column without a declared domain: refused, naming it
        present = sorted({v for v in col.values if v != ""})
        if col.numeric and draw(st.booleans()):
            lo, hi = min(map(int, present)), max(map(int, present))
            args += ["--domain", f"{col.name}={lo}..{hi + draw(st.sampled_from([0, 0, 10]))}"]
        else:
            extra = draw(st.sampled_from([[], ["extra"]]))
            files.append((f"d{i}.txt", "\n".join(present + extra) + "\n"))
            args += ["--domain", f"{col.name}={{dir}}/d{i}.txt"]
    args += ["--others", "insensitive"] if rare(draw, 4) else []
    return Draw(tuple(cols), tuple(args), tuple(files), None, "dp")


# ---------------------------------------------------------------------------- outcomes


@dataclass
class Outcome:
    """What one draw ended in."""

    code: int
    stderr: str
    problems: list[str]
    check_code: int | None = None
    kind: str = ""


def run_draw(drawn: Draw, folder: Path) -> Outcome:
    """Publish the draw through the command line in this process, then check what was written."""
    from click.testing import CliRunner

    from versapub.cli.main import cli

    if folder.exists():
        shutil.rmtree(folder)
    argv = drawn.write(folder)
    out = folder / "rel"
    r = CliRunner().invoke(cli, ["publish", *argv, "--out", str(out)])
    code = r.exit_code if r.exception is None or isinstance(r.exception, SystemExit) else 99
    stderr = r.stderr + (f"\nexception: {r.exception!r}" if code == 99 else "")
    problems = []
    if code not in (0, 2, 6):
        problems.append(f"exit {code}")
    if "Traceback" in stderr or "internal error" in stderr:
        problems.append("a traceback or an internal error")
    if code == 2:
        problems += _refusal_problems(stderr, out)
    check_code = None
    if code in (0, 6):
        check_code, found = _checked(out, drawn.k)
        problems += found
        problems += reread(out, drawn)
        problems += _queried(out, drawn)
    kind = _kinds(out) if out.exists() else ""
    return Outcome(code, stderr, problems, check_code, kind)


def _refusal_problems(stderr: str, out: Path) -> list[str]:
    problems = []
    if out.exists() and any(out.iterdir()):
        problems.append("a refusal left files behind")
    text = [line for line in stderr.splitlines() if line.strip() and not line.startswith("[")]
    if not text or not any(line.startswith("error:") for line in text):
        problems.append("a refusal without an 'error:' paragraph")
    return problems


def _checked(out: Path, k: int | None) -> tuple[int, list[str]]:
    from click.testing import CliRunner

    from versapub.cli.main import cli

    problems = []
    r = CliRunner().invoke(cli, ["check", str(out)])
    if r.exit_code not in (0, 6):
        problems.append(f"check exits {r.exit_code}: {_first_failure(r.stdout + r.stderr)}")
    if k is not None:
        rk = CliRunner().invoke(cli, ["check", str(out), "--k", str(k)])
        if rk.exit_code not in (0, 6):
            problems.append(f"check --k {k} exits {rk.exit_code}: {_first_failure(rk.stdout + rk.stderr)}")
    return r.exit_code, problems


def _queried(out: Path, drawn: Draw) -> list[str]:
    """A query with a range, an OR and a NOT over the release's columns answers (exit 0) or
    says in one paragraph why it cannot (exit 2): never an internal error."""
    from click.testing import CliRunner

    from versapub.cli.main import cli

    m = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    attrs = [str(a) for a in m.get("attributes", [])][:3]
    if not attrs:
        return []
    values = {c.name: sorted({v for v in c.values}) for c in drawn.columns}
    parts = []
    for i, a in enumerate(attrs):
        vals = values.get(a) or [""]
        lo, hi = vals[0], vals[len(vals) // 2]
        quoted = '"' + a.replace('"', '""') + '"'
        lit = [v.replace("'", "''") for v in (lo, hi)]
        parts.append(f"{quoted} BETWEEN '{lit[0]}' AND '{lit[1]}'" if i == 0 else f"NOT {quoted} = '{lit[0]}'")
    text = parts[0] + (" OR " + " AND ".join(parts[1:]) if len(parts) > 1 else "")
    r = CliRunner().invoke(cli, ["query", str(out), text])
    if r.exit_code not in (0, 2) or "Traceback" in r.stderr or "internal error" in r.stderr:
        return [f"query {text!r} exits {r.exit_code}: {r.stderr.strip()[-300:]}"]
    return []


def _first_failure(text: str) -> str:
    for line in text.splitlines():
        if "FAIL" in line or "error" in line.lower():
            return line.strip()[:300]
    return text.strip()[-300:]


def _kinds(out: Path) -> str:
    try:
        m = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return ""
    return ",".join(sorted({t.get("kind", "?") for t in m.get("tables", [])}))


# --------------------------------------------------------------------------- re-reading


def reread(out: Path, drawn: Draw) -> list[str]:
    """An independent re-reading of a written release's files (written here, from
    ``docs/release-format.md``, sharing nothing with versapub): every listed file reads,
    every count is a positive whole number (any whole number in a ``noisy`` table), no row
    repeats, every count table of records sums to the manifest's ``n_records``, records
    published plus records removed are the records read, and with ``--k`` every table's
    combination of published non-sensitive values holds at least ``k`` records."""
    problems: list[str] = []
    m = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    n = m["n_records"]
    sensitive = {r["rhs"] if isinstance(r, dict) else str(r).split("->")[-1].strip() for r in m.get("rules", [])}
    for t in m["tables"]:
        kind = t["kind"]
        for role, fname in t["files"].items():
            rows = _read_rows(out / fname)
            if rows is None:
                problems.append(f"{fname} does not read")
                continue
            header, body = rows
            if "count" not in header:
                continue
            ci = header.index("count")
            counts = []
            for row in body:
                try:
                    c = float(row[ci])
                except ValueError:
                    problems.append(f"{fname}: count {row[ci]!r} is not a number")
                    break
                counts.append(c)
            if kind not in ("noisy", "fitted") and any(c <= 0 or c != int(c) for c in counts):
                problems.append(f"{fname}: a count that is not a positive whole number")
            keys = [tuple(r[:ci] + r[ci + 1 :]) for r in body]
            if len(set(keys)) != len(keys):
                problems.append(f"{fname}: a row repeats")
            if kind in ("plain", "generalized", "anatomy", "sa-groups") and role != "sets":
                total = sum(counts)
                # multi-SA publishing may withhold a suppressed group's sensitive values (its ST sums to less)
                if abs(total - n) > 1e-6 and not (role == "st" and total < n):
                    problems.append(f"{fname}: counts sum to {total:g}, the manifest says {n} records")
            if (drawn.k is not None and kind in ("plain", "generalized")) or (drawn.k and role == "qit"):
                problems += _floor(fname, header, body, ci, sensitive, drawn.k, m)
    removed = (m.get("removed") or {}).get("records", 0) if isinstance(m.get("removed"), dict) else 0
    read = m.get("input", {}).get("rows")
    if read is not None and m.get("mechanism") is None and n + removed != read:
        problems.append(f"{n} records published and {removed} removed, of {read} read")
    return problems


def _floor(
    fname: str,
    header: list[str],
    body: list[list[str]],
    ci: int,
    sensitive: set[str],
    k: int,
    manifest: dict,
) -> list[str]:
    """Every cell of the release's key variables (the manifest's ``job.keys``; else every
    published non-sensitive column but ``job.keys_excluded``) holds ``k`` records; with local
    suppression (``suppressed``) an empty value matches any value, counted record against
    record here."""
    job = manifest.get("job") if isinstance(manifest.get("job"), dict) else {}
    named = job.get("keys")
    left_out = set(job.get("keys_excluded") or []) if named is None else set()  # treated: keys only when named
    keep = [
        i
        for i, h in enumerate(header)
        if i != ci and h not in sensitive and h != "group_id" and (named is None or h in named) and h not in left_out
    ]
    if not keep:
        return []
    cells: dict[tuple[str, ...], float] = defaultdict(float)
    for row in body:
        cells[tuple(row[i] for i in keep)] += float(row[ci])
    if isinstance(manifest.get("suppressed"), dict):
        combos = list(cells)
        sizes = {
            c: sum(v for d, v in cells.items() if all(x == y or x == "" or y == "" for x, y in zip(c, d, strict=True)))
            for c in combos
        }
        small = [c for c in combos if sizes[c] < k]
    else:
        small = [c for c, v in cells.items() if v < k]
    if small:
        return [f"{fname}: {len(small)} cell(s) of {[header[i] for i in keep]} below k = {k}, e.g. {small[0]}"]
    return []


def _read_rows(path: Path) -> tuple[list[str], list[list[str]]] | None:
    try:
        if path.suffix == ".parquet":
            import pyarrow.parquet as pq

            tab = pq.read_table(path)
            cols = [[("" if v is None else str(v)) for v in tab.column(i).to_pylist()] for i in range(tab.num_columns)]
            return list(tab.column_names), [list(r) for r in zip(*cols, strict=True)]
        with path.open(newline="", encoding="utf-8") as f:
            rows = list(csv.reader(f))
        return rows[0], rows[1:]
    except (OSError, ValueError, IndexError):
        return None


def is_finite(x: float) -> bool:
    return math.isfinite(x)
