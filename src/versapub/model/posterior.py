"""The release model's own posterior ``max P(S = s | Q = q)`` per rule (the publisher's side).

``check`` never reads it: the verifier computes the posterior from the written files with
its own estimate (:mod:`versapub.verify.attacks.estimate`); tests compare the two.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from versapub.errors import ReleaseError
from versapub.model.maxent import ReleaseModel
from versapub.model.sparse import group_sum
from versapub.privacy.rules import Rule

#: The relative tolerance of ``<=`` against the limit.
RELATIVE = 1e-9


def _given(lhs: tuple[str, ...], q: tuple[str, ...]) -> str:
    if all(v == "*" for v in q):
        return f"any {', '.join(lhs)}"
    return ", ".join(f"{a} = {v}" for a, v in zip(lhs, q, strict=True))


def posterior_check(model: ReleaseModel, rules: list[Rule], g: Any) -> list[dict[str, Any]]:
    """Per rule: the largest ``P(S = s | Q = q)`` over Q-combinations with positive model
    probability, against ``1/l``.

    When ``S`` is published in one table only and that table is an Anatomy table with ``S``
    as a sensitive attribute, ``S`` depends on every other attribute only through the
    record's latent group: ``P(s | q) = Σ_g P(g | q) P(s | g) <= max_g P(s | g)`` whatever
    ``q`` and whatever the other tables; that bound (exact when a group is alone) is used
    instead of the exact maximum, which would need every (q, s) pair.  (When the tables are
    disjoint and ``q`` has nothing in that table, ``P(s | q) = P(s)`` exactly.)  Otherwise
    the maximum is computed exactly from the model's marginal.
    """
    out = []
    tree = model.tree
    disjoint = tree is not None and tree.disjoint
    for r in rules:
        attrs: tuple[str, ...] = (*r.lhs, r.rhs)
        method = "exact"
        worst, s = 0.0, ""
        q: tuple[str, ...] = ()
        try:
            holders = [f for f in model.factors if r.rhs in f.attrs] if tree is not None else []
            home = holders[0] if len(holders) == 1 else None
            q_in = tuple(a for a in r.lhs if home is not None and a in home.attrs)
            wanted = home is not None and (bool(q_in) or not disjoint)
            bound = home.group_bound(r.rhs, model.cards) if home is not None and wanted else None
            if bound is not None:
                worst, method = bound[0], "group bound"
                q, s = ("*",) * len(r.lhs), str(model.domains[r.rhs][bound[1]])
            else:
                home = home if disjoint else None  # linked tables: the model's marginal
                keys = q_in if home is not None else r.lhs
                m = home.weighted({}, [], (*keys, r.rhs)) if home is not None else model.marginal(attrs)
                cols = dict(zip(m.attrs, m.codes, strict=True))
                denom = (
                    group_sum(keys, cols, model.cards, m.values).lookup(cols)
                    if keys
                    else np.full(len(m.values), m.total)
                )
                ratio = np.divide(m.values, denom, out=np.zeros_like(m.values), where=denom > 0)
                if len(ratio):
                    i = int(np.argmax(ratio))
                    worst = float(ratio[i])
                    q = tuple(str(model.domains[a][cols[a][i]]) if a in cols else "*" for a in r.lhs)
                    s = str(model.domains[r.rhs][cols[r.rhs][i]])
        except ReleaseError as exc:
            out.append({"rule": r.to_json(), "ok": True, "skipped": str(exc), "message": f"'{r}': skipped ({exc})"})
            continue
        limit = g.posterior_limit()
        ok = bool(worst <= limit + RELATIVE * abs(limit))
        rel = "<=" if ok else ">"
        what = "bound on max" if method == "group bound" else "max"
        out.append(
            {
                "rule": r.to_json(),
                "ok": ok,
                "max_posterior": worst,
                "method": method,
                "bound": limit,
                "q": list(q),
                "s": s,
                "bounded": limit < 1,
                "message": f"'{r}': {what} P({r.rhs} = {s} | {_given(r.lhs, q)}) = {worst:.4f} {rel} {limit:.4f}",
            }
        )
    return out
