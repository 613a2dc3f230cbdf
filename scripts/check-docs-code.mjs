// Type-checks every `ts` (and `tsx`, React's JSX) code block of README.md and docs/*.md against the built package, with
// `strict`, as a reader who pastes a block would compile it. Each block is its own module; it must
// import what it uses from the package. The few names the prose gives them (a `client` made in an
// earlier block, an Express `app`, the shop's `order` and its store, the `webhook` the framework
// blocks mount) are declared once in CONTEXT below, so a block cannot lean on anything else. Run
// after `npm run build`: `npm run check:docs`.
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

/** Names the prose around the blocks introduces; every other name must be imported or declared in the block. */
export const CONTEXT = `
import type { Express } from 'express';
import type { D1Database } from '@cloudflare/workers-types/index';
import type { AuthorisationEvent, PaymentClient, PosRecoveryState, WebhookHandler, WebhookStore } from 'payment-service-sdk';

declare global {
  /** The client of the Configure section. */
  const client: PaymentClient;
  /** An Express app (the webhooks and redirect sections). */
  const app: Express;
  /** The order a shop is confirming. */
  const order: { id: string; totalCents: number };
  /** An order in the shop's own store, with the session made for it. */
  interface ShopOrder {
    id: string;
    totalCents: number;
    currency: string;
    sessionId?: string;
  }
  /** The shop's order by its id (the redirect pages) or by a webhook's customReference. */
  function findOrder(id: string | null | undefined): Promise<ShopOrder | undefined>;
  function saveOrder(order: ShopOrder): Promise<void>;
  const sessionId: string;
  const paymentReference: string;
  const posPaymentId: string;
  const poiId: string;
  const token: string;
  const clientSecret: string;
  const savedState: PosRecoveryState;
  const authorisationReceived: Promise<AuthorisationEvent>;
  function saveForLater(state: PosRecoveryState): Promise<void>;
  function markOrderPaid(customReference: string | null | undefined, record: unknown): Promise<void>;
  function markOrderFailed(orderId: string, record: unknown): Promise<void>;
  function recordRefund(refundReference: string): Promise<void>;
  /** The webhook handler of the README's "exactly once" section, mounted by its framework blocks. */
  const webhook: WebhookHandler;
  function shipOrder(orderId: string | null | undefined): Promise<void>;
  /** The D1 store of examples/webhooks/d1-webhook-store.ts. */
  function d1WebhookStore(db: D1Database): WebhookStore;
}
export {};
`;

/** The `ts` (and `tsx`) blocks of a Markdown text, each with the line its code starts on (1-based). */
export function codeBlocks(markdown) {
  const blocks = [];
  const lines = markdown.split('\n');
  for (let index = 0; index < lines.length; index++) {
    const fence = /^```(ts|typescript|tsx)\s*$/.exec(lines[index]);
    if (!fence) continue;
    const start = index + 1;
    let end = start;
    while (end < lines.length && !/^```\s*$/.test(lines[end])) end++;
    blocks.push({ line: start + 1, code: lines.slice(start, end).join('\n'), jsx: fence[1] === 'tsx' });
    index = end;
  }
  return blocks;
}

/** The Markdown files whose blocks are checked: README.md and docs/*.md (not the generated API pages). */
export function documentedFiles(root = ROOT) {
  const docs = readdirSync(join(root, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => join('docs', name));
  return ['README.md', ...docs];
}

/**
 * Compiles the blocks of `files` (paths relative to `root`); returns one line per problem, as
 * `FILE:LINE:COLUMN message`, empty when every block compiles.
 */
export function checkDocsCode({ root = ROOT, files = documentedFiles(root), sources } = {}) {
  // Inside the package, so that `payment-service-sdk` resolves to the built package by its own name.
  const dir = join(root, '.doc-blocks');
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const origins = new Map();
  const names = [join(dir, 'context.d.ts')];
  writeFileSync(names[0], CONTEXT);
  for (const file of files) {
    const markdown = sources?.[file] ?? readFileSync(join(root, file), 'utf8');
    for (const block of codeBlocks(markdown)) {
      const name = join(dir, `${file.replaceAll(/[^\w]/g, '_')}_${block.line}.${block.jsx ? 'tsx' : 'ts'}`);
      // `export {}` makes each block a module of its own, as a pasted file would be.
      writeFileSync(name, `${block.code}\nexport {};\n`);
      origins.set(name, { file, line: block.line });
      names.push(name);
    }
  }
  const program = ts.createProgram(names, {
    strict: true,
    target: ts.ScriptTarget.ES2022,
    lib: ['lib.es2024.d.ts', 'lib.dom.d.ts', 'lib.dom.iterable.d.ts'],
    module: ts.ModuleKind.Preserve,
    moduleResolution: ts.ModuleResolutionKind.Bundler,
    types: ['node'],
    jsx: ts.JsxEmit.ReactJSX,
    skipLibCheck: true,
    noEmit: true,
  });
  const problems = ts.getPreEmitDiagnostics(program).map((diagnostic) => {
    const message = ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n');
    const origin = diagnostic.file && origins.get(diagnostic.file.fileName);
    if (!diagnostic.file || diagnostic.start === undefined) return `(program) TS${diagnostic.code}: ${message}`;
    const { line, character } = diagnostic.file.getLineAndCharacterOfPosition(diagnostic.start);
    const where = origin ? `${origin.file}:${origin.line + line}` : `${relative(root, diagnostic.file.fileName)}:${line + 1}`;
    return `${where}:${character + 1} TS${diagnostic.code}: ${message}`;
  });
  rmSync(dir, { recursive: true, force: true });
  return { blocks: origins.size, problems };
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const { blocks, problems } = checkDocsCode();
  for (const problem of problems) console.error(problem);
  console.log(
    `${blocks} code blocks of README.md and docs/ checked: ${problems.length === 0 ? 'all compile' : `${problems.length} problems`}`,
  );
  process.exit(problems.length === 0 ? 0 : 1);
}
