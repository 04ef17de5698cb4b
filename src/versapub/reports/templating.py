"""The report's templates (``reports/templates/``, Jinja2 with autoescaping) and the helpers
they call: a term with its glossary meaning as a tooltip, a pass/fail badge."""

from __future__ import annotations

import html
from functools import cache
from typing import Any

from jinja2 import Environment, PackageLoader, select_autoescape
from markupsafe import Markup

#: The report's own terms, in plain words; the plug-ins (guarantees, anonymizers,
#: decompositions, table kinds) describe themselves (:func:`glossary`).
TERMS = {
    "prosecutor model": "Re-identification risk when the attacker knows the person's record is in the data (El "
    "Emam): a record's risk is 1 / the number of records sharing its published cell; the highest risk is 1 / the "
    "smallest cell, the average the number of cells / the number of records.",
    "rule": "A requirement 'Q -> S': someone who knows a person's values of the attributes Q and reads every "
    "published table must not be able to tell the person's value of S (beyond the guarantee).",
    "sensitive attribute": "The attribute on the right of a rule (S): the value to be kept uncertain.",
    "left-hand side": "The attributes on the left of a rule (Q): what an adversary may already know about a person.",
    "published table": "One of the tables the release consists of; each holds some of the attributes.",
    "group": "A bucket of records that share one list of sensitive values (an Anatomy table).",
    "achieved": "The guarantee the weakest group reaches (its size divided by its most frequent sensitive value); "
    "at least l when the table satisfies l-diversity.",
    "reachable": "S is reachable from Q when published tables sharing attributes form a chain from Q to S, so "
    "that joining them could link what an adversary knows to S.",
    "guardian table": "The one published table through which every chain from a rule's left-hand side reaches "
    "its sensitive attribute, and which publishes S only in diverse groups: it guards the rule.",
    "GNF": "Guardian Normal Form: every rule either cannot reach its sensitive attribute or has a guardian "
    "table. A release in GNF satisfies every rule (Jin et al., KDD 2010).",
    "enforced rule": "The rule a table's anonymization checks itself: the part of a user's rule the table can "
    "see (its attributes), which is enough to make the user's rule hold.",
    "KL-divergence": "How far the best estimate of the original table that the release allows (the maximum-"
    "entropy estimate) is from the original, in nats: 0 means the release loses nothing.",
    "exp(-KL)": "The geometric mean, over the original's records, of how likely the estimate makes a record "
    "relative to the original (1 = as likely as in the original).",
    "maximum-entropy estimate": "The table that agrees with everything published and assumes nothing else; "
    "queries and utility are answered from it.",
    "relative error": "|estimate - true count| / true count of a COUNT query, over a random workload.",
    "identity risk": "The share of records that are the only one with their non-sensitive values in a table: "
    "anyone who knows those values of a person can find the person's row.",
    "equivalence class": "The records of a generalized table that share every published non-sensitive value; "
    "the guarantee holds inside each class.",
    "discernibility": "The sum over classes (or groups) of their size squared: each record is charged the number "
    "of records it cannot be told apart from. Lower is more precise.",
    "excessive protection": "Per equivalence class, min over k of phi(k) - F(k): how far its k most frequent "
    "sensitive values stay below what functional (tau, lambda)-diversity allows (0: exactly at the bound; larger: "
    "more protection, and less utility, than asked for).",
    "information": "um: per record and attribute, 1 - log(leaves covered) / log(domain size), averaged: 1 when "
    "values are published exactly, 0 when fully generalized (the functional-diversity paper's measure).",
    "background knowledge": "An adversary who also knows some of a person's other sensitive values intersects "
    "the person's group set with the values that occur with them in the sensitive table.",
    "generalization loss": "Per record and non-sensitive attribute, (values covered - 1) / (domain size - 1), "
    "averaged: 0 when values are published exactly, 1 when fully generalized.",
}


@cache
def glossary() -> dict[str, str]:
    """Every term the report uses, in plain words (shown in the glossary and as tooltips):
    its own :data:`TERMS` and each registered plug-in's and table kind's own description."""
    from versapub.anonymizers import ANONYMIZERS
    from versapub.decompositions import DECOMPOSITIONS
    from versapub.kinds import KINDS
    from versapub.privacy.guarantees.guarantee import GUARANTEES

    out = dict(TERMS)
    for registry in (KINDS, GUARANTEES, ANONYMIZERS, DECOMPOSITIONS):
        for name, plugin in registry.items():
            text = getattr(plugin, "glossary", "")  # the registries hold classes and kind objects
            if text:
                out.setdefault(name, text)
    return out


def term(word: str, shown: str | None = None) -> Markup:
    """``word`` with its glossary meaning as a tooltip."""
    terms = glossary()
    tip = terms.get(word) or terms.get(word.lower(), "")
    text = html.escape(shown or word)
    return Markup(f'<span class="term" title="{html.escape(tip)}">{text}</span>' if tip else text)


def badge(ok: bool | None, text: str | None = None) -> Markup:
    """A PASS/FAIL (or ``text``) badge; ``None``: skipped."""
    cls = "skip" if ok is None else ("pass" if ok else "fail")
    return Markup(f'<span class="badge {cls}">{html.escape(text or ("PASS" if ok else "FAIL"))}</span>')


@cache
def environment() -> Environment:
    env = Environment(
        loader=PackageLoader("versapub.reports", "templates"),
        autoescape=select_autoescape(["html", "j2"]),
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=False,
    )
    env.globals.update(term=term, badge=badge)
    return env


def render(template: str, **context: Any) -> str:
    """A template of ``reports/templates/`` rendered with ``context`` (text escaped; pass
    markup as :class:`markupsafe.Markup`)."""
    return environment().get_template(template).render(**context)
