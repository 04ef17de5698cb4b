"""Guarantees: the privacy models a table is published under (the ``Guarantee`` protocol,
its registry, the models of ARX and the papers, binding to a table and its population)."""
