// The image's HEALTHCHECK (node:24-slim has no curl): asks the sandbox in this container for its
// OpenAPI document (a HEAD, no key needed) on the port it listens on, and exits 0 when it answers 200.
// The port and address are the sandbox's own: its `--port`/`--host` flags (read from its command
// line, pid 1) or PAYMENT_SANDBOX_PORT/PAYMENT_SANDBOX_HOST, else 4010 on loopback.
const { readFileSync } = require('node:fs');

function commandLine() {
  try {
    return readFileSync('/proc/1/cmdline', 'utf8').split('\0');
  } catch {
    return [];
  }
}

function flag(args, name) {
  let value;
  args.forEach((arg, index) => {
    if (arg === `--${name}`) value = args[index + 1];
    else if (arg.startsWith(`--${name}=`)) value = arg.slice(name.length + 3);
  });
  return value;
}

const args = commandLine();
const port = flag(args, 'port') || process.env.PAYMENT_SANDBOX_PORT || '4010';
const host = flag(args, 'host') || process.env.PAYMENT_SANDBOX_HOST || '127.0.0.1';
const wildcard = host === '0.0.0.0' || host === '::' || host === '[::]';
const address = wildcard ? '127.0.0.1' : host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
fetch(`http://${address}:${port}/openapi.json`, { method: 'HEAD', signal: AbortSignal.timeout(2_500) }).then(
  (response) => process.exit(response.status === 200 ? 0 : 1),
  (error) => {
    console.error(`sandbox on ${address}:${port} does not answer: ${error.message}`);
    process.exit(1);
  },
);
