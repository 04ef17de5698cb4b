"""The release as files: the independent verification of a written release from its files
alone (sums, QIT/ST sizes, every record in a group, one reading as a collection) and the
files against the digests the manifest records."""
