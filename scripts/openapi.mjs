#!/usr/bin/env node
/**
 * Regenerates the committed copies of the OpenAPI documents (docs/openapi.json, and the sandbox's
 * control API in docs/sandbox-control.openapi.json) from the sources, as the build makes
 * dist/openapi.json and the sandbox serves both. test/openapi.test.ts fails when a copy is stale.
 */
import { writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const repo = fileURLToPath(new URL('..', import.meta.url));

/** The generators, bundled in memory from src/ and imported. */
const bundle = await build({
  absWorkingDir: repo,
  stdin: {
    contents: [
      "export { DEFAULT_SERVERS, openApiDocument } from './src/openapi/document.ts';",
      "export { controlApiDocument } from './src/sandbox/control/openapi.ts';",
    ].join('\n'),
    resolveDir: repo,
    loader: 'ts',
  },
  bundle: true,
  write: false,
  format: 'esm',
  platform: 'node',
  logLevel: 'warning',
});
const { DEFAULT_SERVERS, openApiDocument, controlApiDocument } = await import(
  `data:text/javascript;base64,${Buffer.from(bundle.outputFiles[0].contents).toString('base64')}`
);

const json = (value) => `${JSON.stringify(value, null, 2)}\n`;
await writeFile(new URL('../docs/openapi.json', import.meta.url), json(openApiDocument()));
await writeFile(new URL('../docs/sandbox-control.openapi.json', import.meta.url), json(controlApiDocument(DEFAULT_SERVERS)));
console.log('Wrote docs/openapi.json and docs/sandbox-control.openapi.json');
