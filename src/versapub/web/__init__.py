"""``versapub serve``: a local web interface over :mod:`versapub.workflow` and
:mod:`versapub.inspect` (no publishing or checking logic of its own; docs/web.md)."""
