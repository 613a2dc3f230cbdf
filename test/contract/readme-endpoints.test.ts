/**
 * The endpoint table of docs/client.md (the README links it) against what it points to: every operation of the document the
 * sandbox serves is in it (both families), each row's SDK method exists, and each link lands on an
 * anchor of the dashboard's API reference page; the documents it links in docs/ exist.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { PaymentClient } from '../../src/index.js';
import { createSandbox } from '../../src/sandbox/index.js';
import { ROOT } from '../sandbox/cli-process.js';

const GUIDE = readFileSync(join(ROOT, 'docs/client.md'), 'utf8');
const SECTION = /^## Endpoints and the OpenAPI contract\n([\s\S]*?)^## /m.exec(GUIDE)?.[1] ?? '';
const ROW = /^\| `(GET|POST) ([^`]+)` \| `client\.([\w.]+)` \| \[(\w+)\]\(([^)]+)\) \|$/gm;

interface Row {
  method: string;
  path: string;
  sdk: string;
  /** The Live operation's id, which the reference page's section of the endpoint is named by. */
  operationId: string;
  link: URL;
}

const rows: Row[] = [...SECTION.matchAll(ROW)].map(([, method = '', path = '', sdk = '', operationId = '', link = '']) => ({
  method,
  path,
  sdk,
  operationId,
  link: new URL(link),
}));

const sandbox = createSandbox();
afterAll(() => sandbox.close());

async function served(path: string): Promise<Response> {
  const response = await sandbox.handle(new Request(`${sandbox.baseUrl}${path}`));
  expect(response.status, `GET ${path}`).toBe(200);
  return response;
}

describe("docs/client.md's endpoint table", () => {
  it('lists every operation of /openapi.json, each endpoint by its Live and Test paths', async () => {
    const document = (await (await served('/openapi.json')).json()) as { paths: Record<string, Record<string, { operationId?: string }>> };
    const operations = Object.entries(document.paths).flatMap(([path, item]) =>
      Object.keys(item).map((method) => `${method.toUpperCase()} ${path}`),
    );
    const listed = rows.flatMap((row) => [`${row.method} /external/v1${row.path}`, `${row.method} /external/v1/test${row.path}`]);
    expect(rows).toHaveLength(13);
    expect(listed.sort()).toEqual(operations.sort());
    for (const row of rows)
      expect(document.paths[`/external/v1${row.path}`]?.[row.method.toLowerCase()]?.operationId).toBe(row.operationId);
  });

  it("names SDK methods that exist, and links to anchors of the dashboard's API reference", async () => {
    const client = new PaymentClient({ apiKey: 'sk_test_readme', webcode: 'README', baseUrl: 'http://127.0.0.1:9' });
    for (const row of rows) {
      const method = row.sdk.split('.').reduce<unknown>((value, key) => (value as Record<string, unknown>)[key], client);
      expect(typeof method, row.sdk).toBe('function');
    }
    const page = await (await served('/api-reference')).text();
    for (const { link, operationId } of rows) {
      expect(link.href).toBe(`http://127.0.0.1:4010/api-reference#${operationId}`);
      expect(page).toContain(`id="${operationId}"`);
    }
  });

  it('links documents that are in the repository', () => {
    // Relative to the guide, in docs/.
    const linked = [...SECTION.matchAll(/\]\(([\w.-]+\.json)\)/g)].map((match) => `docs/${match[1] ?? ''}`);
    expect(linked).toEqual(['docs/openapi.json', 'docs/sandbox-control.openapi.json']);
    for (const file of linked) expect(existsSync(join(ROOT, file)), file).toBe(true);
  });
});
