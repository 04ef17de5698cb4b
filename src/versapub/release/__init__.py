"""Release model: the published tables and their description (format versapub-release/1)."""

from versapub.release.model import FORMAT, InputInfo, PublishedTable, Release

__all__ = ["FORMAT", "InputInfo", "PublishedTable", "Release"]
