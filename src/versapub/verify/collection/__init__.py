"""A release read as a collection of published count tables (Kifer & Gehrke, SIGMOD 2006):
k-link and k-combinatorial anonymity of the non-sensitive cells across tables, and maxent
diversity of the collection's maximum-entropy joint (their section 4.1)."""
