"""The release value: the published tables and their description (format versapub-release/1)."""

from versapub.release.value import FORMAT, InputInfo, PublishedTable, Release

__all__ = ["FORMAT", "InputInfo", "PublishedTable", "Release"]
