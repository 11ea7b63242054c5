"""The base class of every generated model."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class WireModel(BaseModel):
    """A model whose dumps use wire names (``_meta``, ``inputSchema``) by default.

    Unknown keys are kept (every MCP object is open), Python field names and wire aliases
    are both accepted on input, and unset optional fields are omitted from dumps.
    """

    model_config = ConfigDict(serialize_by_alias=True, validate_by_name=True, validate_by_alias=True)
