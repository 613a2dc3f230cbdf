/**
 * docs/mcp.md lists the tools as the server declares them: the table between its markers is
 * `toolsMarkdown()` of the service's and the sandbox's tools. `UPDATE_MCP_DOCS=1` rewrites it.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';
import { CALLS, mcpServerParts, toolsMarkdown } from '../src/mcp/index.js';
import { ENDPOINTS } from '../src/openapi/endpoints.js';

const PAGE = fileURLToPath(new URL('../docs/mcp.md', import.meta.url));
const START = '<!-- mcp-tools:start -->';
const END = '<!-- mcp-tools:end -->';

it('docs/mcp.md lists every tool with its annotations, generated from the declarations', () => {
  const { tools } = mcpServerParts({
    client: { apiKey: 'sk_test_docs', webcode: 'DOCS', baseUrl: 'http://127.0.0.1:1' },
    sandbox: { baseUrl: 'http://127.0.0.1:1' },
  });
  const table = toolsMarkdown(tools);
  const page = readFileSync(PAGE, 'utf8');
  const current = page.slice(page.indexOf(START) + START.length, page.indexOf(END)).trim();
  if (process.env.UPDATE_MCP_DOCS === '1' && current !== table)
    writeFileSync(PAGE, `${page.slice(0, page.indexOf(START) + START.length)}\n${table}\n${page.slice(page.indexOf(END))}`);
  else expect(current).toBe(table);
});

it('binds every operation of the endpoint table to a client method, and no other', () => {
  expect(Object.keys(CALLS).sort()).toEqual(ENDPOINTS.map((endpoint) => endpoint.operationId).sort());
});
