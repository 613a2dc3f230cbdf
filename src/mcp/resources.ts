/**
 * The server's resources: the service's OpenAPI document (made from the same declarations as the
 * tools, as `dist/openapi.json` is), the sandbox's control document when the target is a sandbox,
 * and the guides given (the CLI gives the package's README.md and docs/*.md). Each read passes
 * through the redactor, as the tools' answers do.
 */
import { readFile } from 'node:fs/promises';
import { basename } from 'node:path';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { openApiDocument } from '../openapi/document.js';
import type { Redactor } from './results.js';
import type { SandboxLink } from './sandbox-link.js';

/** A guide served as a resource: its Markdown file. */
export interface McpGuide {
  /** The file (read on each `resources/read`). */
  path: string;
  /** Default the file's name (`README.md`, `sandbox.md`); a path such as `docs/README.md` keeps its folders in the URI. */
  name?: string | undefined;
}

export const OPENAPI_URI = 'payment-service://openapi.json';
export const CONTROL_OPENAPI_URI = 'payment-service://sandbox/openapi.json';
export const guideUri = (name: string) => `payment-service://guides/${name.split('/').map(encodeURIComponent).join('/')}`;

export function registerResources(
  server: McpServer,
  options: { sandbox: SandboxLink | undefined; guides: readonly McpGuide[]; redact: Redactor },
): void {
  const { redact } = options;
  let document: string | undefined;
  server.registerResource(
    'openapi',
    OPENAPI_URI,
    {
      title: 'The payment service API (OpenAPI 3.1)',
      description: 'Every operation, its parameters, answers and documented failures.',
      mimeType: 'application/json',
    },
    async (uri) => {
      document ??= JSON.stringify(openApiDocument(), null, 2);
      return { contents: [{ uri: uri.href, mimeType: 'application/json', text: redact(document) }] };
    },
  );
  const { sandbox } = options;
  if (sandbox) {
    server.registerResource(
      'sandbox-openapi',
      CONTROL_OPENAPI_URI,
      {
        title: "The sandbox's control API (OpenAPI 3.1)",
        description: 'Pay sessions, set terminals, move the clock, fault rules, deliveries, the request log.',
        mimeType: 'application/json',
      },
      async (uri) => ({
        contents: [{ uri: uri.href, mimeType: 'application/json', text: redact(await sandbox.text('/_sandbox/openapi.json')) }],
      }),
    );
  }
  for (const guide of options.guides) {
    const name = guide.name ?? basename(guide.path);
    server.registerResource(`guide-${name}`, guideUri(name), { title: `Guide: ${name}`, mimeType: 'text/markdown' }, async (uri) => ({
      contents: [{ uri: uri.href, mimeType: 'text/markdown', text: redact(await readFile(guide.path, 'utf8')) }],
    }));
  }
}
