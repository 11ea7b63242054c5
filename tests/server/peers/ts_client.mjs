// Drive a server with the TypeScript SDK v2 client: node ts_client.mjs MODE TARGET...
//   MODE: legacy | 2026-07-28 ; TARGET: http URL, or "stdio" followed by command and args.
//   MCP_INTEROP_PROFILE=scaffold: call the scaffold's `add` tool instead of the everything server's;
//   MCP_INTEROP_PROFILE=weather: exercise examples/weather (bad arguments, structured output, a failing
//   tool, the resource template and the prompt).
// Prints one JSON line with what was observed; exits non-zero on any error.
import { Client } from '@modelcontextprotocol/client';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';

const [mode, target, ...rest] = process.argv.slice(2);
const versionNegotiation = mode === 'legacy' ? { mode: 'legacy' } : { mode: { pin: mode } };
const client = new Client(
  { name: 'ts-interop', version: '1.0.0' },
  { capabilities: { elicitation: { form: {} } }, versionNegotiation }
);
client.setRequestHandler('elicitation/create', async () => ({
  action: 'accept',
  content: { username: 'ada', email: 'a@b.c', name: 'ada' }
}));
const transport =
  target === 'stdio'
    ? new StdioClientTransport({ command: rest[0], args: rest.slice(1), stderr: 'inherit' })
    : new StreamableHTTPClientTransport(new URL(target));
const timer = setTimeout(() => {
  console.error('timed out');
  process.exit(3);
}, 30000);
try {
  await client.connect(transport);
  const seen = { version: client.getNegotiatedProtocolVersion() ?? null };
  const tools = await client.listTools();
  if (process.env.MCP_INTEROP_PROFILE === 'scaffold') {
    seen.tools = tools.tools.map((t) => t.name);
    const added = await client.callTool({ name: 'add', arguments: { a: 2, b: 3 } });
    seen.added = added.content[0].text;
    console.log(JSON.stringify(seen));
    await client.close();
    clearTimeout(timer);
    process.exit(0);
  }
  if (process.env.MCP_INTEROP_PROFILE === 'weather') {
    seen.tools = tools.tools;
    const bad = await client.callTool({ name: 'add', arguments: { a: 'x', b: 1 } });
    seen.bad = { isError: bad.isError ?? false, text: bad.content[0].text };
    const forecast = await client.callTool({ name: 'get_forecast', arguments: { city: 'Paris', days: 2 } });
    seen.forecast = { isError: forecast.isError ?? false, structured: forecast.structuredContent, text: forecast.content[0].text };
    const fail = await client.callTool({ name: 'fail', arguments: {} });
    seen.fail = { isError: fail.isError ?? false, text: fail.content[0].text };
    const read = await client.readResource({ uri: 'weather://Paris/current' });
    seen.resource = read.contents[0].text;
    const prompt = await client.getPrompt({ name: 'plan_trip', arguments: { city: 'Rome' } });
    seen.prompt = prompt.messages[0].content.text;
    console.log(JSON.stringify(seen));
    await client.close();
    clearTimeout(timer);
    process.exit(0);
  }
  seen.tools = tools.tools.map((t) => t.name);
  const simple = await client.callTool({ name: 'test_simple_text', arguments: {} });
  seen.simple = simple.content[0].text;
  const elicited = await client.callTool({ name: 'test_elicitation', arguments: { message: 'who?' } });
  seen.elicited = elicited.content[0].text;
  const read = await client.readResource({ uri: 'test://static-text' });
  seen.resource = read.contents[0].text;
  const prompt = await client.getPrompt({ name: 'test_prompt_with_arguments', arguments: { arg1: 'a', arg2: 'b' } });
  seen.prompt = prompt.messages[0].content.text;
  console.log(JSON.stringify(seen));
  await client.close();
  clearTimeout(timer);
  process.exit(0);
} catch (err) {
  console.error(err?.stack ?? String(err));
  process.exit(2);
}
