/**
 * The request log against the odd ways a secret reaches it (issue 37, item 9), and what it names
 * and keeps (item 1), over real HTTP on 127.0.0.1. A sandbox with sentinel keys and client
 * secrets gets each of them through each way (a POS payment's `poiId`, an unknown path, an
 * `Idempotency-Key`, a session id in the path, a refund's `paymentReference`, a body whose secret
 * straddles the 64 KB cut, a `\u`-escaped secret in JSON, a header named by a secret); then every
 * surface made from the entries is read back (the typed API, the control API, the dashboard's list
 * and entry pages, `logs show`, `logs list` and `logs tail` in table and JSON): none holds a
 * secret, nor a piece of one past its mask. Also: a 413 is logged with its body cut and why, a
 * request struck after its commit names what it made, and the mask is the prefix and the last four.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RequestLogEntry, Sandbox } from '../../src/sandbox/index.js';
import { buildOnce, cliEnv, killAll, run, sandboxVariables } from './cli-process.js';
import { raw, sessionParams, startSandbox } from './support.js';

const KEY = 'sk_test_SENTINELkey0test2342';
const LIVE = 'sk_live_SENTINELkey0live7777';
const SECRET = 'cs_test_SENTINELsecret05555';
const SECRETS = [KEY, LIVE, SECRET];

let sandbox: Sandbox;
const dir = mkdtempSync(join(tmpdir(), 'request-log-secrets-'));
beforeAll(async () => {
  buildOnce();
  ({ sandbox } = await startSandbox({
    keys: { test: KEY, live: LIVE },
    clientSecrets: { test: SECRET, live: 'cs_live_SENTINELsecret06666' },
    modificationResolveMs: 0,
  }));
}, 60_000);
afterAll(async () => {
  killAll();
  await sandbox?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** The pieces of a secret no output may hold, in any case: itself, all but its last character, and what follows its prefix (the part the mask hides). */
function leaks(text: string): string[] {
  const found: string[] = [];
  for (const secret of SECRETS)
    for (const piece of [secret, secret.slice(0, -1), secret.slice(8, -4)])
      if (text.toLowerCase().includes(piece.toLowerCase())) found.push(piece);
  return found;
}

/** A text with JSON's escapes read back, as `logs show` and the dashboard decode a body. */
function decodedToo(text: string): string {
  return `${text}\n${text.replace(/\\u([0-9a-fA-F]{4})/g, (_all, hex: string) => String.fromCharCode(Number.parseInt(hex, 16)))}`;
}

function escapedAll(secret: string): string {
  return [...secret].map((char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`).join('');
}

async function post(path: string, body: string, headers: Record<string, string> = {}): Promise<number> {
  const response = await fetch(`${sandbox.baseUrl}/external/v1/test${path}`, {
    method: 'POST',
    headers: { 'x-api-key': KEY, 'content-type': 'application/json', ...headers },
    body,
  });
  await response.arrayBuffer();
  return response.status;
}

/** Sends each secret through each way the issue lists; the number of requests sent. */
async function sendEverySecret(): Promise<number> {
  let sent = 0;
  for (const secret of SECRETS) {
    const webcode = sandbox.webcode;
    await post('/pos/payment', JSON.stringify({ webcode, poiId: secret, amount: { value: 100, currency: 'EUR' } }));
    await fetch(`${sandbox.baseUrl}/external/v1/test/nothing/${secret}?webcode=${webcode}`, { headers: { 'x-api-key': KEY } });
    await post('/payment/session', JSON.stringify({ webcode, ...sessionParams }), { 'idempotency-key': secret });
    await fetch(`${sandbox.baseUrl}/external/v1/test/payment/session/${secret}?webcode=${webcode}`, { headers: { 'x-api-key': KEY } });
    await post('/payment/refund', JSON.stringify({ webcode, paymentReference: secret, amount: { value: 100, currency: 'EUR' } }));
    // The secret straddles the 64 KB cut: its first half before it, its second after.
    const head = JSON.stringify({ webcode, note: '' }).length - 2;
    const pad = 'x'.repeat(65_536 - head - Math.floor(secret.length / 2));
    await post('/payment/session', JSON.stringify({ webcode, note: `${pad}${secret}`, ...sessionParams }));
    await post(
      '/payment/session',
      `{"webcode":"${webcode}","note":"${escapedAll(secret)} and ${escapedAll(secret.slice(0, 1))}${secret.slice(1)}"}`,
    );
    await fetch(`${sandbox.baseUrl}/external/v1/test/payment/sessions?webcode=${webcode}`, {
      headers: { 'x-api-key': KEY, [secret.toLowerCase()]: 'value', 'x-note': secret },
    });
    sent += 8;
  }
  return sent;
}

const envFor = () => cliEnv(join(dir, 'none.json'), sandboxVariables(sandbox));

async function cli(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const started = run(args, { env: envFor() });
  const { code } = await started.exit;
  return { code, stdout: started.stdout(), stderr: started.stderr() };
}

describe('no secret reaches an entry, a page or a line (issue 37, item 9)', () => {
  it('masks every secret sent every way, in every surface made from the entries', { timeout: 120_000 }, async () => {
    // Two tails (JSON lines off a terminal by default, and table lines), each stopping by itself.
    const tails = [
      run(['logs', 'tail', '--count', '24', '--timeout', '60s'], { env: envFor() }),
      run(['logs', 'tail', '--format', 'table', '--count', '24', '--timeout', '60s'], { env: envFor() }),
    ];
    // A tail prints what comes after it starts: wait until both have said where they start.
    const deadline = Date.now() + 30_000;
    while (tails.some((tail) => !tail.stderr().includes('Following')) && Date.now() < deadline)
      await new Promise((done) => setTimeout(done, 50));
    const sent = await sendEverySecret();
    expect(sent).toBe(24);
    const [json, table] = await Promise.all(tails.map(async (tail) => ({ code: (await tail.exit).code, out: tail.stdout() })));
    expect(json?.code).toBe(0);
    expect(table?.code).toBe(0);
    const jsonLines = (json?.out ?? '').trim().split('\n');
    expect(jsonLines).toHaveLength(24);
    const tailed = jsonLines.map((line) => JSON.parse(line) as RequestLogEntry);
    expect((table?.out ?? '').trim().split('\n')).toHaveLength(24);
    expect(table?.out.trim().startsWith('{')).toBe(false);

    const typed = (await sandbox.requests.list({ take: 100 })).items.slice(0, 24);
    expect(typed.map((entry) => entry.id)).toEqual(tailed.map((entry) => entry.id).reverse());
    const control = await fetch(`${sandbox.baseUrl}/_sandbox/test/requests?take=100`, { headers: { 'x-api-key': KEY } }).then((r) =>
      r.text(),
    );
    const surfaces: [string, string][] = [
      ['typed API', JSON.stringify(typed)],
      ['control API', control],
      ['logs tail (JSON)', json?.out ?? ''],
      ['logs tail (table)', table?.out ?? ''],
      ['dashboard list', await fetch(`${sandbox.baseUrl}/test/requests?take=100`).then((r) => r.text())],
    ];
    const listed = await cli(['logs', 'list', '--format', 'json']);
    const listedTable = await cli(['logs', 'list', '--format', 'table']);
    expect(listed.code).toBe(0);
    surfaces.push(['logs list (JSON)', listed.stdout], ['logs list (table)', listedTable.stdout]);
    for (const entry of typed) {
      surfaces.push([`dashboard entry ${entry.id}`, await fetch(`${sandbox.baseUrl}/test/requests/${entry.id}`).then((r) => r.text())]);
      surfaces.push([
        `control entry ${entry.id}`,
        await fetch(`${sandbox.baseUrl}/_sandbox/test/requests/${entry.id}`, { headers: { 'x-api-key': KEY } }).then((r) => r.text()),
      ]);
      const shown = await cli(['logs', 'show', entry.id]);
      expect(shown.code, shown.stderr).toBe(0);
      surfaces.push(
        [`logs show ${entry.id}`, shown.stdout],
        [`logs show --format json ${entry.id}`, (await cli(['logs', 'show', entry.id, '--format', 'json'])).stdout],
      );
      // Each body as its reader decodes it: JSON.parse reads `\u` escapes back.
      for (const body of [entry.requestBody, entry.responseBody]) {
        if (body === null) continue;
        try {
          surfaces.push([`${entry.id} body decoded`, JSON.stringify(JSON.parse(body), null, 0).replace(/\\\\/g, '\\')]);
        } catch {
          // cut at 64 KB: not JSON any more
        }
      }
    }
    for (const [name, text] of surfaces) expect(leaks(decodedToo(text)), name).toEqual([]);

    // Each way is there, masked: the issue's message, the key, the references, the header's name.
    const all = JSON.stringify(typed);
    expect(all).toContain('Invalid terminal: device sk_test_…2342 not found');
    expect(typed.some((entry) => entry.idempotencyKey === 'sk_live_…7777')).toBe(true);
    expect(typed.some((entry) => entry.references.sessionIds.includes('cs_test_…5555'))).toBe(true);
    expect(typed.some((entry) => entry.references.paymentReferences.includes('sk_test_…2342'))).toBe(true);
    expect(typed.some((entry) => Object.hasOwn(entry.requestHeaders, 'sk_test_…2342'))).toBe(true);
    const straddling = typed.filter((entry) => entry.requestBodyTruncated && entry.operation === 'createSession');
    expect(straddling).toHaveLength(3);
    for (const entry of straddling) expect(new TextEncoder().encode(entry.requestBody ?? '').byteLength).toBeLessThanOrEqual(65_536);
  });

  it('masks a key as its prefix and its last four, as the docs say', async () => {
    await raw(sandbox, 'GET', '/payment/sessions', { key: KEY });
    const [entry] = (await sandbox.requests.list({ take: 1 })).items;
    expect(entry?.requestHeaders['x-api-key']).toBe('sk_test_…2342');
    // The default key too: its prefix and its last four, not `…dbox` alone.
    const { sandbox: plain } = await startSandbox();
    try {
      await raw(plain, 'GET', '/payment/sessions');
      const [own] = (await plain.requests.list({ take: 1 })).items;
      expect(own?.requestHeaders['x-api-key']).toBe('sk_test_…dbox');
    } finally {
      await plain.close();
    }
  });
});

describe('what the log names and keeps (issue 37, items 1 and 9)', () => {
  it('names the session a create made when an after-commit rule answered 500, and when it reset the connection', async () => {
    for (const effect of [
      { type: 'error', status: 500, when: 'after-commit' },
      { type: 'reset', when: 'after-commit' },
    ] as const) {
      const rule = sandbox.faults.add({ route: 'POST /payment/session', times: 1, effect });
      const before = new Set(sandbox.records.sessions().map((session) => session.sessionId));
      await post('/payment/session', JSON.stringify({ webcode: sandbox.webcode, ...sessionParams })).catch(() => 0);
      const made = sandbox.records.sessions().filter((session) => !before.has(session.sessionId));
      expect(made).toHaveLength(1);
      const [entry] = (await sandbox.requests.list({ operation: 'createSession', take: 1 })).items;
      expect(entry?.faultRule).toBe(rule.id);
      expect(entry?.status).toBe(effect.type === 'error' ? 500 : 0);
      expect(entry?.references.sessionIds).toEqual([made[0]?.sessionId]);
      expect(await sandbox.requests.count({ reference: made[0]?.sessionId ?? '' })).toBe(1);
    }
    sandbox.faults.clear();
  });

  it('logs a request refused 413 (a 2 MiB body, declared or sent in chunks): its body cut, the reason given', async () => {
    const body = JSON.stringify({ webcode: sandbox.webcode, note: 'y'.repeat(2 * 1_048_576) });
    const declared = await fetch(`${sandbox.baseUrl}/external/v1/test/payment/session`, {
      method: 'POST',
      headers: { 'x-api-key': KEY, 'content-type': 'application/json' },
      body,
    });
    expect(declared.status).toBe(413);
    const chunked = await fetch(`${sandbox.baseUrl}/external/v1/test/payment/session`, {
      method: 'POST',
      headers: { 'x-api-key': KEY, 'content-type': 'application/json' },
      body: new Blob([body]).stream(),
      duplex: 'half',
    } as RequestInit);
    expect(chunked.status).toBe(413);
    expect((await chunked.json()).error.code).toBe(19413);
    const entries = (await sandbox.requests.list({ status: 413, take: 2 })).items;
    expect(entries).toHaveLength(2);
    for (const entry of entries) {
      expect(entry).toMatchObject({ operation: 'createSession', status: 413, requestBodyTruncated: true });
      expect(entry.issues).toEqual([{ path: 'body', message: expect.stringContaining('Request body larger than') }]);
      expect(new TextEncoder().encode(entry.requestBody ?? '').byteLength).toBeLessThanOrEqual(65_536);
    }
    // Sent in chunks, its first 64 KB are kept; declared too large, nothing of it was read.
    expect(entries.map((entry) => (entry.requestBody ?? '').length).sort((a, b) => a - b)).toEqual([0, 65_536]);
  });
});
