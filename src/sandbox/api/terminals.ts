/**
 * The test terminals: as `GET /pos/terminals` lists them, and the sandbox's own setting of each, its
 * processing time (how long its POS payments take), kept per environment in the tenant's store.
 */
import type { Environment } from '../../core/options.js';
import { TEST_TERMINALS } from '../../testing/index.js';
import { invalid } from '../responses.js';
import type { SandboxStore } from '../store.js';
import { type Answer, notFound } from './context.js';

const TERMINAL_TIMESTAMPS = { createdAt: '2025-01-15T09:00:00.000Z', updatedAt: '2025-06-01T12:00:00.000Z' };

/** The longest processing time a terminal may be given: 10 minutes, past the service's 240 s. */
export const MAX_PROCESSING_MS = 600_000;

export function listTerminals(query: URLSearchParams): Answer {
  const sync = query.get('syncFromProvider');
  if (sync !== null && sync !== 'true' && sync !== 'false') throw invalid('syncFromProvider must be true or false');
  const terminals = TEST_TERMINALS.filter((terminal) => sync !== 'true' || terminal.online);
  return {
    status: 200,
    data: terminals.map((terminal) => ({
      poiId: terminal.poiId,
      status: 'boarded',
      name: terminal.name,
      model: terminal.model,
      ...TERMINAL_TIMESTAMPS,
    })),
  };
}

/** A simulated terminal with the sandbox's setting of it, in one environment. */
export interface TerminalSettings {
  poiId: string;
  name: string;
  model: string;
  /** The offline terminal answers 502 / 13004 at once, whatever its processing time. */
  online: boolean;
  /** How long its POS payments take, in ms; `null`: the sandbox's `posDelayMs`. */
  processingMs: number | null;
}

/** The simulated terminals with their settings in `environment`, in the documented order. */
export function terminalSettings(store: SandboxStore, environment: Environment): TerminalSettings[] {
  return TEST_TERMINALS.map(({ poiId, name, model, online }) => ({
    poiId,
    name,
    model,
    online,
    processingMs: store.terminals.processingMs(environment, poiId),
  }));
}

/**
 * Gives a simulated terminal its own processing time (`null`: the sandbox's default again), in the
 * caller's transaction; 404 naming a `poiId` that is not one of them. A payment already at the
 * terminal keeps the time it was sent with.
 */
export function setTerminal(store: SandboxStore, environment: Environment, poiId: string, processingMs: number | null): TerminalSettings {
  if (!TEST_TERMINALS.some((terminal) => terminal.poiId === poiId)) throw notFound(`Terminal ${poiId}`);
  if (processingMs !== null && (!Number.isSafeInteger(processingMs) || processingMs < 0 || processingMs > MAX_PROCESSING_MS))
    throw invalid(`processingMs must be an integer from 0 to ${MAX_PROCESSING_MS}, or null for the default`);
  store.terminals.setProcessingMs(environment, poiId, processingMs);
  const settings = terminalSettings(store, environment).find((terminal) => terminal.poiId === poiId);
  if (!settings) throw notFound(`Terminal ${poiId}`);
  return settings;
}
