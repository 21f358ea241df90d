"""The Arrow layer: the sample table schema, its validation, Parquet and the lazy sequence."""
