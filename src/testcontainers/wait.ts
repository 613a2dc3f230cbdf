/**
 * The container is ready when the sandbox answers `GET /openapi.json` (no key needed) on the
 * address the test will use: the published port, or the host's 127.0.0.1 with host networking
 * (where testcontainers' own HTTP strategy finds no port binding). A container that exits first
 * fails at once, with the last lines it printed.
 */
import { getContainerRuntimeClient, type WaitStrategy } from 'testcontainers';
import { withoutSecrets } from './startup.js';

type WaitArguments = Parameters<WaitStrategy['waitUntilReady']>;

const DEFAULT_STARTUP_TIMEOUT_MS = 60_000;
const POLL_MS = 100;
const TAIL_LINES = 20;

/** The address of the sandbox, once the container has its ports: published, or on the host's network. */
export type SandboxAddress = (host: string, boundPorts: WaitArguments[1]) => string;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The last lines a container printed, those with keys, client secrets or tokens left out. */
async function lastLines(container: WaitArguments[0]): Promise<string> {
  const client = await getContainerRuntimeClient();
  const stream = await client.container.logs(container, { tail: TAIL_LINES });
  stream.setEncoding('utf8');
  let text = '';
  const ended = new Promise<void>((resolve) => {
    stream.on('data', (chunk: string) => (text += chunk));
    stream.on('end', resolve);
    stream.on('error', () => resolve());
  });
  // A stopped container's log stream ends by itself; the timer only bounds a runtime that hangs.
  await Promise.race([ended, sleep(2_000)]);
  stream.destroy();
  return withoutSecrets(text);
}

/** Waits until `GET <address>/openapi.json` answers 200. */
export class SandboxReadyStrategy implements WaitStrategy {
  #startupTimeoutMs = DEFAULT_STARTUP_TIMEOUT_MS;
  #timeoutSet = false;
  readonly #address: SandboxAddress;

  constructor(address: SandboxAddress) {
    this.#address = address;
  }

  async waitUntilReady(container: WaitArguments[0], boundPorts: WaitArguments[1]): Promise<void> {
    const client = await getContainerRuntimeClient();
    const url = `${this.#address(client.info.containerRuntime.host, boundPorts)}/openapi.json`;
    const deadline = Date.now() + this.#startupTimeoutMs;
    while (Date.now() < deadline) {
      const state = (await client.container.inspect(container)).State;
      if (!state.Running) {
        const lines = await lastLines(container);
        throw new Error(`The sandbox container exited (code ${state.ExitCode}) before answering; its last lines:\n${lines}`);
      }
      try {
        const response = await fetch(url, { signal: AbortSignal.timeout(2_000) });
        await response.body?.cancel();
        if (response.status === 200) return;
      } catch {
        // not listening yet
      }
      await sleep(POLL_MS);
    }
    throw new Error(`The sandbox container did not answer ${url} within ${this.#startupTimeoutMs} ms`);
  }

  withStartupTimeout(startupTimeoutMs: number): this {
    this.#startupTimeoutMs = startupTimeoutMs;
    this.#timeoutSet = true;
    return this;
  }

  isStartupTimeoutSet(): boolean {
    return this.#timeoutSet;
  }

  getStartupTimeout(): number {
    return this.#startupTimeoutMs;
  }
}
