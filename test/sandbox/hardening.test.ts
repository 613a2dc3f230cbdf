/**
 * The sandbox's limits and hardening over real HTTP on 127.0.0.1: body size, JSON depth, content
 * type, malformed path ids, over-long request heads, integer codes on every failure, idempotency
 * expiry on the sandbox clock, `deliverAt` parsing, failed attempts' references, and a seeded fuzz
 * that must never get a 500. Raw sockets (`node:net`) send what `fetch` will not.
 */
import { connect } from 'node:net';
import { beforeAll, describe, expect, it } from 'vitest';
import { createSandbox, type ManualClock, manualClock, SANDBOX_CODES, type Sandbox, seededRandom } from '../../src/sandbox/index.js';
import { isIsoDateTime } from '../../src/schemas/dates.js';
import { TEST_CARDHOLDER_NAMES } from '../../src/testing/index.js';
import { failureOf, paidSession, type RawResult, raw, type Started, sessionParams, submitForm, URL_KO, useSandboxes } from './support.js';

const { start } = useSandboxes();

const HOUR = 3_600_000;
const SESSION_PATH = '/external/v1/test/payment/session';

/** Checks the documented failure envelope, with an integer `code`, and returns its `error`. */
function expectFailure(result: RawResult, status: number, code?: number) {
  expect(result.status).toBe(status);
  const error = failureOf(result);
  expect(error).toEqual({ message: expect.any(String), code: expect.any(Number), statusCode: status, traceId: expect.any(String) });
  expect(Number.isInteger(error.code)).toBe(true);
  if (code !== undefined) expect(error.code).toBe(code);
  return error;
}

async function answerOf(response: Response): Promise<RawResult> {
  const text = await response.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // not JSON: kept as text
  }
  return { status: response.status, headers: response.headers, body };
}

/** A POST to a Test path with exactly this body and these headers (the Test key unless `x-api-key` is given). */
async function post(sandbox: Sandbox, path: string, body: string | Uint8Array, headers: Record<string, string> = {}): Promise<RawResult> {
  const response = await fetch(`${sandbox.baseUrl}${path}`, {
    method: 'POST',
    headers: { 'x-api-key': sandbox.keys.test, ...headers },
    body: typeof body === 'string' ? body : new Uint8Array(body),
  });
  return answerOf(response);
}

const JSON_TYPE = { 'content-type': 'application/json' };

/** A valid create-session body as JSON text, padded with an unknown field to exactly `bytes` bytes. */
function sessionBodyOf(sandbox: Sandbox, bytes: number): string {
  const bare = JSON.stringify({ webcode: sandbox.webcode, ...sessionParams, pad: '' });
  const padding = bytes - Buffer.byteLength(bare);
  if (padding < 0) throw new Error(`A session body needs at least ${Buffer.byteLength(bare)} bytes`);
  const text = JSON.stringify({ webcode: sandbox.webcode, ...sessionParams, pad: 'x'.repeat(padding) });
  expect(Buffer.byteLength(text)).toBe(bytes);
  return text;
}

/** `levels` nested objects `{"a":{"a":...1}}` as JSON text. */
function nestedObjects(levels: number): string {
  return `${'{"a":'.repeat(levels)}1${'}'.repeat(levels)}`;
}

interface RawHttpAnswer {
  /** 0 when nothing came back before the socket closed or the wait ran out. */
  status: number;
  headers: Record<string, string>;
  body: any;
  /** The server closed the connection (rather than the wait running out). */
  closed: boolean;
}

/**
 * Writes `head` (and then `body`) on a fresh TCP connection and reads the first HTTP/1.1 answer; waits
 * at most `waitMs` for it. For what fetch refuses to send: oversized heads, odd methods and targets.
 */
function rawHttp(baseUrl: string, head: string, body: Buffer | string = '', waitMs = 2_000): Promise<RawHttpAnswer> {
  const { port } = new URL(baseUrl);
  return new Promise((resolve) => {
    const socket = connect(Number(port), '127.0.0.1');
    const chunks: Buffer[] = [];
    let done = false;
    const finish = (closed: boolean) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      socket.destroy();
      const text = Buffer.concat(chunks).toString('utf8');
      const split = text.indexOf('\r\n\r\n');
      const [statusLine = '', ...headerLines] = (split < 0 ? text : text.slice(0, split)).split('\r\n');
      const headers: Record<string, string> = {};
      for (const line of headerLines) {
        const colon = line.indexOf(':');
        if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
      }
      const rest = split < 0 ? '' : text.slice(split + 4);
      let parsed: unknown = rest;
      try {
        parsed = JSON.parse(rest);
      } catch {
        // not JSON: kept as text
      }
      resolve({ status: Number(/^HTTP\/1\.[01] (\d{3})/.exec(statusLine)?.[1] ?? 0), headers, body: parsed, closed });
    };
    const timer = setTimeout(() => finish(false), waitMs);
    socket.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      // A complete answer with a content-length: no need to wait for the close.
      const text = Buffer.concat(chunks).toString('utf8');
      const split = text.indexOf('\r\n\r\n');
      const length = /\r\ncontent-length:\s*(\d+)/i.exec(text.slice(0, split))?.[1];
      if (split >= 0 && length !== undefined && Buffer.byteLength(text.slice(split + 4)) >= Number(length)) finish(false);
    });
    socket.on('error', () => finish(true));
    socket.on('close', () => finish(true));
    socket.write(head);
    if (body.length > 0) socket.write(body);
  });
}

/**
 * Sends `head` and `body` in full before it reads the answer, as curl or fetch do: `error` is the
 * socket error (EPIPE, ECONNRESET) if the connection broke before the body was written and the
 * answer read.
 */
function sendInFull(baseUrl: string, head: string, body: Buffer): Promise<RawHttpAnswer & { error: string | undefined }> {
  const { port } = new URL(baseUrl);
  return new Promise((resolve) => {
    const socket = connect(Number(port), '127.0.0.1');
    const chunks: Buffer[] = [];
    let error: string | undefined;
    let written = false;
    let answered = false;
    let done = false;
    const finish = () => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      socket.destroy();
      const text = Buffer.concat(chunks).toString('utf8');
      const split = text.indexOf('\r\n\r\n');
      const headers: Record<string, string> = {};
      for (const line of text.slice(0, Math.max(0, split)).split('\r\n').slice(1)) {
        const colon = line.indexOf(':');
        if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
      }
      let parsed: unknown;
      try {
        parsed = JSON.parse(text.slice(split + 4));
      } catch {
        parsed = text.slice(split + 4);
      }
      resolve({ status: Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0), headers, body: parsed, closed: true, error });
    };
    const timer = setTimeout(finish, 20_000);
    socket.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      const text = Buffer.concat(chunks).toString('utf8');
      const split = text.indexOf('\r\n\r\n');
      const length = /\r\ncontent-length:\s*(\d+)/i.exec(text.slice(0, split))?.[1];
      answered = split >= 0 && length !== undefined && Buffer.byteLength(text.slice(split + 4)) >= Number(length);
      if (answered && written) finish();
    });
    socket.on('error', (caught: NodeJS.ErrnoException) => {
      error ??= caught.code ?? caught.message;
      finish();
    });
    socket.on('close', finish);
    socket.write(head);
    // In 1 MB pieces with a pause between them, as a client on a real network sends: the answer
    // comes before the body is all out.
    const sendFrom = (offset: number) => {
      if (done) return;
      const end = Math.min(body.byteLength, offset + 1_000_000);
      socket.write(body.subarray(offset, end), (failed) => {
        if (failed) return;
        if (end < body.byteLength) return void setTimeout(() => sendFrom(end), 5);
        written = true;
        if (answered) finish();
      });
    };
    sendFrom(0);
  });
}

function rawResultOf(answer: RawHttpAnswer): RawResult {
  return { status: answer.status, headers: new Headers(answer.headers), body: answer.body };
}

describe('request body size', () => {
  let ctx: Started;
  beforeAll(async () => {
    ctx = await start();
  });

  it('accepts a body of exactly 1 MiB and refuses one byte more with 413 / 19413, creating nothing', async () => {
    const { sandbox } = ctx;
    const before = sandbox.records.counts().sessions;
    const tooLarge = await post(sandbox, SESSION_PATH, sessionBodyOf(sandbox, 1_048_577), JSON_TYPE);
    const error = expectFailure(tooLarge, 413, SANDBOX_CODES.bodyTooLarge);
    expect(error.code).toBe(19413);
    expect(sandbox.records.counts().sessions).toBe(before);

    const atLimit = await post(sandbox, SESSION_PATH, sessionBodyOf(sandbox, 1_048_576), JSON_TYPE);
    expect(atLimit.status).toBe(201);
    expect(sandbox.records.counts().sessions).toBe(before + 1);
  });

  it('refuses a body declared over the limit in content-length (streamed in full) with 413', async () => {
    const { sandbox } = ctx;
    const before = sandbox.records.counts().sessions;
    const body = sessionBodyOf(sandbox, 1_200_000);
    const answer = await rawHttp(
      sandbox.baseUrl,
      `POST ${SESSION_PATH} HTTP/1.1\r\nhost: 127.0.0.1\r\nx-api-key: ${sandbox.keys.test}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n`,
      body,
      5_000,
    );
    expectFailure(rawResultOf(answer), 413, 19413);
    expect(sandbox.records.counts().sessions).toBe(before);
  });

  it('refuses a body declared over the limit in content-length without waiting for the body (413 at once)', async () => {
    const { sandbox } = ctx;
    const before = sandbox.records.counts().sessions;
    // Only the head is sent: an answer can come only from the declared length.
    const answer = await rawHttp(
      sandbox.baseUrl,
      `POST ${SESSION_PATH} HTTP/1.1\r\nhost: 127.0.0.1\r\nx-api-key: ${sandbox.keys.test}\r\ncontent-type: application/json\r\ncontent-length: 5000000\r\n\r\n`,
      '',
      3_000,
    );
    expectFailure(rawResultOf(answer), 413, 19413);
    expect(answer.headers.connection).toBe('close');
    expect(sandbox.records.counts().sessions).toBe(before);
  });

  it('answers a 10 MB body with 413, closes that connection, and keeps serving fresh clients', async () => {
    const { sandbox } = ctx;
    const before = sandbox.records.counts().sessions;
    const answer = await post(sandbox, SESSION_PATH, sessionBodyOf(sandbox, 10_000_000), JSON_TYPE);
    expectFailure(answer, 413, 19413);
    // The body was dropped, not parsed: the connection is not reused.
    expect(answer.headers.get('connection')).toBe('close');
    expect(sandbox.records.counts().sessions).toBe(before);

    // A fresh client (a new TCP connection) is served.
    const listed = await rawHttp(
      sandbox.baseUrl,
      `GET /external/v1/test/pos/terminals?webcode=${sandbox.webcode} HTTP/1.1\r\nhost: 127.0.0.1\r\nx-api-key: ${sandbox.keys.test}\r\nconnection: close\r\n\r\n`,
    );
    expect(listed.status).toBe(200);
    expect(listed.body.data).toHaveLength(3);
    const created = await raw(sandbox, 'POST', '/payment/session', { body: { ...sessionParams } });
    expect(created.status).toBe(201);
    expect(sandbox.records.counts().sessions).toBe(before + 1);
  });

  it('takes a lower limit from maxBodyBytes: 3 KB refused, 1 KB and exactly the limit accepted', async () => {
    const { sandbox } = await start({ maxBodyBytes: 2_000 });
    expectFailure(await post(sandbox, SESSION_PATH, sessionBodyOf(sandbox, 3_000), JSON_TYPE), 413, 19413);
    expectFailure(await post(sandbox, SESSION_PATH, sessionBodyOf(sandbox, 2_001), JSON_TYPE), 413, 19413);
    expect(sandbox.records.counts().sessions).toBe(0);
    expect((await post(sandbox, SESSION_PATH, sessionBodyOf(sandbox, 1_000), JSON_TYPE)).status).toBe(201);
    expect((await post(sandbox, SESSION_PATH, sessionBodyOf(sandbox, 2_000), JSON_TYPE)).status).toBe(201);
    expect(sandbox.records.counts().sessions).toBe(2);
    // After the 413s the sandbox still answers.
    expect((await raw(sandbox, 'GET', '/pos/terminals')).status).toBe(200);
  });
});

describe('JSON nesting depth', () => {
  let ctx: Started;
  beforeAll(async () => {
    ctx = await start();
  });
  const valid = () => JSON.stringify({ webcode: ctx.sandbox.webcode, ...sessionParams }).slice(0, -1);
  const expectTooDeep = (result: RawResult) => {
    const error = expectFailure(result, 400, 12001);
    expect(error.message).toMatch(/32 levels|deeper|nest/i);
  };

  it('refuses 8 000 levels of objects or arrays with 400 / 12001 before any work', async () => {
    const { sandbox } = ctx;
    // Otherwise valid bodies, with the deep value in an unknown field.
    expectTooDeep(await post(sandbox, SESSION_PATH, `${valid()},"extra":${nestedObjects(8_000)}}`, JSON_TYPE));
    expectTooDeep(await post(sandbox, SESSION_PATH, `${valid()},"extra":${'['.repeat(8_000)}${']'.repeat(8_000)}}`, JSON_TYPE));
    // The bare deep texts, closed or not.
    expectTooDeep(await post(sandbox, SESSION_PATH, '{"a":'.repeat(8_000), JSON_TYPE));
    expectTooDeep(await post(sandbox, SESSION_PATH, '['.repeat(8_000), JSON_TYPE));
    // With an Idempotency-Key too (its canonical form would recurse through the body).
    expectTooDeep(
      await post(sandbox, SESSION_PATH, `${valid()},"extra":${nestedObjects(8_000)}}`, { ...JSON_TYPE, 'idempotency-key': 'deep' }),
    );
    expect(sandbox.records.counts()).toMatchObject({ sessions: 0, idempotency: 0 });
  });

  it('draws the line at 32 levels: 32 accepted, 33 refused', async () => {
    const { sandbox } = ctx;
    // The body itself is level 1.
    expectTooDeep(await post(sandbox, SESSION_PATH, `${valid()},"extra":${nestedObjects(32)}}`, JSON_TYPE));
    expect(sandbox.records.counts().sessions).toBe(0);
    expect((await post(sandbox, SESSION_PATH, `${valid()},"extra":${nestedObjects(31)}}`, JSON_TYPE)).status).toBe(201);
    expect(sandbox.records.counts().sessions).toBe(1);
  });

  it('accepts a body nested 10 levels in unknown fields (ignored), and brackets inside strings do not count', async () => {
    const { sandbox } = ctx;
    const before = sandbox.records.counts().sessions;
    const created = await post(sandbox, SESSION_PATH, `${valid()},"unknown":${nestedObjects(9)},"more":[[[[[[[[[1]]]]]]]]]}`, {
      ...JSON_TYPE,
      'idempotency-key': 'ten-levels',
    });
    expect(created.status).toBe(201);
    expect(created.body.data).not.toHaveProperty('unknown');
    const stored = sandbox.records.session(created.body.data.sessionId);
    expect(stored).toBeDefined();
    expect(stored).not.toHaveProperty('unknown');

    // 200 opening brackets in a string, one after an escaped quote: text, not nesting.
    const description = `say \\"${'{['.repeat(100)}`;
    const bracketed = await post(
      sandbox,
      SESSION_PATH,
      `${valid()},"description":"${description}"}`.replace(`"description":"Order 42",`, ''),
      JSON_TYPE,
    );
    expect(bracketed.status).toBe(201);
    expect(bracketed.body.data.description).toBe(JSON.parse(`"${description}"`));
    expect(sandbox.records.counts().sessions).toBe(before + 2);
  });
});

describe('content type of POST bodies', () => {
  let ctx: Started;
  beforeAll(async () => {
    ctx = await start();
  });
  const body = () => JSON.stringify({ webcode: ctx.sandbox.webcode, ...sessionParams });

  it('answers 415 / 19415 to valid JSON sent as text/plain, creating nothing', async () => {
    const { sandbox } = ctx;
    expectFailure(await post(sandbox, SESSION_PATH, body(), { 'content-type': 'text/plain' }), 415, 19415);
    // fetch's default for a string body.
    expectFailure(await post(sandbox, SESSION_PATH, body()), 415, 19415);
    expectFailure(await post(sandbox, SESSION_PATH, body(), { 'content-type': 'application/jsonp' }), 415, 19415);
    expect(sandbox.records.counts().sessions).toBe(0);
  });

  it('answers 415 / 19415 to a POST with no content-type', async () => {
    const { sandbox } = ctx;
    // A byte body: fetch adds no content-type.
    const result = await post(sandbox, SESSION_PATH, new TextEncoder().encode(body()));
    expectFailure(result, 415, 19415);
    expect(sandbox.records.counts().sessions).toBe(0);
  });

  it('accepts application/json with parameters and in any case', async () => {
    const { sandbox } = ctx;
    expect((await post(sandbox, SESSION_PATH, body(), { 'content-type': 'application/json; charset=utf-8' })).status).toBe(201);
    expect((await post(sandbox, SESSION_PATH, body(), { 'content-type': 'Application/JSON' })).status).toBe(201);
    expect(sandbox.records.counts().sessions).toBe(2);
  });

  it('needs no content-type on a GET', async () => {
    const { sandbox } = ctx;
    const response = await fetch(`${sandbox.baseUrl}/external/v1/test/pos/terminals?webcode=${sandbox.webcode}`, {
      headers: { 'x-api-key': sandbox.keys.test },
    });
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    expect(response.status).toBe(200);
    const text = await fetch(`${sandbox.baseUrl}/external/v1/test/payment/sessions?webcode=${sandbox.webcode}`, {
      headers: { 'x-api-key': sandbox.keys.test, 'content-type': 'text/plain' },
    });
    expect(text.status).toBe(200);
  });
});

describe('malformed percent-encoding in a path id', () => {
  let ctx: Started;
  beforeAll(async () => {
    ctx = await start();
  });

  it.each([
    '/payment/session/%E0%A4%A',
    '/payment/session/%E0%A4%A/modifications',
    '/pos/payment/%E0%A4%A/modifications',
    '/payment/session/%ZZ',
    '/payment/session/%',
  ])('GET %s answers 404 / 19404, not 500', async (path) => {
    const { sandbox } = ctx;
    const response = await fetch(`${sandbox.baseUrl}/external/v1/test${path}?webcode=${sandbox.webcode}`, {
      headers: { 'x-api-key': sandbox.keys.test },
    });
    expectFailure(await answerOf(response), 404, 19404);
  });
});

describe('over-long URLs and request heads', () => {
  let ctx: Started;
  beforeAll(async () => {
    ctx = await start();
  });
  const terminals = () => `${ctx.sandbox.baseUrl}/external/v1/test/pos/terminals?webcode=${ctx.sandbox.webcode}&q=`;
  const expectHeadTooLarge = (answer: RawHttpAnswer) => {
    expect(answer.status).toBe(431);
    expect(answer.headers['content-type']).toMatch(/^application\/json/);
    expectFailure(rawResultOf(answer), 431, 19431);
  };

  it('answers 431 / 19431 with the envelope to a URL over 8 192 characters, and serves one of 8 192', async () => {
    const { sandbox } = ctx;
    const headers = { 'x-api-key': sandbox.keys.test };
    const long = await fetch(`${terminals()}${'a'.repeat(10_000)}`, { headers });
    expect(long.headers.get('content-type')).toMatch(/^application\/json/);
    expectFailure(await answerOf(long), 431, 19431);

    const exact = `${terminals()}${'a'.repeat(8_192 - terminals().length)}`;
    expect(exact.length).toBe(8_192);
    expect((await fetch(exact, { headers })).status).toBe(200);
    expectFailure(await answerOf(await fetch(`${exact}a`, { headers })), 431, 19431);
  });

  it('answers 431 / 19431 with a JSON envelope to a request head over 16 KB (a 20 000-character URL)', async () => {
    const { sandbox } = ctx;
    const path = `/external/v1/test/pos/terminals?webcode=${sandbox.webcode}&q=${'a'.repeat(20_000)}`;
    const answer = await rawHttp(sandbox.baseUrl, `GET ${path} HTTP/1.1\r\nhost: 127.0.0.1\r\nx-api-key: ${sandbox.keys.test}\r\n\r\n`);
    expectHeadTooLarge(answer);
  });

  it('answers 431 / 19431 with a JSON envelope to a request head over 16 KB (one 20 000-character header)', async () => {
    const { sandbox } = ctx;
    const answer = await rawHttp(
      sandbox.baseUrl,
      `GET /external/v1/test/pos/terminals?webcode=${sandbox.webcode} HTTP/1.1\r\nhost: 127.0.0.1\r\nx-api-key: ${sandbox.keys.test}\r\nx-padding: ${'b'.repeat(20_000)}\r\n\r\n`,
    );
    expectHeadTooLarge(answer);
    // The sandbox keeps serving.
    expect((await raw(sandbox, 'GET', '/pos/terminals')).status).toBe(200);
  });
});

describe('every failure carries an integer code', () => {
  let ctx: Started;
  beforeAll(async () => {
    ctx = await start({ extraKeys: [{ key: 'sk_test_elsewhere', environment: 'test', ipAllowList: ['10.9.8.7'] }] });
  });

  it('unknown path 404 / 19404, wrong method 405 / 19405, unknown session 404 / 19404', async () => {
    const { sandbox } = ctx;
    expectFailure(await raw(sandbox, 'GET', '/no/such/endpoint'), 404, 19404);
    expectFailure(await raw(sandbox, 'GET', '/no/such/endpoint', { env: 'live' }), 404, 19404);
    expectFailure(await answerOf(await fetch(`${sandbox.baseUrl}/nothing/here`)), 404, 19404);
    expectFailure(await raw(sandbox, 'GET', '/payment/session'), 405, 19405);
    expectFailure(await raw(sandbox, 'POST', '/payment/sessions', { body: {} }), 405, 19405);
    const put = await fetch(`${sandbox.baseUrl}/external/v1/test/payment/refund`, {
      method: 'PUT',
      headers: { 'x-api-key': sandbox.keys.test, ...JSON_TYPE },
      body: '{}',
    });
    expectFailure(await answerOf(put), 405, 19405);
    expectFailure(await raw(sandbox, 'GET', `/payment/session/${sandbox.webcode}-EXTT-1`), 404, 19404);
    expectFailure(await raw(sandbox, 'GET', `/payment/session/${sandbox.webcode}-EXTT-1/modifications`), 404, 19404);
    expectFailure(await raw(sandbox, 'GET', `/pos/payment/${sandbox.webcode}-POSXT-1/modifications`), 404, 19404);
  });

  it('same Idempotency-Key with another body: 409 / 19409; on another endpoint: 409 / 19410', async () => {
    const { sandbox } = ctx;
    const first = await raw(sandbox, 'POST', '/payment/session', { idempotencyKey: 'conflict-1', body: { ...sessionParams } });
    expect(first.status).toBe(201);
    const sessions = sandbox.records.counts().sessions;

    const otherBody = await raw(sandbox, 'POST', '/payment/session', {
      idempotencyKey: 'conflict-1',
      body: { ...sessionParams, description: 'Order 43' },
    });
    const bodyError = expectFailure(otherBody, 409, 19409);
    expect(bodyError.message).toBe('Idempotency key reused with a different request body.');

    const otherEndpoint = await raw(sandbox, 'POST', '/pos/payment', {
      idempotencyKey: 'conflict-1',
      body: { poiId: 'V400m-TEST-000001', amount: { value: 1000, currency: 'EUR' } },
    });
    const endpointError = expectFailure(otherEndpoint, 409, 19410);
    expect(endpointError.message).toBe('Idempotency key already used for a different endpoint.');
    expect(sandbox.records.counts()).toMatchObject({ sessions, posPayments: 0 });
  });

  it('a client address outside the key allow-list: 403 / 19403', async () => {
    const { sandbox } = ctx;
    expectFailure(await raw(sandbox, 'GET', '/pos/terminals', { key: 'sk_test_elsewhere' }), 403, 19403);
    expectFailure(await raw(sandbox, 'POST', '/payment/session', { key: 'sk_test_elsewhere', body: { ...sessionParams } }), 403, 19403);
  });
});

describe('idempotency entries expire on the sandbox clock', () => {
  let ctx: Started;
  let clock: ManualClock;
  beforeAll(async () => {
    clock = manualClock();
    ctx = await start({ clock });
  });
  const create = (key: string, description = 'Order 42') =>
    raw(ctx.sandbox, 'POST', '/payment/session', { idempotencyKey: key, body: { ...sessionParams, description } });

  it('replays within 24 h (23 h later) and runs the request again after 24 h', async () => {
    const first = await create('ttl-24h');
    expect(first.status).toBe(201);
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    const sessionId = first.body.data.sessionId as string;

    await clock.advance(23 * HOUR);
    const replay = await create('ttl-24h');
    expect(replay.status).toBe(201);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.body.data.sessionId).toBe(sessionId);
    expect(ctx.sandbox.records.counts().sessions).toBe(1);

    await clock.advance(HOUR + 1_000);
    const again = await create('ttl-24h');
    expect(again.status).toBe(201);
    expect(again.headers.get('idempotent-replayed')).toBeNull();
    expect(again.body.data.sessionId).not.toBe(sessionId);
    expect(ctx.sandbox.records.counts().sessions).toBe(2);
    // The new run is what the key replays from now on.
    const replayOfNew = await create('ttl-24h');
    expect(replayOfNew.headers.get('idempotent-replayed')).toBe('true');
    expect(replayOfNew.body.data.sessionId).toBe(again.body.data.sessionId);
  });

  it('accepts a key reused with a different body once the entry expired (409 before)', async () => {
    expect((await create('ttl-body')).status).toBe(201);
    await clock.advance(12 * HOUR);
    expectFailure(await create('ttl-body', 'Order 43'), 409, 19409);
    await clock.advance(12 * HOUR + 1_000);
    const reused = await create('ttl-body', 'Order 43');
    expect(reused.status).toBe(201);
    expect(reused.headers.get('idempotent-replayed')).toBeNull();
    expect(reused.body.data.description).toBe('Order 43');
  });

  it('takes a shorter lifetime from idempotencyTtlMs', async () => {
    const short = manualClock();
    const { sandbox } = await start({ clock: short, idempotencyTtlMs: 60_000 });
    const send = () => raw(sandbox, 'POST', '/payment/session', { idempotencyKey: 'ttl-60s', body: { ...sessionParams } });
    const first = await send();
    expect(first.status).toBe(201);
    await short.advance(59_000);
    const replay = await send();
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.body.data.sessionId).toBe(first.body.data.sessionId);
    await short.advance(2_000);
    const again = await send();
    expect(again.status).toBe(201);
    expect(again.headers.get('idempotent-replayed')).toBeNull();
    expect(again.body.data.sessionId).not.toBe(first.body.data.sessionId);
    expect(sandbox.records.counts().sessions).toBe(2);
  });
});

const DELIVER_AT_ACCEPTED = [
  '2026-12-01T10:00',
  '2026-12-01T10:00Z',
  '2026-12-01T10:00+01:00',
  '2026-12-01T10:00:00',
  '2026-12-01T10:00:00.123Z',
  '2026-12-01T10:00:00,5+05:30',
  '2026-12-01T10:00:00-0800',
  '2026-12-01T10:00:00+01',
  '20261201T100000Z',
  '2028-02-29T10:00:00Z',
];
const DELIVER_AT_REFUSED = [
  '2026-02-30T10:00:00Z',
  '2027-02-29T10:00:00Z',
  '2026-13-01T10:00:00Z',
  '2026-12-01T24:00:00Z',
  '2026-12-01T10:60Z',
  '2026-12-01',
  '2026-12-01 10:00:00',
  'tomorrow',
  '2026-12-01T10:00:00+25:00',
];

describe('deliverAt (POST /payment/session)', () => {
  let ctx: Started;
  beforeAll(async () => {
    ctx = await start();
  });

  it.each(DELIVER_AT_ACCEPTED)('accepts %s (201, kept as sent)', async (deliverAt) => {
    const result = await raw(ctx.sandbox, 'POST', '/payment/session', { body: { ...sessionParams, deliverAt } });
    expect(result.status).toBe(201);
    expect(ctx.sandbox.records.session(result.body.data.sessionId)?.deliverAt).toBe(deliverAt);
  });

  it.each(DELIVER_AT_REFUSED)('refuses %s with 400 / 12002', async (deliverAt) => {
    const before = ctx.sandbox.records.counts().sessions;
    const error = expectFailure(await raw(ctx.sandbox, 'POST', '/payment/session', { body: { ...sessionParams, deliverAt } }), 400, 12002);
    expect(error.message).toMatch(/deliverAt/);
    expect(ctx.sandbox.records.counts().sessions).toBe(before);
  });

  it('refuses a deliverAt that is not a string with 400 / 12002', async () => {
    expectFailure(
      await raw(ctx.sandbox, 'POST', '/payment/session', { body: { ...sessionParams, deliverAt: 1_764_583_200_000 } }),
      400,
      12002,
    );
  });

  it('isIsoDateTime agrees with the same lists', () => {
    for (const value of DELIVER_AT_ACCEPTED) expect(isIsoDateTime(value), value).toBe(true);
    for (const value of DELIVER_AT_REFUSED) expect(isIsoDateTime(value), value).toBe(false);
  });
});

describe('failed attempts carry a payment reference', () => {
  let ctx: Started;
  beforeAll(async () => {
    ctx = await start();
  });
  const failedAttempt = async (holderName: string) => {
    const created = await raw(ctx.sandbox, 'POST', '/payment/session', { body: { ...sessionParams } });
    expect(created.status).toBe(201);
    const answer = await submitForm(created.body.data.paymentUrl, { holderName });
    expect(answer.target?.startsWith(URL_KO)).toBe(true);
    const session = await raw(ctx.sandbox, 'GET', `/payment/session/${created.body.data.sessionId}`);
    expect(session.status).toBe(200);
    return session.body.data;
  };

  it('DECLINED: attempts[0] is refused with a string -PXTT- reference', async () => {
    const session = await failedAttempt('DECLINED');
    expect(session.status).toBe('failed');
    expect(session.attempts).toHaveLength(1);
    expect(typeof session.attempts[0].paymentReference).toBe('string');
    expect(session.attempts[0].paymentReference).toMatch(new RegExp(`^${ctx.sandbox.webcode}-PXTT-\\d+$`));
    expect(session.attempts[0].status).toBe('refused');
  });

  it('ERROR: attempts[0] has status error and a string -PXTT- reference', async () => {
    const session = await failedAttempt('ERROR');
    expect(session.attempts).toHaveLength(1);
    expect(session.attempts[0].paymentReference).toMatch(/-PXTT-\d+$/);
    expect(session.attempts[0].status).toBe('error');
  });

  it('every scripted decline gives a distinct string reference with status refused', async () => {
    const references = new Set<string>();
    for (const [name, outcome] of Object.entries(TEST_CARDHOLDER_NAMES)) {
      if (outcome.result !== 'declined') continue;
      const session = await failedAttempt(name.toLowerCase());
      expect(session.attempts[0], name).toMatchObject({ paymentReference: expect.stringMatching(/-PXTT-\d+$/), status: 'refused' });
      references.add(session.attempts[0].paymentReference);
    }
    expect(references.size).toBe(6);
  });
});

describe('nothing a client sends makes a 500', () => {
  let ctx: Started;
  beforeAll(async () => {
    ctx = await start({ clock: manualClock(), seed: 7 });
  });

  it('survives 200 seeded random requests: no 500, every non-2xx the envelope with an integer code', async () => {
    const { sandbox, test } = ctx;
    // Real references, so that some modifications and lookups reach records.
    const sale = await paidSession(test);
    const preAuth = await paidSession(test, { isPreAuth: true });
    const pos = await raw(sandbox, 'POST', '/pos/payment', {
      body: { poiId: 'V400m-TEST-000001', amount: { value: 1000, currency: 'EUR' } },
    });
    expect(pos.status).toBe(200);
    const sessionIds = [sale.sessionId, preAuth.sessionId, `${sandbox.webcode}-EXTT-1`];
    const references = [
      sale.paymentReference,
      preAuth.paymentReference,
      pos.body.data.posPaymentId as string,
      `${sandbox.webcode}-PXTT-999`,
    ];

    const random = seededRandom(20_260_101);
    const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;
    const chance = (p: number) => random() < p;
    const randomText = (max: number) => {
      const alphabet = ['a', 'Z', '0', '-', '_', '%', '%2F', '%E0%A4%A', '/', '..', ' ', '{', '"', '\\', 'é', '😀', '\u0000', '\ud800'];
      let text = '';
      for (let length = Math.floor(random() * max); length > 0; length--) text += pick(alphabet);
      return text;
    };
    // Percent-encoded, or sometimes as typed (malformed escapes included); a lone surrogate as invalid UTF-8 bytes.
    const segment = (text: string) =>
      (chance(0.3)
        ? text.replace(/[\ud800-\udfff]/g, '%ED%A0%80')
        : Array.from(text, (char) => (/^[\ud800-\udfff]$/.test(char) ? '%ED%A0%80' : encodeURIComponent(char))).join('')) || 'z';
    const randomValue = (depth: number): unknown => {
      switch (Math.floor(random() * (depth > 3 ? 6 : 8))) {
        case 0:
          return null;
        case 1:
          return chance(0.5);
        case 2:
          return pick([0, -1, 1.5, 2599, 1e21, -0, Number.MAX_SAFE_INTEGER, 2 ** 53 + 2, 4255, 1099, 1077]);
        case 3:
          return randomText(20);
        case 4:
          return pick([
            'EUR',
            'JPY',
            '',
            'V400m-TEST-000001',
            'P400Plus-TEST-000003',
            'https://shop.example/ok',
            'FR',
            'zz',
            ...references,
          ]);
        case 5:
          return pick(['2026-12-01T10:00:00Z', '2026-02-30T10:00:00Z', 'x'.repeat(300)]);
        case 6:
          return Array.from({ length: Math.floor(random() * 4) }, () => randomValue(depth + 1));
        default: {
          const object: Record<string, unknown> = {};
          for (let count = Math.floor(random() * 5); count > 0; count--) {
            const name = pick(['amount', 'value', 'currency', 'webcode', '__proto__', 'constructor', 'toString', 'poiId', randomText(6)]);
            object[name] = randomValue(depth + 1);
          }
          return object;
        }
      }
    };
    const amount = () => ({ value: pick([1, 100, 1000, 2599, 1077, 1099, 1055, 99_999]), currency: pick(['EUR', 'EUR', 'GBP']) });
    const baseBodies: Record<string, () => Record<string, unknown>> = {
      '/payment/session': () => ({ ...sessionParams, isPreAuth: chance(0.3), deliverAt: '2026-12-01T10:00:00Z', countryCode: 'FR' }),
      '/payment/refund': () => ({ paymentReference: pick(references), amount: amount(), reason: 'fuzz' }),
      '/payment/capture': () => ({ paymentReference: pick(references), amount: amount() }),
      '/payment/cancel': () => ({ paymentReference: pick(references) }),
      '/payment/extend': () => ({ paymentReference: pick(references) }),
      '/pos/payment': () => ({ poiId: pick(['V400m-TEST-000001', 'S1F2-TEST-000002', 'P400Plus-TEST-000003', 'nope']), amount: amount() }),
    };
    const randomBody = (path: string): string | Uint8Array => {
      switch (Math.floor(random() * 8)) {
        case 0:
        case 1:
        case 2: {
          // The endpoint's own body, as is or with up to three fields replaced or removed.
          const body: Record<string, unknown> = { webcode: sandbox.webcode, ...(baseBodies[path] ?? baseBodies['/payment/session'])?.() };
          for (let count = chance(0.5) ? 0 : 1 + Math.floor(random() * 3); count > 0; count--) {
            const field = pick([...Object.keys(body), 'amount', 'urlOk', 'description', 'customReference', 'shopperLocale', 'isPreAuth']);
            if (chance(0.3)) delete body[field];
            else body[field] = randomValue(1);
          }
          return JSON.stringify(body);
        }
        case 3:
          return JSON.stringify(randomValue(0));
        case 4:
          return new Uint8Array(Array.from({ length: Math.floor(random() * 64) }, () => Math.floor(random() * 256)));
        case 5:
          return pick([
            '',
            'null',
            '[]',
            '{',
            '{"webcode":',
            '"text"',
            `{"webcode":"${sandbox.webcode}"}`,
            '{"webcode":"SANDBOX","amount":{"value":1e400,"currency":"EUR"}}',
          ]);
        case 6:
          return `{"webcode":"${sandbox.webcode}","x":${'['.repeat(Math.floor(random() * 60))}1${']'.repeat(Math.floor(random() * 60))}}`;
        default:
          return JSON.stringify({ webcode: sandbox.webcode, nested: randomValue(0) });
      }
    };
    const routes: [string, () => string][] = [
      ['POST', () => '/payment/session'],
      ['GET', () => '/payment/sessions'],
      ['GET', () => `/payment/session/${chance(0.7) ? pick(sessionIds) : segment(randomText(12))}`],
      ['GET', () => `/payment/session/${chance(0.7) ? pick(sessionIds) : segment(randomText(12))}/modifications`],
      ['POST', () => '/payment/refund'],
      ['POST', () => '/payment/capture'],
      ['POST', () => '/payment/cancel'],
      ['POST', () => '/payment/extend'],
      ['GET', () => `/pos/payment/${chance(0.5) ? pick(references) : pick(['%E0%A4%A', '%', segment(randomText(8))])}/modifications`],
      ['GET', () => '/modifications'],
      ['GET', () => '/pos/terminals'],
      ['POST', () => '/pos/payment'],
      ['GET', () => '/pos/payments'],
    ];
    const randomQuery = () => {
      const query = new URLSearchParams();
      if (chance(0.85)) query.set('webcode', chance(0.9) ? sandbox.webcode : randomText(5));
      const names = ['take', 'cursor', 'status', 'order', 'type', 'syncFromProvider', 'created_at_start', 'created_at_end'];
      const values = [
        '0',
        '1',
        '100',
        '101',
        '-1',
        '1e2',
        'a1',
        'a0',
        'd99999999999999',
        'asc',
        'desc',
        'true',
        'maybe',
        'completed',
        'success',
        'refund',
      ];
      const dates = ['2026-01-01', '2026-01-01 10:00:00', '+275760-09-13T00:00:00Z', '-271821-04-20T00:00:00Z', '2026-02-30'];
      for (let count = Math.floor(random() * 4); count > 0; count--) query.set(pick(names), pick([...values, ...dates, randomText(8)]));
      const text = query.toString();
      return text === '' ? '' : `?${text}`;
    };

    const failures: string[] = [];
    const statuses = new Map<number, number>();
    for (let index = 0; index < 200; index++) {
      // Most requests aim at a real endpoint with its method, key and content type; the rest are wild.
      const aimed = chance(0.75);
      const [routeMethod, routePath] = pick(routes);
      const method = aimed ? routeMethod : pick(['GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'HEAD']);
      const path = routePath();
      const prefix = aimed ? '/external/v1/test' : pick(['/external/v1/test', '/external/v1', '/external/v2', '']);
      const wildPath = !aimed && chance(0.3) ? `/${segment(randomText(10))}` : path;
      const headers: Record<string, string> = {};
      if (aimed ? chance(0.95) : chance(0.7))
        headers['x-api-key'] = aimed ? sandbox.keys.test : pick([sandbox.keys.test, sandbox.keys.live, 'sk_nope', '']);
      if (chance(0.3)) headers['idempotency-key'] = pick(['k1', 'k2', 'k3', 'a'.repeat(500)]);
      const hasBody = method !== 'GET' && method !== 'HEAD';
      if (hasBody && chance(0.9)) {
        headers['content-type'] =
          aimed && chance(0.9)
            ? pick(['application/json', 'application/json; charset=utf-8'])
            : pick(['text/plain', 'application/x-www-form-urlencoded', 'APPLICATION/JSON;x=1', 'application/json']);
      }
      const url = `${sandbox.baseUrl}${prefix}${wildPath}${randomQuery()}`;
      const body = hasBody ? randomBody(path) : undefined;
      const response = await fetch(url, {
        method,
        headers,
        ...(body === undefined ? {} : { body: typeof body === 'string' ? body : new Uint8Array(body) }),
      });
      const result = await answerOf(response);
      statuses.set(result.status, (statuses.get(result.status) ?? 0) + 1);
      const label = `#${index} ${method} ${url.slice(sandbox.baseUrl.length, sandbox.baseUrl.length + 120)} -> ${result.status}`;
      if (result.status === 500) failures.push(`${label} ${JSON.stringify(result.body).slice(0, 200)}`);
      if (result.status >= 200 && result.status < 300) continue;
      if (method === 'HEAD') {
        // No body on a HEAD answer: its type says what the GET would carry.
        if (!/^(application\/json|text\/html)/.test(response.headers.get('content-type') ?? '')) failures.push(`${label}: no content-type`);
        continue;
      }
      // The payment page answers HTML; every other failure is the JSON envelope.
      if (result.headers.get('content-type')?.startsWith('text/html')) continue;
      const error = result.body?.error;
      if (
        result.body?.success !== false ||
        !Number.isInteger(error?.code) ||
        error?.statusCode !== result.status ||
        typeof error?.message !== 'string' ||
        typeof error?.traceId !== 'string'
      )
        failures.push(`${label} not the envelope: ${JSON.stringify(result.body).slice(0, 200)}`);
    }
    expect(failures).toEqual([]);
    // The fuzz reached the handlers: successes and validation failures, not only routing refusals.
    expect(statuses.get(400) ?? 0).toBeGreaterThan(20);
    expect(
      [...statuses].filter(([status]) => status >= 200 && status < 300).reduce((total, [, count]) => total + count, 0),
    ).toBeGreaterThan(20);
    // Still serving after the fuzz.
    expect((await raw(sandbox, 'GET', '/pos/terminals')).status).toBe(200);
  });

  it.each([
    ['TRACE (a standard method fetch cannot send)', 'TRACE /external/v1/test/pos/terminals'],
    ['a request target with an out-of-range port', 'GET //x:99999/external/v1/test/pos/terminals'],
    ['a request target with an unclosed IPv6 host', 'GET //[/external/v1/test/pos/terminals'],
    ['an absolute-form target with an unclosed IPv6 host', 'GET http://[::1/external/v1/test/pos/terminals'],
  ])('answers %s without a 500, with the envelope and an integer code', async (_name, requestLine) => {
    const { sandbox } = ctx;
    const answer = await rawHttp(
      sandbox.baseUrl,
      `${requestLine}?webcode=${sandbox.webcode} HTTP/1.1\r\nhost: 127.0.0.1\r\nx-api-key: ${sandbox.keys.test}\r\ncontent-length: 0\r\n\r\n`,
    );
    expect(answer.status).toBeGreaterThanOrEqual(400);
    expect(answer.status, JSON.stringify(answer.body)).toBeLessThan(500);
    expectFailure(rawResultOf(answer), answer.status);
  });
});

describe("shop URLs in the page's redirects", () => {
  let ctx: Started;
  beforeAll(async () => {
    ctx = await start();
  });
  const IDN_HOST = 'xn--r8jz45g.example';

  it.each([
    ['CR/LF', 'https://shop.example/ko\r\nSet-Cookie: a=b'],
    ['a tab', 'https://shop.example/k\to'],
    ['NUL', 'https://shop.example/ko\u0000'],
    ['DEL', 'https://shop.example/ko\u007f'],
    ['a C1 control (NEL)', 'https://shop.example/ko\u0085'],
  ])('refuses a urlKo or urlOk with %s at creation with 400 / 12001, creating nothing', async (_name, url) => {
    const { sandbox } = ctx;
    const before = sandbox.records.counts().sessions;
    for (const field of ['urlKo', 'urlOk']) {
      const answer = await raw(sandbox, 'POST', '/payment/session', { body: { ...sessionParams, [field]: url } });
      expect(expectFailure(answer, 400, 12001).message).toBe(`${field} must not contain control characters (CR, LF, tab, ...)`);
    }
    expect(sandbox.records.counts().sessions).toBe(before);
  });

  it('cancels to a non-ASCII urlKo with its ASCII form in Location (punycode host, percent-encoded path)', async () => {
    const { sandbox } = ctx;
    const created = await raw(sandbox, 'POST', '/payment/session', { body: { ...sessionParams, urlKo: 'https://例え.example/k€o?q=é' } });
    expect(created.status).toBe(201);
    const answer = await submitForm(created.body.data.paymentUrl, { action: 'cancel' });
    expect(answer.status).toBe(303);
    expect(answer.headers.get('location')).toBe(`https://${IDN_HOST}/k%E2%82%ACo?q=%C3%A9`);
    expect(sandbox.records.session(created.body.data.sessionId)?.status).toBe('cancelled');
    // A second cancel (a double click) is sent back the same way; the stored URL is the one sent.
    const again = await submitForm(created.body.data.paymentUrl, { action: 'cancel' });
    expect(again.headers.get('location')).toBe(`https://${IDN_HOST}/k%E2%82%ACo?q=%C3%A9`);
    expect(sandbox.records.session(created.body.data.sessionId)?.urlKo).toBe('https://例え.example/k€o?q=é');
  });

  it('refuses an empty client secret at creation: it could not sign the redirect of a payment already made', () => {
    expect(() => createSandbox({ clientSecrets: { test: '' } })).toThrow('clientSecrets must not be empty strings');
  });

  it('pays to a non-ASCII urlOk that has a query: ASCII Location, data appended to the query', async () => {
    const { sandbox } = ctx;
    const created = await raw(sandbox, 'POST', '/payment/session', {
      body: { ...sessionParams, urlOk: 'https://例え.example/ok€?order=42' },
    });
    expect(created.status).toBe(201);
    const answer = await submitForm(created.body.data.paymentUrl);
    expect(answer.status).toBe(303);
    const location = answer.headers.get('location') ?? '';
    expect(location).toMatch(new RegExp(`^https://${IDN_HOST}/ok%E2%82%AC\\?order=42&data=[\\w-]+\\.[\\w-]+\\.[\\w-]+$`));
    expect(sandbox.records.session(created.body.data.sessionId)?.status).toBe('completed');
  });
});

describe('bodies over the limit and requests without a Host are answered with the envelope', () => {
  let ctx: Started;
  beforeAll(async () => {
    ctx = await start();
  });

  it.each([
    ['the API', SESSION_PATH],
    ['the control API', '/_sandbox/reset'],
  ])('20 concurrent clients sending a 10 MB body declared in content-length to %s all read the 413 envelope', async (_name, path) => {
    const { sandbox } = ctx;
    await raw(sandbox, 'POST', '/payment/session', { body: { ...sessionParams } });
    const before = sandbox.records.counts().sessions;
    const body = Buffer.alloc(10_000_000, 'a');
    const head = `POST ${path} HTTP/1.1\r\nhost: 127.0.0.1\r\nx-api-key: ${sandbox.keys.test}\r\ncontent-type: application/json\r\ncontent-length: ${body.byteLength}\r\n\r\n`;
    const answers = await Promise.all(Array.from({ length: 20 }, () => sendInFull(sandbox.baseUrl, head, body)));
    expect(answers.map((answer) => answer.error ?? answer.status)).toEqual(Array(20).fill(413));
    for (const answer of answers) {
      expectFailure(rawResultOf(answer), 413, SANDBOX_CODES.bodyTooLarge);
      expect(answer.headers.connection).toBe('close');
    }
    // Nothing ran: not the reset, not a session.
    expect(sandbox.records.counts().sessions).toBe(before);
  });

  it('20 concurrent clients streaming a 10 MB chunked body (no length declared) all read the 413 envelope', async () => {
    const { sandbox } = ctx;
    const chunk = Buffer.alloc(1_000_000, 'a');
    const body = Buffer.concat([
      ...Array.from({ length: 10 }, () => Buffer.concat([Buffer.from(`${chunk.byteLength.toString(16)}\r\n`), chunk, Buffer.from('\r\n')])),
      Buffer.from('0\r\n\r\n'),
    ]);
    const head = `POST ${SESSION_PATH} HTTP/1.1\r\nhost: 127.0.0.1\r\nx-api-key: ${sandbox.keys.test}\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n`;
    const answers = await Promise.all(Array.from({ length: 20 }, () => sendInFull(sandbox.baseUrl, head, body)));
    expect(answers.map((answer) => answer.error ?? answer.status)).toEqual(Array(20).fill(413));
    for (const answer of answers) expectFailure(rawResultOf(answer), 413, SANDBOX_CODES.bodyTooLarge);
  });

  it('answers an HTTP/1.1 request with no Host header with 400 and the envelope', async () => {
    const { sandbox } = ctx;
    for (const path of [`/external/v1/test/pos/terminals?webcode=${sandbox.webcode}`, '/_sandbox/clock', '/']) {
      const answer = await rawHttp(sandbox.baseUrl, `GET ${path} HTTP/1.1\r\nx-api-key: ${sandbox.keys.test}\r\n\r\n`);
      expect(expectFailure(rawResultOf(answer), 400, 12001).message).toBe('Host header is required (HTTP/1.1)');
    }
  });
});

describe('DNS rebinding: a Host that is not the sandbox’s gets 421', () => {
  let ctx: Started;
  beforeAll(async () => {
    ctx = await start({ allowedHosts: ['payments-sandbox.test:8443'] });
  });

  /** A GET (or POST with an empty JSON body) with this Host, the Test key and a form-token-free answer read as text. */
  function withHost(host: string, method: 'GET' | 'POST', path: string): Promise<RawHttpAnswer> {
    const body = method === 'POST' ? 'content-type: application/json\r\ncontent-length: 2\r\n\r\n{}' : '\r\n';
    return rawHttp(ctx.sandbox.baseUrl, `${method} ${path} HTTP/1.1\r\nhost: ${host}\r\nx-api-key: ${ctx.sandbox.keys.test}\r\n${body}`);
  }

  it('refuses /_sandbox/reset with Host: attacker.example and the right key: 421, the envelope, nothing reset', async () => {
    const { sandbox } = ctx;
    await raw(sandbox, 'POST', '/payment/session', { body: { ...sessionParams } });
    const before = sandbox.records.counts().sessions;
    expect(before).toBeGreaterThan(0);
    const answer = await withHost('attacker.example', 'POST', '/_sandbox/reset');
    expect(expectFailure(rawResultOf(answer), 421, SANDBOX_CODES.misdirected).message).toContain('Host attacker.example does not name');
    expect(sandbox.records.counts().sessions).toBe(before);
  });

  it.each([
    'attacker.example',
    'attacker.example:80',
    'localhost.attacker.example',
    '127.0.0.1.nip.io',
    'payments-sandbox.test.attacker.example',
  ])('refuses the API and the control API for Host %s with 421 and the envelope', async (host) => {
    const { sandbox } = ctx;
    for (const path of [`/external/v1/test/pos/terminals?webcode=${sandbox.webcode}`, '/_sandbox/clock']) {
      expectFailure(rawResultOf(await withHost(host, 'GET', path)), 421, SANDBOX_CODES.misdirected);
    }
  });

  it('answers the dashboard and the payment page with a plain 421 page: no form token, no session', async () => {
    const { sandbox } = ctx;
    const created = await raw(sandbox, 'POST', '/payment/session', { body: { ...sessionParams } });
    const payPath = new URL(created.body.data.paymentUrl).pathname;
    for (const path of ['/', '/test/sessions', `/test/sessions/${created.body.data.sessionId}`, payPath]) {
      const answer = await withHost('attacker.example:8080', 'GET', path);
      expect(answer.status, path).toBe(421);
      expect(answer.headers['content-type']).toMatch(/^text\/html/);
      expect(answer.body).toContain('Misdirected request');
      expect(answer.body).not.toMatch(/name="token"|<form/);
      expect(answer.body).not.toContain(created.body.data.sessionId);
    }
    // The page was not opened: its countdown did not start.
    expect(sandbox.records.session(created.body.data.sessionId)?.openedAt ?? null).toBeNull();
  });

  it.each([
    '127.0.0.1',
    'localhost:3000',
    'LOCALHOST',
    'sandbox.localhost',
    '[::1]:4010',
    '127.1.2.3',
    'payments-sandbox.test',
    'payments-sandbox.test:9999',
  ])('serves Host %s (a loopback name, the bound address or a declared host, any port)', async (host) => {
    const { sandbox } = ctx;
    const answer = await withHost(host, 'GET', `/external/v1/test/pos/terminals?webcode=${sandbox.webcode}`);
    expect(answer.status).toBe(200);
    expect((await withHost(host, 'GET', '/')).status).toBe(200);
  });

  it('refuses an allowedHosts entry that is not a host name', () => {
    expect(() => createSandbox({ allowedHosts: ['http://x.example/path'] })).toThrow(
      /allowedHosts: "http:\/\/x.example\/path" is not a host name/,
    );
  });
});
