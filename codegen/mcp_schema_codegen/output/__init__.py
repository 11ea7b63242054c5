"""Output: formatting, the atomic swap of a generated tree, and its manifest."""
