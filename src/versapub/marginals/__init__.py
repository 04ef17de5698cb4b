"""Collections of anonymized marginals (Kifer & Gehrke, SIGMOD 2006): which generalized
cross-tabulations of one table may be published together (k-link and k-combinatorial
anonymity, maxent l-diversity), their utility (KL-divergence of the maximum-entropy
estimate), and the search that injects utility into an anonymized table.

>>> from versapub.marginals import Collection, Marginal, Requirement, Space   # doctest: +SKIP
>>> space = Space.of_table(table, "occupation", hierarchies)
>>> coll = Collection(space, (Marginal.parse("race@1, age@2, occupation"), Marginal.parse("age")))
>>> verdict = coll.check(Requirement.build("occupation", 10, {"name": "l-diversity", "l": 3}))
>>> verdict.ok, coll.kl()
"""

from versapub.marginals.collection import Collection, Verdict
from versapub.marginals.search import greedy, stepwise
from versapub.marginals.space import Space
from versapub.marginals.spec import Marginal, Requirement

__all__ = ["Collection", "Marginal", "Requirement", "Space", "Verdict", "greedy", "stepwise"]
