"""Frontend: the schema lock, loading with asserting patches, and the pre-pass."""
