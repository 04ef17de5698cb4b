"""The adversary who computes, with the original (issue 45, 64): records drawn from the
release as an adversary reads it, and the three attacks data-protection authorities ask for
(Article 29 Working Party, opinion 05/2014) — inference of each rule's protected attribute
against what its left-hand side alone tells, singling out and linkability per table
(anonymeter's attacks, re-implemented on numpy) — with Wilson intervals."""
