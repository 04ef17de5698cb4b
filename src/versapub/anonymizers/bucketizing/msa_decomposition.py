"""The decomposition of Ye, Liu, Lv, Feng (DASFAA 2009) for several sensitive attributes:
Algorithm 1 on encoded columns, and the ``msa-decomposition`` anonymizer that publishes its
SA-groups (Definition 1) as an ``sa-groups`` table (:mod:`versapub.kinds.sa_groups`).

* **Largest-l group forming** (lines 2–11): while at least ``l_pri`` buckets of the primary
  sensitive attribute are non-empty, sort them by size (descending, re-sorted every
  iteration), take a random tuple of the largest bucket, then from each of the next
  ``l_pri - 1`` buckets the tuple minimizing the diversity penalty ``P(t, G)``
  (Definition 5).
* **Residual tuples** (lines 12–15): each joins the SA-group minimizing ``P(t, G)``.
* **Noise** (lines 16–22): a group whose set ``G.S^i`` of a non-primary attribute has fewer
  than ``l_i`` values gets values from the linkable sensitive values ``LSV(S^i, G)``
  (Definition 4: the ``S^i`` values that co-occur in ``T^S`` with ``G``'s primary values)
  until it has ``l_i``.

Buckets are kept as counts of *profiles* (a tuple's combination of non-primary values): a
tuple is chosen by choosing its profile (penalties computed for all profiles of a bucket at
once) and then one of that profile's records at random; the loop runs once per group,
never per record pair (the paper's bound is ``O(n^2)``).  Choices the paper leaves open
(``docs/choices.md``): ties between equally large buckets go to the lower value code; ties
between profiles of equal penalty to the profile with more remaining tuples (then the
lower code); a residual tuple's ties to the group created first; noise values are drawn
at random (seeded) among the linkable values the group lacks.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import numpy.typing as npt

from versapub.anonymizers.base import AnonymizedTable, PublishRequest, as_rules
from versapub.data import bitsets
from versapub.data.counts import count_table
from versapub.data.groupby import group_rows
from versapub.data.table import EncodedTable
from versapub.errors import ConfigError, InfeasibleError
from versapub.plugins import Param, validated
from versapub.privacy.guarantees.base import Guarantee
from versapub.privacy.guarantees.diversity import DistinctLDiversity
from versapub.privacy.rules import Rule

IntArray = npt.NDArray[np.int64]
BoolMatrix = npt.NDArray[np.bool_]


def l_per(codes: npt.NDArray[np.integer]) -> int:
    """Corollary 2: the largest permissible diversity parameter, ``floor(n / n_1)``."""
    counts = np.bincount(np.asarray(codes, dtype=np.int64))
    return int(len(codes) // int(counts.max())) if len(codes) else 0


@dataclass(frozen=True)
class Decomposed:
    """Algorithm 1's result: every record's SA-group, each group's value set per
    non-primary attribute (``sets[i][g, v]``: value ``v`` of attribute ``i`` is in group
    ``g``'s set, noise included), how many records were residual, and how many noise
    values were added per attribute."""

    group: IntArray
    n_groups: int
    sets: tuple[BoolMatrix, ...]
    residual: int
    noise: tuple[int, ...]


def penalty(
    profile_values: Sequence[IntArray],
    group_sets: Sequence[npt.NDArray[np.bool_]],
    sizes: Sequence[int],
    ls: Sequence[int],
) -> IntArray:
    """Definition 5 for many candidate tuples at once: ``Σ_i (l_i - |G.S^i|)`` over the
    non-primary attributes whose set in ``G`` already holds the tuple's value and is still
    short of ``l_i``.  ``profile_values[i]``: each candidate's value of attribute ``i``;
    ``group_sets[i]``: the group's set as a boolean vector; ``sizes[i] = |G.S^i|``."""
    n = len(profile_values[0]) if profile_values else 0
    out = np.zeros(n, dtype=np.int64)
    if not profile_values:
        return out
    for vals, member, size, l_i in zip(profile_values, group_sets, sizes, ls, strict=True):
        if size < l_i:
            out += np.where(member[vals], l_i - size, 0)
    return out


def decompose(
    primary: npt.NDArray[np.integer],
    others: Sequence[npt.NDArray[np.integer]],
    cards: Sequence[int],
    l_pri: int,
    ls: Sequence[int],
    rng: np.random.Generator,
    counts_only: bool = True,
) -> Decomposed:
    """Algorithm 1 (see the module docstring) on the primary attribute's codes, the other
    sensitive attributes' codes (``cards``: their domain sizes) and their ``l_i``.  With no
    other attribute every penalty is 0 and a bucket is one profile, so the groups follow
    from the bucket counts alone (``counts_only``: that schedule, then records by position;
    the same groups as the general loop, which a test checks)."""
    n = len(primary)
    pri = np.asarray(primary, dtype=np.int64)
    oth = [np.asarray(o, dtype=np.int64) for o in others]
    if l_pri < 2:
        raise InfeasibleError(f"The primary sensitive attribute's l must be at least 2, got {l_pri}.")
    # Profiles: a record's primary value and its combination of the other values.
    prof = group_rows([pri, *oth], [int(pri.max()) + 1 if n else 1, *cards], with_inverse=True)
    assert prof.inverse is not None
    p_pri = prof.keys[0].astype(np.int64)
    p_vals = [k.astype(np.int64) for k in prof.keys[1:]]
    remaining = prof.counts.astype(np.int64).copy()
    # Records of each profile in a random order; a profile's next record is taken from its end.
    order = rng.permutation(n)
    order = order[np.argsort(prof.inverse[order], kind="stable")]
    start = np.r_[0, np.cumsum(prof.counts)].astype(np.int64)
    n_buckets = int(p_pri.max()) + 1 if n else 0
    bucket_size = np.bincount(p_pri, weights=remaining, minlength=n_buckets).astype(np.int64)
    by_bucket = [np.flatnonzero(p_pri == b) for b in range(n_buckets)]  # profiles of each bucket
    bucket_vals = [[v[prof_b] for v in p_vals] for prof_b in by_bucket]  # their other values, once
    big = np.iinfo(np.int64).max

    group = np.full(n, -1, dtype=np.int64)
    most = n // l_pri + 1  # groups never exceed n / l_pri: each set row is written in place
    stacked = [np.zeros((most, c), dtype=bool) for c in cards]  # groups x values, per other attribute

    n_groups = 0
    if counts_only and not oth:  # the schedule on counts (pure integers), then records by position
        n_groups = _on_counts(bucket_size, l_pri, rng, p_pri, (group, order, start, remaining))
    sizes = bucket_size.tolist()  # Python-side counters: the loop runs once per group
    live = sum(1 for c in sizes if c > 0)
    py_vals = [v.tolist() for v in p_vals]
    py_pri = p_pri.tolist()
    py_start = start.tolist()
    sizes_np = np.asarray(sizes, dtype=np.int64)
    bucket_codes = np.arange(n_buckets, dtype=np.int64)
    while (not counts_only or oth) and live >= l_pri:
        g = n_groups
        n_groups += 1
        # the l_pri largest buckets, size desc then code (one unique key per bucket, in numpy)
        rank_key = bucket_codes - sizes_np * n_buckets
        top = np.argpartition(rank_key, l_pri - 1)[:l_pri] if l_pri < n_buckets else bucket_codes
        ranked = top[np.argsort(rank_key[top])].tolist()
        # The first tuple: uniform among the largest bucket's records (a profile by its count).
        first = by_bucket[ranked[0]]
        cum = np.cumsum(remaining[first])
        chosen = int(first[int(np.searchsorted(cum, rng.random() * cum[-1], side="right"))])
        member = [m[g] for m in stacked]  # views of the group's rows
        size = [0] * len(cards)  # |G.S^i|, kept as values join
        for b in ranked:
            if b != ranked[0]:
                cand = by_bucket[b]
                rem = remaining[cand]
                # Lowest penalty (Definition 5, over the attributes whose set is still short
                # of l_i), then most remaining tuples, then lowest profile (argmin keeps the
                # first); exhausted profiles never.
                score = -rem
                for vals, m, sz, l_i in zip(bucket_vals[b], member, size, ls, strict=True):
                    if sz < l_i:
                        score = score + m[vals] * ((l_i - sz) * (n + 1))
                score[rem == 0] = big
                chosen = int(cand[score.argmin()])
            for i, vals in enumerate(py_vals):  # the tuple's values join the group's sets
                v = vals[chosen]
                if not member[i][v]:
                    member[i][v] = True
                    size[i] += 1
            left_p = int(remaining[chosen]) - 1
            remaining[chosen] = left_p
            b_of = py_pri[chosen]
            sizes[b_of] -= 1
            sizes_np[b_of] -= 1
            live -= sizes[b_of] == 0
            group[order[py_start[chosen] + left_p]] = g

    left = np.flatnonzero(group < 0)
    if n_groups == 0:
        raise InfeasibleError(
            f"Fewer than l = {l_pri} distinct values of the primary sensitive attribute: no SA-group can be formed."
        )
    stacked = [m[:n_groups] for m in stacked]
    _place_left(left, group, stacked, ls, oth, n_groups)
    noise = _add_noise(group, pri, oth, stacked, cards, ls, rng)
    return Decomposed(group, n_groups, tuple(stacked), len(left), tuple(noise))


def _place_left(
    left: npt.NDArray[np.intp],
    group: npt.NDArray[np.int64],
    stacked: Sequence[npt.NDArray[np.bool_]],
    ls: Sequence[int],
    oth: Sequence[npt.NDArray[np.int64]],
    n_groups: int,
) -> None:
    """The records left once fewer than ``l_pri`` buckets remain (at most ``l_pri - 1`` when
    ``l_pri <= l_per``, Corollary 1), each to the group it penalizes least (ties: the group
    created first); their values join the group's sets."""
    for r in left:
        sizes_g = [m.sum(axis=1) for m in stacked]
        pen = np.zeros(n_groups, dtype=np.int64)
        for m, size, l_i, col in zip(stacked, sizes_g, ls, oth, strict=True):
            pen += np.where((size < l_i) & m[:, col[r]], l_i - size, 0)
        g = int(np.argmin(pen))
        group[r] = g
        for m, col in zip(stacked, oth, strict=True):
            m[g, col[r]] = True


def _on_counts(
    bucket_size: npt.NDArray[np.int64],
    l_pri: int,
    rng: np.random.Generator,
    p_pri: npt.NDArray[np.int64],
    records: tuple[npt.NDArray[np.int64], npt.NDArray[np.int64], npt.NDArray[np.int64], npt.NDArray[np.int64]],
) -> int:
    """One sensitive attribute: Algorithm 1's schedule on the bucket counts alone (each
    group takes one record of each of the ``l_pri`` largest buckets), then the records by
    position — a profile's records from the end of its shuffled run, as the general loop
    takes them, with the same draws.  ``records`` is (group, order, start, remaining),
    updated; returns the number of groups."""
    group, order, start, remaining = records
    n_buckets = len(bucket_size)
    sizes = bucket_size.tolist()
    takes: list[list[int]] = [[] for _ in range(n_buckets)]
    n_groups = 0
    while sum(1 for c in sizes if c > 0) >= l_pri:
        for b in sorted(range(n_buckets), key=lambda b: (-sizes[b], b))[:l_pri]:
            sizes[b] -= 1
            takes[b].append(n_groups)
        n_groups += 1
    rng.random(n_groups)  # the general loop's draws for the first tuples (one profile per bucket)
    prof_of = np.full(n_buckets, -1, dtype=np.int64)
    prof_of[p_pri] = np.arange(len(p_pri))
    for b, gs in enumerate(takes):
        if gs:
            p = int(prof_of[b])
            pos = start[p] + remaining[p] - 1 - np.arange(len(gs))
            group[order[pos]] = gs
            remaining[p] -= len(gs)
    return n_groups


def _add_noise(
    group: npt.NDArray[np.int64],
    pri: npt.NDArray[np.int64],
    oth: Sequence[npt.NDArray[np.int64]],
    stacked: Sequence[npt.NDArray[np.bool_]],
    cards: Sequence[int],
    ls: Sequence[int],
    rng: np.random.Generator,
) -> list[int]:
    """Noise (§5.2): each group's set of a non-primary attribute short of ``l_i`` filled with
    values linkable through T^S (co-occurring with the group's primary values), drawn
    uniformly; returns the noise values added per attribute."""
    n_groups, n_buckets = len(stacked[0]) if stacked else int(group.max()) + 1, int(pri.max()) + 1
    noise = []
    primary_in = np.zeros((n_groups, n_buckets), dtype=bool)
    primary_in[group, pri] = True
    for m, col, card, l_i in zip(stacked, oth, cards, ls, strict=True):
        co = np.zeros((n_buckets, card), dtype=bool)
        co[pri, col] = True  # T^S: which S^i values occur with each primary value
        lsv = (primary_in.astype(np.int64) @ co.astype(np.int64)) > 0
        added = 0
        for short in np.flatnonzero(m.sum(axis=1) < l_i):  # a loop over short groups, not records
            missing = np.flatnonzero(lsv[short] & ~m[short])
            need = int(l_i) - int(m[short].sum())
            if len(missing) < need:
                raise InfeasibleError(
                    f"SA-group {int(short)} can reach only {int(m[short].sum()) + len(missing)} of the l = {l_i} "
                    "values its set needs from the values linkable through the sensitive table; lower l."
                )
            m[short, rng.choice(missing, size=need, replace=False)] = True
            added += need
        noise.append(added)
    return noise


def diversity_of(rule: Rule, g: Guarantee) -> int:
    """``l_i`` of a rule's guarantee: Definition 3 counts distinct values of a group's set,
    so only distinct l-diversity states it (a set says nothing about frequencies)."""
    if not isinstance(g, DistinctLDiversity):
        raise ConfigError(
            f"The msa-decomposition anonymizer provides (l1, ..., ld)-diversity (Ye et al., Definition 3: every "
            f"SA-group's set of values of each sensitive attribute holds at least l_i distinct values); rule '{rule}' "
            f"asks for {g.name}. Give each sensitive attribute distinct-l-diversity (--sensitive {rule.rhs}:L), or "
            "leave l out for its largest permissible value l_per."
        )
    return int(g.l)


class MSADecomposition:
    """Publishes one table with several sensitive attributes by Algorithm 1 (the module
    docstring): SA-groups of records whose QI values stay exact, each group's *set* of
    values per sensitive attribute, and the sensitive table ``T^S``.

    Each sensitive attribute ``S^i`` takes ``l_i`` from its rule's distinct l-diversity
    (default: ``l_per(S^i)``, Corollary 2).  ``primary`` names the primary sensitive
    attribute (Definition 2; default: the one with the largest ``l_i``, §5.1's suggestion,
    ties to the first rule).  An ``l_i`` above ``l_per(S^i)`` is refused unless
    ``above_l_per`` is set (the paper: beyond it residual tuples "grow dramatically"); the
    summary then reports the residual tuples and noise it cost."""

    #: Every attribute but the sensitive ones published exactly (PublishesExactly).
    exact_quasi_identifiers = True
    name = "msa-decomposition"
    #: Why it does not run on the Dask backend (the refusal's reason).
    in_memory_only = "its decomposition tests candidate groupings of the records in memory"
    max_rules = 1_000_000
    #: One table holding every sensitive attribute: the multi-SA schema.
    default_decomposition = "multi-sa"

    parameter_constraints: ClassVar[dict[str, Param]] = {
        "primary": Param("text", optional=True),
        "above_l_per": Param("flag"),
    }
    glossary: ClassVar[str] = (
        "The MSA decomposition (Ye, Liu, Wang, Lv & Feng, DASFAA 2009, Algorithm 1): records are put into SA-groups; "
        "quasi-identifiers are published exactly with the group, each group's set of values per sensitive attribute "
        "(at least l_i values, noise included) separately, and the sensitive table T^S as it is."
    )

    def __init__(self, primary: str | None = None, above_l_per: bool = False) -> None:
        got = validated(self.name, self.parameter_constraints, {"primary": primary, "above_l_per": above_l_per})
        self.primary = got["primary"]
        self.above_l_per = got["above_l_per"]

    def params(self) -> dict[str, Any]:
        return {"primary": self.primary, "above_l_per": self.above_l_per}

    def default_guarantees(self, table: EncodedTable, rules: Sequence[Rule]) -> dict[Rule, Guarantee]:
        """Each rule's guarantee when the user gave none: distinct l-diversity with
        ``l_per`` of its sensitive attribute (Corollary 2; the paper's default)."""
        out: dict[Rule, Guarantee] = {}
        for r in rules:
            lp = l_per(table.codes(r.rhs))
            if lp < 2:
                counts = np.bincount(table.codes(r.rhs))
                top = table.column(r.rhs).values[int(np.argmax(counts))]
                raise InfeasibleError(
                    f"Sensitive attribute {r.rhs!r} cannot be protected by decomposition: its value {top!r} holds "
                    f"{int(counts.max()):,} of {table.n_rows:,} records, so l_per = floor(n / n1) = {lp} "
                    "(Corollary 2) is below 2; no SA-group can hide it. Leave it out, or ask for an explicit l "
                    f"above l_per ({r.rhs}:2) with above_l_per = true and pay for it in noise."
                )
            out[r] = DistinctLDiversity(lp)
        return out

    #: Each rule under its own guarantee (:class:`~versapub.anonymizers.base.PerRuleAnonymizer`).
    guarantees_per_rule = True
    #: T^S, the sensitive attributes' joint, is published exactly
    #: (:class:`~versapub.anonymizers.base.PublishesSensitiveJoint`).
    publishes_sensitive_joint = True

    def publish(self, request: PublishRequest) -> AnonymizedTable:
        """Algorithm 1 with ``l_i`` from each rule's own guarantee (``request.per_rule()[i]``
        is the guarantee of ``request.rules[i]``; one guarantee: the same ``l`` for all)."""
        table, rng, say = request.table, request.rng, request.say
        rules = as_rules(request.rules, self.name, self.max_rules)
        guarantees = request.per_rule()
        sens = [r.rhs for r in rules]
        qi = [a for a in table.names if a not in sens]
        ls = [diversity_of(r, g) for r, g in zip(rules, guarantees, strict=True)]
        lpers = [l_per(table.codes(a)) for a in sens]
        for a, l_i, lp in zip(sens, ls, lpers, strict=True):
            if l_i > lp and not self.above_l_per:
                raise InfeasibleError(
                    f"l = {l_i} for sensitive attribute {a!r} is above its largest permissible value l_per = {lp} "
                    "(Ye et al., Corollary 2: floor(n / n1), the share of its most frequent value, which anyone "
                    "learns from the published sensitive table). Beyond it residual tuples and noise grow "
                    "dramatically. "
                    + (f"Use l <= {lp}" if lp >= 2 else "No l >= 2 is permissible; leave the attribute out")
                    + ", or allow it explicitly (anonymizer parameter above_l_per = true, "
                    "--anonymizer msa-decomposition:above_l_per=true) and read the noise it costs in the summary."
                )
        if self.primary is not None and self.primary not in sens:
            raise ConfigError(
                f"The primary sensitive attribute {self.primary!r} is not one of the sensitive attributes "
                f"{', '.join(sens)}."
            )
        chosen_by = "given" if self.primary is not None else "the largest l, as Ye et al. §5.1 suggest"
        pri = self.primary if self.primary is not None else sens[int(np.argmax(ls))]
        k = sens.index(pri)
        others = [a for a in sens if a != pri]
        o_ls = [l for i, l in enumerate(ls) if i != k]
        say(f"msa-decomposition: primary {pri} (l = {ls[k]}), {len(others)} other sensitive attribute(s)")
        dec = decompose(
            table.codes(pri), [table.codes(a) for a in others], [table.cardinality(a) for a in others], ls[k], o_ls, rng
        )
        perm = rng.permutation(dec.n_groups).astype(np.int64)
        group = perm[dec.group]
        qit = count_table(table, qi, [("group_id", group, dec.n_groups)])
        ts = count_table(table, sens)
        # Each group's set per attribute; the primary's is its records' values (no noise).
        member = {pri: np.zeros((dec.n_groups, table.cardinality(pri)), dtype=bool)}
        member[pri][group, table.codes(pri)] = True
        for a, m in zip(others, dec.sets, strict=True):
            member[a] = m[np.argsort(perm)]  # rows by published group id
        rows: list[tuple[str, ...]] = []
        for g_id, attr, value in _set_rows(member, {a: table.column(a).values for a in sens}):
            rows.append((str(g_id), attr, value))
        sizes = np.bincount(group, minlength=dec.n_groups)
        size_values, size_counts = np.unique(sizes, return_counts=True)
        set_sizes = {a: member[a].sum(axis=1) for a in sens}
        stats: dict[str, Any] = {
            "groups": dec.n_groups,
            "group_sizes": {int(v): int(c) for v, c in zip(size_values, size_counts, strict=True)},
            "primary": pri,
            "primary_chosen_by": chosen_by,
            "residual_records": dec.residual,
            "noise_values": {a: int(x) for a, x in zip(others, dec.noise, strict=True)},
            "noise_total": int(sum(dec.noise)),
            "diversity": {
                a: {"l": l_i, "l_per": lp, "smallest_set": int(set_sizes[a].min())}
                for a, l_i, lp in zip(sens, ls, lpers, strict=True)
            },
            "rows_qit": qit.n_rows,
            "rows_ts": ts.n_rows,
            "achieved": min(int(set_sizes[a].min()) for a in sens),
            "kl_uniform_over_sets": uniform_kl(
                table, qi, group, [table.codes(a) for a in sens], [member[a] for a in sens]
            ),
            "log_prod_l": float(np.log(np.prod(np.asarray(ls, dtype=np.float64)))),
        }
        stats["notes"] = [
            f"primary sensitive attribute: {pri} ({chosen_by})",
            "; ".join(f"{a}: l = {d['l']}, l_per = {d['l_per']}" for a, d in stats["diversity"].items()),
            f"{dec.n_groups:,} SA-groups, {dec.residual} residual record(s) merged, noise values added: "
            + (", ".join(f"{a} {x:,}" for a, x in stats["noise_values"].items()) or "none (one sensitive attribute)"),
            "the paper's measure (each sensitive value uniform over its group's set): "
            f"KL {stats['kl_uniform_over_sets']:.4f} against log(prod l_i) = {stats['log_prod_l']:.4f}",
        ]
        say(
            f"msa-decomposition: {dec.n_groups:,} SA-groups, {dec.residual} residual record(s), "
            f"{int(sum(dec.noise)):,} noise value(s)"
        )
        return AnonymizedTable(
            table.names,
            "sa-groups",
            rules[0],
            {"qit": qit, "ts": ts},
            stats,
            also_enforces=tuple(rules[1:]),
            listed={"sets": tuple(rows)},
        )


def uniform_kl(
    table: EncodedTable,
    qi: Sequence[str],
    group: IntArray,
    values: Sequence[npt.NDArray[np.integer]],
    member: Sequence[BoolMatrix],
) -> float:
    """KL-divergence from the table to the paper's reading of the release (§6, Figure 7):
    a record with QI values ``q`` lies in group ``g`` with probability ``N(q, g) / n``, and
    its value of each ``S^i`` is uniform over ``G.S^i``, independently."""
    n = table.n_rows
    q = group_rows([table.codes(a) for a in qi], [table.cardinality(a) for a in qi], with_inverse=True) if qi else None
    qid = q.inverse if q is not None and q.inverse is not None else np.zeros(n, dtype=np.int64)
    n_q = int(qid.max()) + 1 if n else 0
    n_g = member[0].shape[0]
    # QIT rows (q, g) with counts, sorted by q.
    qg = group_rows([qid, group], [n_q, n_g])
    rq, rg, rc = qg.keys[0].astype(np.int64), qg.keys[1].astype(np.int64), qg.counts.astype(np.float64)
    # Distinct records (q, s) with counts.
    cells = group_rows([qid, *values], [n_q, *(m.shape[1] for m in member)])
    cq = cells.keys[0].astype(np.int64)
    cv = [k.astype(np.int64) for k in cells.keys[1:]]
    truth = cells.counts.astype(np.float64) / n
    sizes = [m.sum(axis=1).astype(np.float64) for m in member]
    first = np.searchsorted(rq, cq, side="left")
    many = np.searchsorted(rq, cq, side="right") - first
    if bitsets.fits([n_q, *(m.shape[1] for m in member)], n_g) and bitsets.pays(len(cq), n_g, int(many.sum())):
        # (cell, group) pairs whose group holds the cell's q and every one of its sensitive
        # values (data.bitsets), instead of every group of the cell's q
        sets = [bitsets.bitset(rq, rg, n_q, n_g)]
        for m in member:
            g_of, v_of = np.nonzero(m)
            sets.append(bitsets.bitset(v_of.astype(np.int64), g_of.astype(np.int64), m.shape[1], n_g))
        cell, g = bitsets.matching_pairs(sets, [cq, *cv])
        key = rq * n_g + rg
        order = np.argsort(key, kind="stable")
        at = order[np.searchsorted(key[order], cq[cell] * n_g + g)]
        p = rc[at] / n
        for size in sizes:
            p = p / size[g]
        model = np.bincount(cell, weights=p, minlength=len(cq))
        return float((truth * np.log(truth / model)).sum())
    cell_of = np.repeat(np.arange(len(cq)), many)
    row = np.repeat(first - np.cumsum(np.r_[0, many[:-1]]), many) + np.arange(int(many.sum()))
    g = rg[row]
    p = rc[row] / n
    for m, v, size in zip(member, cv, sizes, strict=True):
        p = p * np.where(m[g, v[cell_of]], 1.0 / size[g], 0.0)
    model = np.bincount(cell_of, weights=p, minlength=len(cq))
    return float((truth * np.log(truth / model)).sum())


def _set_rows(
    member: Mapping[str, BoolMatrix], values: Mapping[str, npt.NDArray[np.object_]]
) -> list[tuple[int, str, str]]:
    """The ``sets`` listing: ``(group_id, attribute, value)`` in value order (group id
    numerically, then attribute and value as text)."""
    out: list[tuple[int, str, str]] = []
    for a, m in member.items():
        g, v = np.nonzero(m)
        text = values[a].astype(str)[v]
        out += zip(g.tolist(), [a] * len(g), text.tolist(), strict=True)
    out.sort()
    return out
