"""A program using the generated client, type-checked with ``mypy --strict`` by test_typing.py."""

from __future__ import annotations

import asyncio

from mcpgen import connect
from mcpgen._runtime.client import ServerError, TransportError
from mcpgen.v2025_11_25 import client as legacy
from mcpgen.v2026_07_28 import client as modern
from mcpgen.v2026_07_28 import models as m


async def elicit(params: object) -> dict[str, object]:
    return {"action": "accept", "content": {"name": "Ada"}}


async def on_progress(params: object) -> None:
    print(params)


async def main(command: list[str]) -> int:
    try:
        client = await connect(command, handlers={"elicitation/create": elicit})
    except TransportError as error:
        print("cannot reach the server:", error)
        return 1
    async with client:
        if isinstance(client, modern.Client):
            tools: m.ListToolsResult = await client.list_tools()
            names: list[str] = [tool.name for tool in tools.tools]
            result: m.CallToolResult = await client.call_tool(
                name="add", arguments={"a": 1, "b": 2}, timeout=5.0, on_progress=on_progress
            )
            raw = await client.call_tool(name="greet", input_required=True)
            if isinstance(raw, m.InputRequiredResult):
                print(raw.request_state)
            async for page in client.list_tools_pages():
                names.extend(tool.name for tool in page.tools)
            prompt: m.GetPromptResult = await client.get_prompt(name="review", arguments={"code": "x"})
            resource: m.ReadResourceResult = await client.read_resource(uri="test://greeting")
            async with client.listen(tools_list_changed=True) as subscription:
                note = await subscription.next(timeout=1.0)
                print(note.method, result.is_error, prompt.messages, resource.contents)
        elif isinstance(client, legacy.Client):
            try:
                await client.call_tool(name="echo", arguments={"message": "hi"})
            except ServerError as error:
                print(error.code, error.message, error.data)
        print(client.version, client.server_info, client.capabilities)
    return 0


if __name__ == "__main__":
    raise SystemExit(asyncio.run(main(["python", "server.py"])))
