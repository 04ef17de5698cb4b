"""I/O: reading inputs, configuration files, and writing releases."""
