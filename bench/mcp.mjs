// `npm run bench`, section `mcp` (BENCH_ONLY=mcp for it alone), issue 38: how long from spawning
// `payment-service-sdk mcp` to the answer of `tools/list` (the official client over stdio, the
// median of several starts), and what a tool call costs over the same SDK call (`listTerminals`
// through the MCP server against `client.terminals.list()` in this process, alternating call by
// call in one run: the figure is their ratio). Against a sandbox in this process, from dist.
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

const STARTS = Number(process.env.BENCH_MCP_STARTS ?? 5);
const CALLS = Number(process.env.BENCH_MCP_CALLS ?? 300);
const cli = fileURLToPath(new URL('../dist/cli.cjs', import.meta.url));
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

async function connect(baseUrl) {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [cli, 'mcp', '--sandbox', baseUrl, '--api-key', 'sk_test_sandbox', '--webcode', 'SANDBOX'],
    stderr: 'ignore',
  });
  const client = new Client({ name: 'bench', version: '1.0.0' });
  await client.connect(transport);
  return client;
}

export async function mcpSection() {
  const { createSandbox } = await import('../dist/sandbox.mjs');
  const { PaymentClient } = await import('../dist/index.mjs');
  const sandbox = createSandbox({ posDelayMs: 0, requestLogSize: 0 });
  const { baseUrl } = await sandbox.listen();
  try {
    const starts = [];
    for (let i = 0; i < STARTS; i++) {
      const started = performance.now();
      const client = await connect(baseUrl);
      await client.listTools();
      starts.push(performance.now() - started);
      await client.close();
    }
    const mcp = await connect(baseUrl);
    const sdk = new PaymentClient({ apiKey: sandbox.keys.test, webcode: sandbox.webcode, baseUrl });
    const times = { mcp: [], sdk: [] };
    for (let i = 0; i < 20; i++) {
      await mcp.callTool({ name: 'listTerminals', arguments: {} });
      await sdk.terminals.list();
    }
    for (let i = 0; i < CALLS; i++) {
      for (const way of i % 2 === 0 ? ['mcp', 'sdk'] : ['sdk', 'mcp']) {
        const started = performance.now();
        if (way === 'mcp') await mcp.callTool({ name: 'listTerminals', arguments: {} });
        else await sdk.terminals.list();
        times[way].push(performance.now() - started);
      }
    }
    await mcp.close();
    const msPerCall = { mcp: median(times.mcp), sdk: median(times.sdk) };
    return {
      starts: STARTS,
      startMs: median(starts),
      startRangeMs: [Math.min(...starts), Math.max(...starts)],
      calls: CALLS,
      msPerCall,
      ratio: msPerCall.mcp / msPerCall.sdk,
    };
  } finally {
    await sandbox.close();
  }
}

export function printMcp(mcp, table) {
  table(
    `MCP: payment-service-sdk mcp over stdio against a sandbox, ${mcp.starts} starts, ${mcp.calls} calls of each way, alternating, median`,
    ['measure', 'value'],
    [
      ['spawn to the tools/list answer', `${mcp.startMs.toFixed(0)} ms (${mcp.startRangeMs.map((ms) => ms.toFixed(0)).join(' to ')})`],
      ['listTerminals as an MCP tool call, per call', `${mcp.msPerCall.mcp.toFixed(3)} ms`],
      ['client.terminals.list() in-process, per call', `${mcp.msPerCall.sdk.toFixed(3)} ms`],
      ['ratio, tool call / SDK call', `${mcp.ratio.toFixed(2)} x`],
    ],
  );
}
