"""The legacy-era codec (2024-11-05 to 2025-11-25): session state lives in ``initialize``."""

from __future__ import annotations

from typing import Any

from .codec import Codec, JSONObject
from .method_table import MethodSpec


class LegacyCodec(Codec):
    """2024-11-05 to 2025-11-25: ``initialize`` fixes version and capabilities for the session,
    so messages carry neither; results have no ``resultType``; 2025-03-26 accepts batches.
    """

    era = "legacy"

    def result_type(self, spec: MethodSpec, raw: JSONObject) -> tuple[Any, JSONObject]:
        if spec.task_result is not None and "task" in raw:  # 2025-11-25 task-augmented request
            return spec.task_result, raw
        return spec.result, raw
