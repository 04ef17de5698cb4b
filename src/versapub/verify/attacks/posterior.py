"""The maximum-entropy posterior check of ``check``: the largest ``P(S = s | Q = q)`` a
release allows under its model, or a bound read from its groups' files, against what each
rule's guarantee allows."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import duckdb

from versapub.data.sql import connect, duckdb_source, fresh_alias
from versapub.data.sql import ident as _ident
from versapub.errors import ReleaseError
from versapub.privacy.rules import Rule
from versapub.verify.guarantees.group_checks import le
from versapub.verify.guarantees.thresholds import Thresholds
from versapub.verify.reading.kind_checks import reading
from versapub.verify.reading.manifest import Manifest, manifest_of
from versapub.verify.reading.reading import parse_entry, sensitive_runs


def _given(lhs: tuple[str, ...], q: tuple[str, ...] | list[str]) -> str:
    """The condition of a posterior, readably: ``sex = F, age = 30-39``, or ``any sex, age``
    when the bound holds whatever the values (every value shown as ``*``)."""
    if all(v == "*" for v in q):
        return f"any {', '.join(lhs)}"
    return ", ".join(f"{a} = {v}" for a, v in zip(lhs, q, strict=True))


def _limit_text(head: str, rel: str, limit: float) -> str:
    """A posterior against the guarantee's limit; a guarantee that bounds no probability
    (distinct l-diversity, k-anonymity: limit 1) is said so, the number left for reading."""
    if limit >= 1:
        return (
            f"{head}; the guarantee bounds no probability (it asks for distinct values or records, not for how "
            "likely each is), so this is a number to read, not a check passed"
        )
    return f"{head} {rel} the guarantee's limit {limit:.4f}"


def _holding(manifest: dict[str, Any], s: str) -> list[dict[str, Any]]:
    return [t for t in manifest.get("tables", []) if isinstance(t, dict) and s in t.get("attributes", [])]


def posterior_hint(manifest: dict[str, Any], r: Rule) -> str:
    """After a failed posterior: which tables publish the rule's sensitive attribute, how, and
    what to change (the posterior is taken across every table: a table anonymized for
    another guarantee, or one publishing ``S`` exactly beside what the adversary knows,
    lets it exceed the limit)."""
    parts = []
    for t in _holding(manifest, r.rhs):
        rules = [t.get("enforces"), *(t.get("also_enforces") or [])]
        mine = [x for x in rules if isinstance(x, dict) and x.get("rhs") == r.rhs]
        known = [a for a in t.get("attributes", []) if a != r.rhs]
        if mine:
            parts.append(f"{t['name']} ({t.get('kind')}) protects it for '{', '.join(mine[0]['lhs'])} -> {r.rhs}'")
        else:
            parts.append(
                f"{t['name']} ({t.get('kind')}) publishes it unprotected beside {', '.join(known) or 'nothing'}"
            )
    where = "; ".join(parts) or f"no table lists {r.rhs}"
    return (
        f" — across the release: {where}. The table protecting {r.rhs} must meet this rule's guarantee too: "
        f"publish with it on that table (state the rule's guarantee, or a stronger release guarantee), "
        f"generalize {r.rhs} or remove the unprotected copies, or drop the rule"
    )


def _marginal_posterior(
    con: duckdb.DuckDBPyConnection, directory: Path, entry: Any, t: dict[str, Any], r: Rule, g: Thresholds
) -> dict[str, Any]:
    """``max_s P(S = s)`` from the file of ``S``'s table that holds ``S``: the exact posterior
    when that table shares no attribute with the others and holds no LHS attribute."""
    role = next(role for role, cols in reading(entry.kind).roles(entry).items() if r.rhs in cols)
    src = duckdb_source(directory / entry.files[role])
    s_col = _ident(r.rhs)
    row = con.execute(
        f'SELECT {s_col}, CAST(sum(CAST("count" AS BIGINT)) AS DOUBLE) / '
        f'(SELECT sum(CAST("count" AS BIGINT)) FROM {src}) FROM {src} GROUP BY 1 ORDER BY 2 DESC, 1 LIMIT 1'
    ).fetchone()
    worst, value = (float(row[1]), str(row[0])) if row is not None else (0.0, "")
    limit = g.posterior_limit()
    ok = bool(le(worst, limit))
    q = ["*"] * len(r.lhs)
    return {
        "rule": r.to_json(),
        "ok": ok,
        "max_posterior": worst,
        "method": "exact",
        "bound": limit,
        "q": q,
        "s": value,
        "bounded": limit < 1,
        "message": _limit_text(
            f"'{r}': max P({r.rhs} = {value} | {_given(r.lhs, q)}) = {worst:.4f}", "<=" if ok else ">", limit
        )
        + f" (no published link to {r.rhs})",
    }


def group_bounds(
    directory: Path, rules: list[Rule], g: Thresholds, manifest: Manifest | None = None
) -> dict[Rule, dict[str, Any]]:
    """The posterior bound ``max_g P(s | g)`` (a mixture over groups never exceeds its
    largest part) read from the ST
    file, for rules whose sensitive attribute is published by one table only, as the
    sensitive attribute of an Anatomy table (whether or not that table holds an LHS
    attribute: the bound holds for any condition); and, exactly, ``max_s P(s)`` for rules
    whose ``S`` sits in a table sharing nothing with the others and holding no LHS
    attribute.  When every rule is answered here, the release model is never built."""
    m = manifest_of(directory, manifest)
    tables = list(m["tables"])
    out: dict[Rule, dict[str, Any]] = {}
    per_table: dict[str, tuple[Any, ...] | None] = {}
    with connect() as con:
        for r in rules:
            homes = [t for t in tables if r.rhs in t["attributes"]]
            if len(homes) != 1:
                continue
            t = homes[0]
            entry = parse_entry(t)
            alone = not any(set(t["attributes"]) & set(o["attributes"]) for o in tables if o is not t)
            kind = reading(entry.kind)
            exact = kind.exact_values or r.rhs in kind.sensitive_of(entry)  # S's values as published
            if alone and exact and not any(a in t["attributes"] for a in r.lhs):
                out[r] = _marginal_posterior(con, directory, entry, t, r, g)  # P(s | q) = P(s) exactly
                continue
            grouped = kind.groups(entry)
            if grouped is None or kind.sensitive_of(entry) != (r.rhs,):  # none or several: the model
                continue
            if t["name"] not in per_table:  # one pass over each table, whatever the number of rules
                s_role, group_cols = grouped
                src = duckdb_source(directory / entry.files[s_role])
                s_col = _ident(r.rhs)
                c, n = (_ident(fresh_alias(base, t["attributes"])) for base in ("c", "n"))
                part = ", ".join(_ident(g) for g in group_cols) or "1"
                runs = sensitive_runs(directory, entry, kind, duckdb_source).get(r.rhs)
                if runs is not None:  # generalized sensitive values: the largest induced frequency of a leaf
                    leaf, x = (_ident(fresh_alias(base, t["attributes"])) for base in ("leaf", "x"))
                    # the table's own columns read through d (an attribute may be called pv, f or l)
                    dpart = ", ".join(f"d.{_ident(g)} {_ident(g)}" for g in group_cols) or "1"
                    per_table[t["name"]] = con.execute(
                        f'WITH w AS (SELECT {dpart}, unnest(range(r.f, r.l + 1)) {leaf}, CAST(d."count" AS DOUBLE) / '
                        f"(r.l - r.f + 1) {x} FROM {src} d JOIN ({runs[0]}) r ON d.{s_col} = r.pv), "
                        f"c AS (SELECT {part}, {leaf}, sum({x}) {x} FROM w GROUP BY ALL) "
                        f"SELECT o.leaf, p.{x} FROM (SELECT {leaf}, {x} / sum({x}) OVER (PARTITION BY {part}) {x} "
                        f"FROM c) p JOIN ({runs[1]}) o ON o.position = p.{leaf} ORDER BY 2 DESC, 1 LIMIT 1"
                    ).fetchone()
                else:
                    per_table[t["name"]] = con.execute(
                        f'SELECT {s_col}, CAST({c} AS DOUBLE) / {n} FROM (SELECT {s_col}, sum(CAST("count" AS BIGINT)) '
                        f'OVER (PARTITION BY {part}, {s_col}) {c}, sum(CAST("count" AS BIGINT)) OVER (PARTITION BY '
                        f"{part}) {n} FROM {src}) ORDER BY 2 DESC, 1 LIMIT 1"
                    ).fetchone()
            row = per_table[t["name"]]
            if row is None:
                continue
            worst = float(row[1])
            limit = g.posterior_limit()
            ok = bool(le(worst, limit))
            q = ["*"] * len(r.lhs)
            out[r] = {
                "rule": r.to_json(),
                "ok": ok,
                "max_posterior": worst,
                "method": "group bound",
                "bound": limit,
                "q": q,
                "s": str(row[0]),
                "bounded": limit < 1,
                "message": _limit_text(
                    f"'{r}': bound on max P({r.rhs} = {row[0]} | {_given(r.lhs, q)}) = {worst:.4f}",
                    "<=" if ok else ">",
                    limit,
                ),
            }
    return out


def own_posterior(
    directory: Path,
    manifest: dict[str, Any],
    rules: list[Rule],
    g: Thresholds,
    fits: dict[str, Any] | None = None,
) -> dict[Rule, dict[str, Any]]:
    """The posterior of rules :func:`group_bounds` leaves, from the verifier's own estimate
    (:mod:`versapub.verify.attacks.estimate`): the group bound of the one table publishing ``S``
    apart (read from its groups' counts, or under an sa-groups table's fitted counts), or
    the exact maximum under the dense joint of the tables linked to the rule; a rule it
    cannot estimate is reported as not checked, with the reason (the release then needs
    attention); ``fits``: the sa-groups tables' fitted counts by table, shared between calls
    (rules under several guarantees read the same fit)."""
    from versapub.verify.attacks.estimate import (
        SaGroupsFit,
        Unestimable,
        dense_posterior,
        grouped_bound,
        sa_groups_bound,
        sa_groups_fit,
    )

    out: dict[Rule, dict[str, Any]] = {}
    limit = g.posterior_limit()
    fits = {} if fits is None else fits  # an sa-groups table's fitted N serves every rule it protects
    with connect() as con:
        for r in rules:
            homes = [t for t in manifest.get("tables", []) if r.rhs in t.get("attributes", [])]
            try:
                entry = parse_entry(homes[0]) if len(homes) == 1 else None
                kind = reading(entry.kind) if entry is not None else None
                if entry is not None and kind is not None and r.rhs in kind.sensitive_of(entry):
                    # S published apart in its one table: the groups' bound (counts in a
                    # file, or fitted to value sets and T^S)
                    if kind.groups(entry) is not None:
                        worst, s = grouped_bound(con, directory, entry, r)
                    else:
                        if not isinstance(fits.get(entry.name), SaGroupsFit):
                            fits[entry.name] = sa_groups_fit(con, directory, entry)
                        worst, s = sa_groups_bound(con, directory, entry, r, fits[entry.name])
                    q, method = ("*",) * len(r.lhs), "group bound"
                else:
                    worst, q, s = dense_posterior(con, directory, manifest, r)
                    method = "exact"
            except (Unestimable, ReleaseError) as exc:
                out[r] = {
                    "rule": r.to_json(),
                    "ok": True,
                    "skipped": str(exc),
                    "message": f"'{r}': not checked ({exc})",
                }
                continue
            ok = bool(le(worst, limit))
            what = "bound on max" if method == "group bound" else "max"
            out[r] = {
                "rule": r.to_json(),
                "ok": ok,
                "max_posterior": worst,
                "method": method,
                "bound": limit,
                "q": list(q),
                "s": s,
                "bounded": limit < 1,
                "message": _limit_text(
                    f"'{r}': {what} P({r.rhs} = {s} | {_given(r.lhs, q)}) = {worst:.4f}", "<=" if ok else ">", limit
                ),
            }
    return out
