"""The base class of every generated model."""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict


class WireModel(BaseModel):
    """A model whose dumps use wire names (``_meta``, ``inputSchema``) by default.

    Unknown keys are kept (every MCP object is open) and unset optional fields are omitted
    from dumps. Validation (``model_validate_json`` and friends) accepts wire names only,
    so a key spelled like a Python field name (``is_error``) stays an unknown key, as on
    the wire; constructing a model in Python accepts both spellings.

    Validators and serializers are built on first use (``defer_build``): a model that only
    appears inside another is never built on its own, and a program pays only for the
    models it validates or dumps.
    """

    model_config = ConfigDict(serialize_by_alias=True, validate_by_name=False, validate_by_alias=True, defer_build=True)
    # the base of the generated models, without fields of its own: the runtime's fast writer
    # (``serializer``) writes a model that extends only this class wherever it sits
    __wire_base__: ClassVar[bool] = True

    def __init__(self, /, **data: Any) -> None:
        self.__pydantic_validator__.validate_python(data, self_instance=self, by_alias=True, by_name=True)

    # Marks this as pydantic's own initialiser, so validation from JSON or dicts does not
    # route through it (that path must stay alias-only).
    __init__.__pydantic_base_init__ = True  # type: ignore[attr-defined]
