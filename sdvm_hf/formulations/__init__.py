"""Formulations: how an item of a benchmark becomes the requests a model is scored on."""
