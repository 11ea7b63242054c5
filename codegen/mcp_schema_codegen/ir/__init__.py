"""The protocol IR: frozen dataclasses every template reads, built mechanically from a schema."""
