// Checks `query mcp` from outside Go: the official MCP TypeScript SDK
// client starts the server over stdio, as an assistant does, lists its
// tools and calls search (make mcp-check).
//
// Usage: node check.mjs QUERY_BINARY [ARGS...], e.g.
//   node check.mjs ../../../bin/query mcp --store sqlite:///tmp/g.db
// The store must hold testdata/corpus. Exit status 1 names what failed.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

const [command, ...args] = process.argv.slice(2);
if (!command) {
  console.error('usage: node check.mjs QUERY_BINARY mcp --store URL');
  process.exit(2);
}

let failures = 0;
function check(ok, what) {
  if (!ok) {
    failures++;
    console.log(`FAIL ${what}`);
  }
}

const transport = new StdioClientTransport({ command, args, stderr: 'inherit' });
const client = new Client({ name: 'docgraph-mcpcheck', version: '0.0.0' });
await client.connect(transport);

const server = client.getServerVersion();
check(server?.name === 'docgraph', `server name ${server?.name}`);
check((client.getInstructions() ?? '').includes('search'), 'server instructions mention search');

const { tools } = await client.listTools();
const names = tools.map((t) => t.name).sort();
const want = ['get_chunk', 'get_entity', 'list_documents', 'neighbours', 'search'];
check(JSON.stringify(names) === JSON.stringify(want), `tools ${names}, want ${want}`);
for (const t of tools) {
  check(t.description?.length > 80, `${t.name}: description`);
  check(t.inputSchema?.type === 'object' && Object.keys(t.inputSchema.properties ?? {}).length > 0, `${t.name}: input schema`);
  check(t.outputSchema?.type === 'object', `${t.name}: output schema`);
  check(t.annotations?.readOnlyHint === true, `${t.name}: read-only`);
}

// The SDK validates structuredContent against the tool's output schema.
const res = await client.callTool({
  name: 'search',
  arguments: { question: 'Who designed the Go programming language?', top_k: 3 },
});
check(!res.isError, `search failed: ${JSON.stringify(res.content)}`);
const passages = res.structuredContent?.passages ?? [];
check(passages.length === 3, `search: ${passages.length} passages, want 3`);
check(passages[0]?.doc_path?.endsWith('go-language.md'), `search: first passage ${passages[0]?.doc_path}`);
check((res.structuredContent?.entities ?? []).length > 0, 'search: entities');
const text = res.content?.find((c) => c.type === 'text')?.text ?? '';
check(text.includes('[1] ') && text.includes('go-language.md'), `search text: ${text.slice(0, 200)}`);

const entity = await client.callTool({ name: 'get_entity', arguments: { entity: 'Ken Thompson' } });
check(!entity.isError && entity.structuredContent?.name === 'Ken Thompson', `get_entity: ${JSON.stringify(entity.content).slice(0, 200)}`);

// Bad input is a tool error, not a crash: the server answers the next call.
const bad = await client.callTool({ name: 'search', arguments: { question: '' } }).catch((err) => ({ isError: true, thrown: err }));
check(bad.isError, 'search with an empty question is an error');
const docs = await client.callTool({ name: 'list_documents', arguments: { limit: 2 } });
check(!docs.isError && docs.structuredContent?.total === 10 && docs.structuredContent?.documents.length === 2, 'list_documents after an error');

await client.close();
console.log(`mcp-check: ${tools.length} tools, search returned ${passages.length} passages; ${failures} failures`);
process.exit(failures > 0 ? 1 : 0);
