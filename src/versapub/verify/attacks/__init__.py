"""The attacks on the published tables: the intersection attack (which protected values stay
possible for a record whose left-hand side an adversary knows; exact by possible worlds on
small releases, scalable by propagation or SQL on large ones), its forms for generalized and
sa-groups tables (Ye et al.'s adversary, DASFAA 2009), and the maximum-entropy posterior
``P(S = s | Q = q)`` each rule's guarantee bounds, from the files' group bounds or the
verifier's own estimate."""
