"""A conformance-suite client driver built only on the generated client.

Run by ``@modelcontextprotocol/conformance`` as ``python examples/conformance_client.py
SERVER_URL``; the suite names the scenario in ``MCP_CONFORMANCE_SCENARIO``, the protocol
version in ``MCP_CONFORMANCE_PROTOCOL_VERSION`` and scenario data (such as the tool calls to
make) in ``MCP_CONFORMANCE_CONTEXT``. The driver connects (probing the era), lists and calls
tools, reads resources and gets prompts, answering elicitations with the schema's defaults.

Every connection carries ``OAuth``, which acts only when the server answers 401 or 403. The
suite's authorization servers approve at once, so the user's browser is played by an HTTP
client that follows the authorization endpoint's redirect to the driver's loopback listener.
Scenarios that hand over credentials (pre-registration, client credentials) get them from
the context; the others identify the client with a Client ID Metadata Document URL where the
server accepts one, else by dynamic registration.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "generated"))

import httpx
from mcpgen import VERSIONS, connect
from mcpgen._runtime.client import AuthorizationError, BaseClient, ServerError
from mcpgen._runtime.client.auth import IdentityAssertion, LoopbackRedirect, OAuth, Registration
from mcpgen._runtime.codec import dump

CLIENT_METADATA_URL = "https://conformance-test.local/client-metadata.json"  # the suite's CIMD client id


async def elicit(params: Any) -> dict[str, Any]:
    """Accept, filling each field with its schema default (SEP-1034)."""
    schema = dump(getattr(params, "requested_schema", None)) or {}
    content = {
        name: prop["default"]
        for name, prop in (schema.get("properties") or {}).items()
        if isinstance(prop, dict) and "default" in prop
    }
    return {"action": "accept", "content": content}


async def sample(params: Any) -> dict[str, Any]:
    return {"role": "assistant", "content": {"type": "text", "text": "sampled"}, "model": "conformance-driver"}


async def roots(params: Any) -> dict[str, Any]:
    return {"roots": [{"uri": "file:///tmp", "name": "tmp"}]}


def sample_arguments(schema: Any) -> dict[str, Any]:
    """Plausible arguments for a tool's input schema (required properties only)."""
    schema = dump(schema) or {}
    props = schema.get("properties") or {}
    values = {"number": 1, "integer": 1, "boolean": True, "string": "test", "array": [], "object": {}}
    return {
        name: props[name].get("default", values.get(props[name].get("type"), "test"))
        for name in schema.get("required") or []
        if isinstance(props.get(name), dict)
    }


async def exercise(client: BaseClient, context: dict[str, Any]) -> None:
    tools = await client.request("tools/list", {})
    listed = {t.name: t for t in tools.tools}
    calls = context.get("toolCalls")
    echo = next((n for n, t in listed.items() if "schema" in (dump(t.input_schema).get("properties") or {})), None)
    if calls is None and echo is not None:  # round-trip another tool's inputSchema verbatim
        calls = [
            {"name": echo, "arguments": {"schema": dump(tool.input_schema)}}
            for name, tool in listed.items()
            if name != echo
        ]
    if calls is None:
        calls = [{"name": name, "arguments": sample_arguments(tool.input_schema)} for name, tool in listed.items()]
    for call in calls:
        if call["name"] not in listed:
            continue  # a tool the client rejected (e.g. invalid x-mcp-header annotations)
        try:
            await client.request("tools/call", {"name": call["name"], "arguments": call.get("arguments", {})})
        except ServerError as error:
            print(f"tools/call {call['name']}: {error}", file=sys.stderr)
    capabilities = client.capabilities
    if _has(capabilities, "resources"):
        resources = await client.request("resources/list", {})
        for resource in resources.resources[:1]:
            await client.request("resources/read", {"uri": resource.uri})
    if _has(capabilities, "prompts"):
        prompts = await client.request("prompts/list", {})
        for prompt in prompts.prompts[:1]:
            arguments = {a["name"]: "test" for a in dump(prompt).get("arguments") or []}
            await client.request("prompts/get", {"name": prompt.name, "arguments": arguments})


async def browse(url: str) -> None:
    """The user's browser: load the authorization URL and follow its redirects (to the driver's listener)."""
    async with httpx.AsyncClient(follow_redirects=True, timeout=20.0) as browser:
        await browser.get(url)


def authorization(scenario: str, context: dict[str, Any]) -> OAuth:
    """OAuth for this scenario: the grant and credentials the context hands over, if any."""
    if scenario.startswith("auth/client-credentials-"):
        key = context.get("private_key_pem")
        return OAuth.client_credentials(context["client_id"], context.get("client_secret"), private_key=key)
    if "valid_jwt" in context:  # a workload identity token
        return OAuth.jwt_bearer(context["valid_jwt"], context["client_id"])
    if "idp_id_token" in context:  # an enterprise IdP's ID token, exchanged per authorization
        exchange = IdentityAssertion(context["idp_token_endpoint"], context["idp_id_token"], context["idp_client_id"])
        return OAuth.jwt_bearer(exchange, context["client_id"], context["client_secret"])
    registration = None
    if "client_id" in context and "client_secret" in context:
        registration = Registration(context["client_id"], context["client_secret"])
    return OAuth(
        LoopbackRedirect(open_browser=browse),
        client_name="mcpgen-conformance",
        client_metadata_url=CLIENT_METADATA_URL,
        registration=registration,
    )


def _has(capabilities: Any, name: str) -> bool:
    data = dump(capabilities)
    return isinstance(data, dict) and name in data


async def main(url: str) -> int:
    version = os.environ.get("MCP_CONFORMANCE_PROTOCOL_VERSION")
    scenario = os.environ.get("MCP_CONFORMANCE_SCENARIO", "")
    context = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
    if version in VERSIONS and VERSIONS[version] == "legacy":
        versions = [v for v in VERSIONS if VERSIONS[v] == "legacy" and v <= version]
    else:
        versions = list(VERSIONS)
    client = await connect(
        url,
        versions=versions,
        client_info={"name": "mcpgen-conformance", "version": "0.1.0"},
        handlers={"elicitation/create": elicit, "sampling/createMessage": sample, "roots/list": roots},
        timeout=20.0,
        probe_timeout=10.0,
        cache=None,
        auth=authorization(scenario, context),
    )
    async with client:
        await exercise(client, context)
    return 0


if __name__ == "__main__":
    try:
        sys.exit(asyncio.run(main(sys.argv[1])))
    except AuthorizationError as error:  # the scenarios that must fail end here: one line, not a traceback
        print(f"authorization failed: {error}", file=sys.stderr)
        sys.exit(1)
