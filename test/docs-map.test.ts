/**
 * The README as a map (issue 40): short enough to read in ten minutes (at most 450 lines and
 * 30 000 characters), a table of contents at the top whose entries resolve and name the tasks a
 * newcomer looks for, and each task's section ending with a link to its guide in docs/. Each guide
 * opens with what it is for and what it assumes, and links the API reference; the index lists
 * every guide. (The links themselves are checked by `npm run check:links`, offline.)
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { slug } from './support/markdown.js';

const ROOT = join(import.meta.dirname, '..');
const README = readFileSync(join(ROOT, 'README.md'), 'utf8');
const GUIDES = `https://github.com/payment-service-sdk/payment-service-sdk/blob/main/docs/`;

/** The Markdown without its fenced blocks (whose lines may look like headings or links). */
const prose = (markdown: string) => markdown.replace(/^```[\s\S]*?^```$/gm, '');

interface Section {
  level: number;
  title: string;
  body: string;
}

/** The README's sections, each with the text up to the next heading of any level. */
function sections(markdown: string): Section[] {
  const found: Section[] = [];
  let current: Section | undefined;
  let fence = false;
  for (const line of markdown.split('\n')) {
    if (line.startsWith('```')) fence = !fence;
    const heading = fence ? null : /^(#{1,6}) (.+)$/.exec(line);
    if (heading) {
      current = { level: heading[1]?.length ?? 0, title: heading[2] ?? '', body: '' };
      found.push(current);
    } else if (current) current.body += `${line}\n`;
  }
  return found;
}

describe('the README', () => {
  it('reads in ten minutes: at most 450 lines and 30 000 characters', () => {
    expect(README.split('\n').length).toBeLessThanOrEqual(450);
    expect(README.length).toBeLessThanOrEqual(30_000);
  });

  it('opens with a table of contents, before Install, whose every entry is a heading of the README', () => {
    const all = sections(README);
    const contents = all.find((section) => section.title === 'Contents');
    expect(all.indexOf(contents as Section)).toBe(1); // right after the title and what the package is
    const anchors = new Set(all.map((section) => slug(section.title)));
    const entries = [...(contents?.body ?? '').matchAll(/\]\(#([^)]+)\)/g)].map(([, anchor = '']) => anchor);
    expect(entries.length).toBeGreaterThanOrEqual(15);
    expect(entries.filter((anchor) => !anchors.has(anchor))).toEqual([]);
    // Every ## section is in it.
    const top = all.filter((section) => section.level === 2 && section.title !== 'Contents').map((section) => slug(section.title));
    expect(top.filter((anchor) => !entries.includes(anchor))).toEqual([]);
  });

  it('names in its contents the tasks a newcomer searches for: verify a webhook, refund a payment, test in CI', () => {
    const contents = sections(README).find((section) => section.title === 'Contents')?.body ?? '';
    for (const task of ['verify a webhook', 'refund a payment', 'test in ci']) expect(contents.toLowerCase()).toContain(task);
    for (const heading of ['### Verify a webhook', '## Refund a payment', '### Test in CI']) expect(README).toContain(`\n${heading}\n`);
  });

  it('ends each task section with a link to its guide in docs/', () => {
    const all = sections(README);
    const first = all.findIndex((section) => section.title === 'Configure a client');
    const last = all.findIndex((section) => section.title === 'MCP server');
    expect(first).toBeGreaterThan(0);
    expect(last).toBeGreaterThan(first);
    const tasks = all.slice(first, last + 1).filter((section, index, list) => (list[index + 1]?.level ?? 0) <= section.level);
    expect(tasks.length).toBeGreaterThanOrEqual(14);
    const withoutLink = tasks.filter((section) => {
      const paragraphs = prose(section.body)
        .trim()
        .split(/\n\s*\n/);
      return !(paragraphs.at(-1) ?? '').includes(`](${GUIDES}`);
    });
    expect(withoutLink.map((section) => section.title)).toEqual([]);
  });
});

describe('the guides of docs/', () => {
  const names = readdirSync(join(ROOT, 'docs')).filter((name) => name.endsWith('.md'));
  const taskGuides = names.filter((name) => !['README.md', 'benchmarks.md'].includes(name));

  it('are the ones of the issue', () => {
    expect(taskGuides.sort()).toEqual(
      expect.arrayContaining([
        'cli.md',
        'errors.md',
        'mcp.md',
        'modifications.md',
        'online-payments.md',
        'pos-payments.md',
        'sandbox-container.md',
        'sandbox-control-api.md',
        'sandbox-faults.md',
        'sandbox-tenants-fixtures.md',
        'sandbox.md',
        'testing.md',
        'webhooks.md',
      ]),
    );
  });

  for (const name of taskGuides) {
    it(`${name} opens with what it is for and what it assumes, and links the API reference`, () => {
      const markdown = readFileSync(join(ROOT, 'docs', name), 'utf8');
      const [title = '', opening = ''] = markdown.split(/\n\s*\n/);
      expect(title).toMatch(/^# /);
      expect(opening).toMatch(/^For /);
      expect(opening).toMatch(/assumes/);
      expect(opening).toContain('](README.md#the-api-reference)');
    });
  }

  it('are all listed by the index, docs/README.md, which says where the API reference is', () => {
    const index = readFileSync(join(ROOT, 'docs/README.md'), 'utf8');
    for (const name of names.filter((file) => file !== 'README.md')) expect(index, name).toContain(`](${name})`);
    expect(index).toContain('\n## The API reference\n');
    expect(index).toContain('npm run docs');
  });
});
