"""Dataset presets: one module per dataset, listed in :mod:`.registry`."""
