"""The legacy-era codec (2024-11-05 to 2025-11-25): session state lives in ``initialize``."""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from .codec import CACHE_SCOPE, RESULT_TYPE, SERVER_INFO_KEY, TTL_MS, Codec, JSONObject
from .method_table import MethodSpec

# what a modern result carries that no legacy result has
MODERN_RESULT_KEYS = (RESULT_TYPE, TTL_MS, CACHE_SCOPE)


class LegacyCodec(Codec):
    """2024-11-05 to 2025-11-25: ``initialize`` fixes version and capabilities for the session,
    so messages carry neither; results have no ``resultType``; 2025-03-26 accepts batches.
    """

    era = "legacy"

    def result_type(self, spec: MethodSpec, raw: JSONObject) -> tuple[Any, JSONObject]:
        if spec.task_result is not None and "task" in raw:  # 2025-11-25 task-augmented request
            return spec.task_result, raw
        return spec.result, raw

    def decode_result(self, spec: MethodSpec, raw: JSONObject) -> Any:
        """A result with a ``task`` key is the method's own result when it is one (every MCP object
        is open: ``{"content": [], "task": "x"}`` is a ``CallToolResult``), else the task-augmented
        answer, ``CreateTaskResult``. Each method that can be task-augmented requires members its
        ``CreateTaskResult`` lacks (``content``, ``action``, ``model``), so no answer is both."""
        if spec.task_result is not None and "task" in raw:
            try:
                return self.revision.validate(spec.result, raw)
            except ValidationError:
                pass
        return super().decode_result(spec, raw)

    def adopt_result(self, result: JSONObject) -> JSONObject:
        """A modern result in the legacy shape: ``resultType``, ``ttlMs``, ``cacheScope`` and the
        ``serverInfo`` ``_meta`` key dropped (``initialize`` told the client who the server is)."""
        data = {k: v for k, v in result.items() if k not in MODERN_RESULT_KEYS}
        meta = data.get("_meta")
        if isinstance(meta, dict) and SERVER_INFO_KEY in meta:
            meta = {k: v for k, v in meta.items() if k != SERVER_INFO_KEY}
            if meta:
                data["_meta"] = meta
            else:
                del data["_meta"]
        return data
