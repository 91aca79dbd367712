"""The pygls adapter: the only package that imports pygls or lsprotocol."""
