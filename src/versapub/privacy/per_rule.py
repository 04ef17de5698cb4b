"""Per-rule guarantees: each rule of a release may carry its own guarantee
(``{"rule": "zip, sex -> diagnosis", "guarantee": "t-closeness", "t": 0.2}`` in a
configuration, ``"zip, sex -> diagnosis | t-closeness:t=0.2"`` on the command line); a
rule without one has the release's.

After reduction (Theorem 3.1) a kept rule also answers for the rules it implies, so its
guarantee is the conjunction (:class:`~versapub.privacy.guarantees.combined.AllOf`) of its own and
theirs; a table enforcing several rules satisfies the conjunction of theirs.  A rule given
several times (its left-hand side in any order) is one rule whose guarantee is the
conjunction of every occurrence's: its own where the occurrence carries one, the release's
where it does not.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from versapub.errors import RuleError
from versapub.privacy.guarantees.base import Guarantee
from versapub.privacy.guarantees.combined import all_of
from versapub.privacy.guarantees.guarantee import make_guarantee, parse_guarantee
from versapub.privacy.rules import Reduction, Rule, parse_rule

RuleItem = str | Rule | Mapping[str, Any]
#: The guarantees rules carry, one entry per occurrence of the rule; ``None``: an occurrence
#: without a guarantee of its own (it asks for the release's).  Rules that no occurrence
#: gives a guarantee of their own are absent.
Own = dict[Rule, list[Guarantee | None]]


def split(items: Iterable[RuleItem]) -> tuple[list[Rule], Own]:
    """The rules (in the order given, repeats included), and the guarantees some of them carry."""
    rules: list[Rule] = []
    own: Own = {}
    plain: dict[Rule, int] = {}  # occurrences without a guarantee of their own
    for item in items:
        spec: dict[str, Any] | None = None
        if isinstance(item, Rule):
            rule = item
        elif isinstance(item, str):
            text, bar, g_text = item.rpartition(" | ") if " | " in item else (item, "", "")
            rule = parse_rule(text)
            if bar:
                spec = parse_guarantee(g_text.strip())
        elif isinstance(item, Mapping):
            if not isinstance(item.get("rule"), str):
                raise RuleError(f'A rule given as a table needs rule = "a, b -> c"; got {dict(item)!r}.')
            rule = parse_rule(item["rule"])
            rest = {k: v for k, v in item.items() if k not in ("rule", "anonymizer")}
            if rest:
                if not isinstance(rest.get("guarantee"), str):
                    raise RuleError(
                        f"Rule '{rule}': its own guarantee needs guarantee = 'NAME' (e.g. 't-closeness') "
                        f"besides its parameters; got {rest!r}."
                    )
                spec = {"name": rest.pop("guarantee"), **rest}
        else:
            raise RuleError(f"A rule must be text like 'a, b -> c' or a table with 'rule'; got {item!r}.")
        rules.append(rule)
        if spec is None:
            plain[rule] = plain.get(rule, 0) + 1
            if rule in own:
                own[rule].append(None)
            continue
        try:
            g = make_guarantee(spec)
        except RuleError as exc:
            raise RuleError(f"Rule '{rule}': {exc}") from None
        own.setdefault(rule, [None] * plain.get(rule, 0)).append(g)
    return rules, own


def with_defaults(own: Mapping[Rule, Sequence[Guarantee | None]], defaults: Mapping[Rule, Guarantee]) -> Own:
    """``own`` with ``defaults[rule]`` standing for the occurrences of ``rule`` that carry no
    guarantee (an anonymizer's default guarantee for such rules)."""
    out: Own = {r: list(gs) for r, gs in own.items()}
    for r, d in defaults.items():
        out[r] = [d if g is None else g for g in out.get(r, [None])]
    return out


def needs_default(rule: Rule, own: Mapping[Rule, Sequence[Guarantee | None]]) -> bool:
    """Whether some occurrence of ``rule`` asks for the release's guarantee."""
    return None in own.get(rule, [None])


def effective(
    reduction: Reduction, own: Mapping[Rule, Sequence[Guarantee | None]], default: Guarantee
) -> dict[Rule, Guarantee]:
    """Each kept rule's guarantee: the conjunction of every occurrence's (its own, or the
    release's) and those of the rules it implies (dropped in its favour; Theorem 3.1)."""

    def of(rule: Rule) -> list[Guarantee]:
        return [default if g is None else g for g in own.get(rule, [None])]

    out = {r: of(r) for r in reduction.rules}
    for d in reduction.dropped:
        if d.implied_by in out and d.rule != d.implied_by:  # a repeat is already in of(rule)
            out[d.implied_by] += of(d.rule)
    return {r: all_of(gs) for r, gs in out.items()}


def for_rules(rules: Sequence[Rule], per_rule: Mapping[Rule, Guarantee]) -> Guarantee:
    """The guarantee a table enforcing ``rules`` must meet: for every sensitive attribute it
    protects, the guarantees of *every* kept rule on that attribute (all-of).  A sensitive
    column is anonymized once, in the table that protects it, and every rule on it is judged
    against that table — by the verifier group by group and by the posterior across the
    release — so the table answers for them all; a rule a decomposition derived (GD's
    guardian of part of a left-hand side) likewise (docs/choices.md)."""
    out: list[Guarantee] = []
    for s in dict.fromkeys(r.rhs for r in rules):
        out += [g for k, g in per_rule.items() if k.rhs == s]
    if not out:
        raise RuleError(f"No guarantee is known for rule '{rules[0]}'.")
    return all_of(out)


def anonymizers(items: Iterable[RuleItem]) -> dict[Rule, str]:
    """The anonymizers some rules ask for (``{rule = "...", anonymizer = "mondrian"}``):
    the table enforcing the rule is anonymized by it instead of the release's."""
    out: dict[Rule, str] = {}
    for item in items:
        if isinstance(item, Mapping) and "anonymizer" in item:
            rule = parse_rule(str(item.get("rule")))
            name = item["anonymizer"]
            if not isinstance(name, str) or not name.strip():
                raise RuleError(f"Rule '{rule}': anonymizer must be a name such as 'mondrian', got {name!r}.")
            if out.get(rule, name) != name:
                raise RuleError(f"Rule '{rule}' asks for two anonymizers, {out[rule]!r} and {name!r}.")
            out[rule] = name
    return out


def effective_anonymizers(reduction: Reduction, asked: Mapping[Rule, str]) -> dict[Rule, str]:
    """Each kept rule's own anonymizer: its own, or that of a rule it implies; two different
    ones for one table are refused, naming both."""
    out = {r: asked[r] for r in reduction.rules if r in asked}
    for d in reduction.dropped:
        if d.rule in asked and d.implied_by in reduction.rules:
            mine = out.setdefault(d.implied_by, asked[d.rule])
            if mine != asked[d.rule]:
                raise RuleError(
                    f"Rule '{d.rule}' asks for the {asked[d.rule]} anonymizer, but it is implied by '{d.implied_by}', "
                    f"whose table uses {mine}; give both the same anonymizer."
                )
    return out
