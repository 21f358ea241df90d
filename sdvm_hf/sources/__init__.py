"""Loaders: Hugging Face splits and local files to typed samples."""
