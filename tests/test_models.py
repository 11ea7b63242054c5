"""Model quality: exact per revision, open objects, strict ids, opaque strings, discriminators."""

from __future__ import annotations

import ast
import json
import re
from typing import Any

import pytest
from pydantic import BaseModel, TypeAdapter, ValidationError

from tests.conftest import GENERATED, VERSIONS

RENAMED = {"Annotated": "AnnotatedModel"}
PACKAGES = {v: "v" + v.replace("-", "_") for v in VERSIONS}


def models(version: str) -> Any:
    import importlib

    return importlib.import_module(f"mcpgen.{PACKAGES[version]}.models")


def call_tool_request(version: str, **params: Any) -> dict[str, Any]:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "t", **params}}
    if version == "2026-07-28":
        message["params"]["_meta"] = {
            "io.modelcontextprotocol/protocolVersion": version,
            "io.modelcontextprotocol/clientCapabilities": {},
        }
    return message


def request_type(version: str) -> Any:
    """The type that validates a whole request message of this revision."""
    m = models(version)
    return m.CallToolRequest if version >= "2025-11-25" else m.JSONRPCRequest


@pytest.mark.parametrize("version", VERSIONS)
def test_no_numbered_class_names(version: str) -> None:
    package = GENERATED / "mcpgen" / PACKAGES[version]
    source = "\n".join(p.read_text() for p in sorted((package / "_models").glob("*.py")))
    names = [n.name for n in ast.walk(ast.parse(source)) if isinstance(n, ast.ClassDef)]
    names += re.findall(r'^(\w+) = TypeAliasType\("', source, re.M)
    assert names, version
    numbered = [n for n in names if re.search(r"[A-Za-z]\d+$", n)]
    assert numbered == []


@pytest.mark.parametrize("version", VERSIONS)
def test_unknown_keys_survive_a_round_trip(version: str) -> None:
    m = models(version)
    tool = {
        "name": "t",
        "inputSchema": {"type": "object", "properties": {"a": {"type": "number"}}, "x-vendor": [1, None]},
        "com.example/extension": {"k": 1},
    }
    if version != "2024-11-05":
        tool["annotations"] = {"readOnlyHint": True, "com.example/hint": "x"}
    if version >= "2025-06-18":
        tool["_meta"] = {"traceparent": "00-ab-cd-01", "com.example/k": 1}
    parsed = m.Tool.model_validate_json(json.dumps(tool))
    assert json.loads(parsed.model_dump_json()) == tool


def test_request_meta_keeps_traceparent_and_vendor_keys() -> None:
    m = models("2026-07-28")
    message = call_tool_request("2026-07-28", arguments={"x": 1.5, "n": None})
    message["params"]["_meta"] |= {"traceparent": "00-1-2-01", "com.example/trace": {"a": [1, 2.5]}}
    parsed = m.CallToolRequest.model_validate_json(json.dumps(message))
    assert parsed.params.meta.protocol_version == "2026-07-28"
    assert json.loads(parsed.model_dump_json()) == message


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("bad_id", [True, 1.0, None, {"a": 1}, [1]])
def test_ids_are_strictly_str_or_int(version: str, bad_id: object) -> None:
    adapter: TypeAdapter[Any] = TypeAdapter(models(version).RequestId)
    assert adapter.validate_json("1") == 1
    assert adapter.validate_json('"1"') == "1"
    with pytest.raises(ValidationError):
        adapter.validate_json(json.dumps(bad_id))
    message = call_tool_request(version)
    message["id"] = bad_id
    with pytest.raises(ValidationError):
        request_type(version).model_validate_json(json.dumps(message))


@pytest.mark.parametrize("version", VERSIONS)
def test_progress_tokens_are_strict(version: str) -> None:
    adapter: TypeAdapter[Any] = TypeAdapter(models(version).ProgressToken)
    for bad in ("true", "2.0", "null"):
        with pytest.raises(ValidationError):
            adapter.validate_json(bad)


@pytest.mark.parametrize("version", VERSIONS)
def test_base64_and_uris_stay_opaque_strings(version: str) -> None:
    m = models(version)
    image = {"type": "image", "data": "aGVsbG8", "mimeType": "image/png"}  # unpadded, not UTF-8 checked
    assert json.loads(m.ImageContent.model_validate_json(json.dumps(image)).model_dump_json()) == image
    for uri in ("HTTPS://Example.COM", "relative/path.txt", "file:///a b"):
        blob = {"uri": uri, "blob": "/9j/4AAQ"}
        assert json.loads(m.BlobResourceContents.model_validate_json(json.dumps(blob)).model_dump_json()) == blob


@pytest.mark.parametrize("version", VERSIONS)
def test_integers_stay_integers(version: str) -> None:
    m = models(version)
    params = {"progressToken": "p", "progress": 50, "total": 100}
    note = {"method": "notifications/progress", "params": params}
    if version >= "2025-11-25":
        note["jsonrpc"] = "2.0"
    dumped = m.ProgressNotification.model_validate_json(json.dumps(note)).model_dump_json()
    assert '"progress":50,' in dumped and '"total":100' in dumped
    floats = m.ProgressNotification.model_validate_json(json.dumps(note).replace("50", "50.5")).model_dump_json()
    assert '"progress":50.5' in floats


@pytest.mark.parametrize("version", VERSIONS)
def test_dumping_a_model_built_in_python_keeps_jsonrpc_and_method(version: str) -> None:
    m = models(version)
    if version >= "2025-11-25":
        meta = {}
        if version == "2026-07-28":
            meta = {"meta": {"protocol_version": version, "client_capabilities": m.ClientCapabilities()}}
        request = m.CallToolRequest(id=1, params=m.CallToolRequestParams(name="t", **meta))
        dumped = request.model_dump(mode="json")
        assert dumped["jsonrpc"] == "2.0" and dumped["method"] == "tools/call" and dumped["id"] == 1
    else:
        request = m.CallToolRequest(params=m.CallToolRequestParams(name="t"))
        assert request.model_dump(mode="json") == {"method": "tools/call", "params": {"name": "t"}}
    assert "arguments" not in json.dumps(request.model_dump(mode="json"))  # unset optionals are omitted


@pytest.mark.parametrize("version", VERSIONS)
def test_request_and_notification_unions_are_discriminated(version: str) -> None:
    m = models(version)
    adapter: TypeAdapter[Any] = TypeAdapter(m.ClientRequest)
    message = call_tool_request(version)
    if version < "2025-11-25":
        del message["jsonrpc"], message["id"]
    assert type(adapter.validate_json(json.dumps(message))).__name__ == "CallToolRequest"
    message["method"] = "tools/unknown"
    with pytest.raises(ValidationError) as info:
        adapter.validate_json(json.dumps(message))
    assert [e["type"] for e in info.value.errors()] == ["union_tag_invalid"]
    block: TypeAdapter[Any] = TypeAdapter(m.ContentBlock if hasattr(m, "ContentBlock") else m.PromptMessage)
    if hasattr(m, "ContentBlock"):
        with pytest.raises(ValidationError) as info:
            block.validate_json('{"type": "video", "data": "x"}')
        assert [e["type"] for e in info.value.errors()] == ["union_tag_invalid"]


def test_each_revision_is_validated_by_its_own_schema() -> None:
    audio = {"type": "audio", "data": "AAAA", "mimeType": "audio/wav"}
    result = {"content": [audio]}
    with pytest.raises(ValidationError):
        models("2024-11-05").CallToolResult.model_validate_json(json.dumps(result))  # no audio before 2025-03-26
    assert models("2025-03-26").CallToolResult.model_validate_json(json.dumps(result))
    link = {"type": "resource_link", "uri": "file:///a", "name": "a"}
    with pytest.raises(ValidationError):
        models("2025-03-26").CallToolResult.model_validate_json(json.dumps({"content": [link]}))
    assert models("2025-06-18").CallToolResult.model_validate_json(json.dumps({"content": [link]}))
    # 2026 results require resultType; legacy ones do not know it (and keep it as an extra key).
    with pytest.raises(ValidationError):
        models("2026-07-28").CallToolResult.model_validate_json(json.dumps({"content": []}))
    assert models("2025-11-25").CallToolResult.model_validate_json(json.dumps({"content": []}))


def test_json_values_accept_floats_and_null_after_the_patch() -> None:
    m = models("2026-07-28")
    caps = {"experimental": {"feature": {"ratio": 0.5, "off": None, "list": [1.5, None, {"x": 2}]}}}
    assert json.loads(m.ClientCapabilities.model_validate_json(json.dumps(caps)).model_dump_json()) == caps
    accept = {"action": "accept", "content": {"n": 3.5, "b": True, "s": "x", "tags": ["a"]}}
    assert json.loads(m.ElicitResult.model_validate_json(json.dumps(accept)).model_dump_json()) == accept


@pytest.mark.parametrize("version", VERSIONS)
def test_every_definition_has_a_model(version: str) -> None:
    schema = json.loads((GENERATED.parent / "schema" / version / "schema.json").read_text())
    defs = schema.get("$defs") or schema["definitions"]
    m = models(version)
    for name in defs:
        # `Annotated` (2024-11-05) would shadow typing.Annotated; datamodel-code-generator renames it.
        value = getattr(m, RENAMED.get(name, name))
        assert (isinstance(value, type) and issubclass(value, BaseModel)) or type(value).__name__ == "TypeAliasType"
