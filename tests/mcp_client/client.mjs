// A real MCP client against kasava serve's /mcp: the official TypeScript SDK's Client over its
// StreamableHTTPClientTransport connects (initialize, the session, the protocol version
// header), lists the tools, calls search, read_file_range and index_status, ends the session
// with DELETE and closes. Run by tests/e2e/mcp_http_test.cpp, which asserts on what it prints:
// one JSON object per line, {"step": …, …}. Exits 1 with {"step":"error"} on any failure.
//
//   node client.mjs --url http://127.0.0.1:PORT/mcp --query TEXT --read PATH
//                   [--token TOKEN] [--protocol 2025-06-18]
//
// --protocol asks for that version in initialize instead of the SDK's newest (the SDK has no
// option for it, so the outgoing initialize request is rewritten).
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

function option(name, fallback) {
  const index = process.argv.indexOf(`--${name}`);
  return index >= 0 && index + 1 < process.argv.length ? process.argv[index + 1] : fallback;
}

function print(step, fields) {
  process.stdout.write(JSON.stringify({ step, ...fields }) + "\n");
}

async function main() {
  const url = option("url");
  const query = option("query");
  const readPath = option("read");
  const token = option("token");
  const protocol = option("protocol");
  if (!url || !query || !readPath) throw new Error("usage: client.mjs --url URL --query TEXT --read PATH");

  const headers = token ? { Authorization: `Bearer ${token}` } : {};
  const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } });
  if (protocol) {
    const send = transport.send.bind(transport);
    transport.send = (message, options) => {
      if (message.method === "initialize") message.params.protocolVersion = protocol;
      return send(message, options);
    };
  }
  const client = new Client({ name: "kasava-e2e", version: "1.0.0" });
  await client.connect(transport);
  print("connected", {
    server: client.getServerVersion(),
    protocolVersion: transport.protocolVersion,
    sessionId: transport.sessionId ?? null,
    instructions: client.getInstructions() ?? null,
  });

  const { tools } = await client.listTools();
  print("tools", { names: tools.map((tool) => tool.name) });

  const search = await client.callTool({ name: "search", arguments: { query, limit: 3 } });
  print("search", {
    isError: search.isError ?? false,
    results: (search.structuredContent?.results ?? []).map((r) => ({
      path: r.path,
      repository: r.repository ?? null,
      symbol: r.symbol,
      start_line: r.start_line,
      end_line: r.end_line,
    })),
    text: search.content?.[0]?.text ?? "",
  });

  const read = await client.callTool({
    name: "read_file_range",
    arguments: { path: readPath, start_line: 1, end_line: 5 },
  });
  print("read_file_range", { isError: read.isError ?? false, text: read.content?.[0]?.text ?? "" });

  const status = await client.callTool({ name: "index_status", arguments: {} });
  print("index_status", {
    isError: status.isError ?? false,
    files: status.structuredContent?.files ?? null,
    chunks: status.structuredContent?.chunks ?? null,
    text: status.content?.[0]?.text ?? "",
  });

  // A call with bad arguments is a tool error, not a protocol failure.
  const bad = await client.callTool({ name: "read_file_range", arguments: { path: "../outside" } });
  print("refused", { isError: bad.isError ?? false, text: bad.content?.[0]?.text ?? "" });

  const sessionId = transport.sessionId;
  await transport.terminateSession();
  print("terminated", { sessionId: sessionId ?? null, after: transport.sessionId ?? null });
  await client.close();
  print("closed", {});
}

main().catch((error) => {
  print("error", { message: String(error?.message ?? error), code: error?.code ?? null });
  process.exit(1);
});
