"""The base of the models ``mcp-codegen tools`` generates for schema-first tools (see ``specs``).

A module of its own: a pydantic model class costs milliseconds to create, and only modules that
declare schema-first tools need it.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class SpecModel(BaseModel):
    """The base of generated argument and output models: strict, unknown keys kept unless the schema
    forbids them, built with Python names, validated and dumped with wire names."""

    model_config = ConfigDict(
        strict=True,
        extra="allow",
        validate_by_name=True,
        validate_by_alias=True,
        serialize_by_alias=True,
        protected_namespaces=(),
    )
