// The sandbox on loopback in its own process (its event loop is what is measured); prints its base URL.
import { createSandbox } from '../dist/sandbox.mjs';

const sandbox = createSandbox({ posDelayMs: 0 });
const { baseUrl } = await sandbox.listen({ host: '127.0.0.1' });
console.log(JSON.stringify({ baseUrl, apiKey: sandbox.keys.test, webcode: sandbox.webcode }));
process.on('SIGTERM', () => void sandbox.close().then(() => process.exit(0)));
