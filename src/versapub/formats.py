"""The release format's name, written into every manifest (``docs/release-format.md``).

The independent verifier keeps its own copy on purpose."""

FORMAT = "versapub-release/1"
