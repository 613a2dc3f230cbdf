/**
 * `payment-service-sdk/mcp`: an MCP server of the payment service and of its sandbox, on the
 * official `@modelcontextprotocol/sdk` (1.x; an optional peer dependency, loaded by this entry
 * point and the `payment-service-sdk mcp` command only).
 *
 * ```ts
 * import { createMcpServer } from 'payment-service-sdk/mcp';
 * import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
 *
 * const server = createMcpServer({ client: { apiKey, webcode, baseUrl }, maxAmount: 10_000 });
 * await server.connect(new StdioServerTransport());
 * ```
 */

export { MCP_PATH, type McpHttpOptions, type McpHttpServer, newToken, serveMcpHttp } from './http.js';
export { canonicalJson, DERIVED_KEY_TTL_MS, type DerivedKeys, derivedKeys } from './idempotency.js';
export { CONTROL_OPENAPI_URI, guideUri, type McpGuide, OPENAPI_URI } from './resources.js';
export { errorFields } from './results.js';
export { type ConfirmAnswer, formatAmount, McpRefusal, McpSettingsError, type SafetyOptions } from './safety.js';
export type { McpSandbox } from './sandbox-link.js';
export { SandboxControlRefusal } from './sandbox-link.js';
export { SANDBOX_TOOL_ROUTES } from './sandbox-tools.js';
export { createMcpServer, listedTool, type McpServerOptions, type McpServerParts, mcpServerParts } from './server.js';
export { CALLS, MONEY_MOVES } from './service-tools.js';
export type { McpTool, MoneyMove, ToolAnnotations, ToolCall } from './tool.js';
export { toolsMarkdown } from './tools-doc.js';
