"""What generalizing anonymizers need to check a guarantee against a population
(delta-presence, k-map with ``--population``; :mod:`versapub.privacy.guarantees.population`): the
research records' and the population's quasi-identifiers encoded over one dictionary per
attribute (the population may hold values the research subset lacks), the research subset
checked to be a subset of the population, and each class's population count."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import numpy as np

from versapub.anonymizers.base import AnonymizedTable
from versapub.anonymizers.generalizing.generalize import IntArray
from versapub.data.groupby import group_rows
from versapub.data.table import CODE_DTYPE, Column, EncodedTable
from versapub.errors import ConfigError
from versapub.privacy.guarantees.base import Histograms
from versapub.privacy.guarantees.population import Population


def joint_table(table: EncodedTable, qi: Sequence[str], population: Population) -> EncodedTable:
    """The quasi-identifiers of the research records (rows ``0 .. n-1``) then of the
    population (rows ``n ..``), each attribute over the union of both dictionaries; a
    one-paragraph :class:`ConfigError` when the population lacks a quasi-identifier or
    holds fewer records of some combination than the research subset."""
    missing = [a for a in qi if a not in population.table.names]
    if missing:
        raise ConfigError(
            f"The population ({population.file}) has no column {missing[0]!r}, a quasi-identifier the release is "
            "checked against it on: give a population with every quasi-identifier."
        )
    cols = []
    for a in qi:
        rc, pc = table.column(a), population.table.column(a)
        r_vals, p_vals = rc.values.astype(str), pc.values.astype(str)
        values = np.unique(np.concatenate([r_vals, p_vals]))
        codes = np.concatenate(
            [np.searchsorted(values, r_vals)[rc.codes], np.searchsorted(values, p_vals)[pc.codes]]
        ).astype(CODE_DTYPE)
        cols.append(Column(a, np.ascontiguousarray(codes), values.astype(object)))
    joint = EncodedTable(tuple(cols), source=population.file)
    _require_subset(joint, qi, table.n_rows, population)
    return joint


def _require_subset(joint: EncodedTable, qi: Sequence[str], n: int, population: Population) -> None:
    """Every combination of quasi-identifier values occurs in the population at least as
    often as among the research records (Nergiz et al.: ``T`` is a subset of ``P``)."""
    if n > population.size:
        raise ConfigError(
            f"The input has {n:,} records, more than the population ({population.file}) has ({population.size:,}): "
            "the input must be the research subset drawn from the population (delta-presence, k-map against a "
            "population); give the population the input's records were drawn from."
        )
    if not qi:
        return
    g = group_rows([joint.codes(a) for a in qi], [joint.cardinality(a) for a in qi], with_inverse=True)
    assert g.inverse is not None
    inv = g.inverse.astype(np.int64)
    r = np.bincount(inv[:n], minlength=len(g.counts))
    p = np.bincount(inv[n:], minlength=len(g.counts))
    bad = np.flatnonzero(r > p)
    if len(bad):
        row = int(np.flatnonzero(inv[:n] == bad[0])[0])
        shown = ", ".join(f"{a} = {joint.column(a).values[joint.codes(a)[row]]!r}" for a in qi)
        raise ConfigError(
            f"The input is not a subset of the population ({population.file}): {int(r[bad[0]])} record(s) have "
            f"{shown} but the population has {int(p[bad[0]])}"
            + (f" (and {len(bad) - 1} more such combination(s))" if len(bad) > 1 else "")
            + "; give the population the input's records were drawn from."
        )


def with_population(h: Histograms, population: IntArray) -> Histograms:
    """``h`` with each group's population count."""
    return Histograms(h.group, h.count, h.n_groups, h.value, population)


def refuse_suppression(anonymizer: str, suppression: float) -> None:
    """Local suppression is not combined with a population model (``docs/choices.md``)."""
    if suppression > 0:
        raise ConfigError(
            f"{anonymizer} cannot combine suppression ({suppression:g}) with a guarantee checked against the "
            "population (delta-presence, k-map with --population): a suppressed record's class covers the whole "
            "population. Use suppression = 0."
        )


def in_table_codes(anon: AnonymizedTable, table: EncodedTable, joint: EncodedTable) -> AnonymizedTable:
    """The generalized table with its quasi-identifiers' codes in the input's dictionaries
    (as every published table's: the release model reads codes below an attribute's
    cardinality as the input's values), not the joint ones it was built over.  A published
    leaf is always an input value (its class holds records); the listings keep the joint
    leaves, the population's included."""
    ct = anon.parts["data"]
    codes, dicts = list(ct.codes), list(ct.dictionaries)
    for j, a in enumerate(ct.names):
        if a not in joint.names:
            continue
        union, own = joint.column(a).values.astype(str), table.column(a).values.astype(str)
        d = dicts[j]
        assert d is not None
        c = np.asarray(codes[j], dtype=np.int64)
        leaf = c < len(union)
        mapped = np.searchsorted(own, union[np.minimum(c, len(union) - 1)])
        codes[j] = np.where(leaf, mapped, c - len(union) + len(own)).astype(c.dtype)
        dicts[j] = np.concatenate([table.column(a).values, d[len(union) :]])
    return replace(anon, parts={"data": replace(ct, codes=tuple(codes), dictionaries=tuple(dicts))})
