"""The package version (one place; the CLI and manifests read it from here)."""

__version__ = "0.1.0"
