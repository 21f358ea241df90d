"""Converters: the generic mapping and the dataset presets built on it."""
