"""Commands: the CLI and what it runs (check, diff, scaffold, config)."""
