/**
 * The list of tools as docs/mcp.md shows it, made from the same tool declarations the server
 * lists (a test compares the two, so the page cannot drift): name, annotations, what it does.
 */
import type { McpTool } from './tool.js';

const yes = (value: boolean) => (value ? 'yes' : '');

/** A Markdown table of `tools`: one row per tool, its annotations as columns. */
export function toolsMarkdown(tools: readonly McpTool[]): string {
  const rows = tools.map((tool) => {
    const { readOnlyHint, destructiveHint, idempotentHint } = tool.annotations;
    const summary = (tool.annotations.title ?? tool.name).replace(/^Sandbox: /, '').replaceAll('|', '\\|');
    return `| \`${tool.name}\` | ${summary} | ${yes(readOnlyHint)} | ${yes(destructiveHint)} | ${yes(idempotentHint)} | ${yes(tool.movesMoney)} |`;
  });
  return [
    '| Tool | What it does | readOnlyHint | destructiveHint | idempotentHint | Money move (confirmed in Live) |',
    '|---|---|---|---|---|---|',
    ...rows,
  ].join('\n');
}
