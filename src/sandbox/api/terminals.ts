/**
 * The test terminals: as `GET /pos/terminals` lists them, and the sandbox's own settings of each, its
 * processing time (how long its POS payments take) and whether it is online, kept per environment
 * in the tenant's store.
 */
import type { Environment } from '../../core/options.js';
import { TEST_TERMINALS } from '../../testing/index.js';
import { invalid } from '../responses.js';
import type { SandboxStore } from '../store.js';
import { type Answer, notFound } from './context.js';

const TERMINAL_TIMESTAMPS = { createdAt: '2025-01-15T09:00:00.000Z', updatedAt: '2025-06-01T12:00:00.000Z' };

/** The longest processing time a terminal may be given: 10 minutes, past the service's 240 s. */
export const MAX_PROCESSING_MS = 600_000;

/** Whether a simulated terminal is online in `environment`: as set through the controls, else as documented. */
export function isOnline(store: SandboxStore, environment: Environment, poiId: string): boolean {
  return store.terminals.online(environment, poiId) ?? TEST_TERMINALS.some((terminal) => terminal.poiId === poiId && terminal.online);
}

export function listTerminals(store: SandboxStore, environment: Environment, query: URLSearchParams): Answer {
  const sync = query.get('syncFromProvider');
  if (sync !== null && sync !== 'true' && sync !== 'false') throw invalid('syncFromProvider must be true or false');
  const terminals = TEST_TERMINALS.filter((terminal) => sync !== 'true' || isOnline(store, environment, terminal.poiId));
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
  /** An offline terminal answers 502 / 13004 at once, whatever its processing time, and is not listed with `syncFromProvider=true`. */
  online: boolean;
  /** How long its POS payments take, in ms; `null`: the sandbox's `posDelayMs`. */
  processingMs: number | null;
}

/** The simulated terminals with their settings in `environment`, in the documented order. */
export function terminalSettings(store: SandboxStore, environment: Environment): TerminalSettings[] {
  return TEST_TERMINALS.map(({ poiId, name, model }) => ({
    poiId,
    name,
    model,
    online: isOnline(store, environment, poiId),
    processingMs: store.terminals.processingMs(environment, poiId),
  }));
}

/** What a terminal may be given; a field left out keeps its setting, `null` goes back to the default. */
export interface TerminalChange {
  /** Its processing time in ms; `null`: the sandbox's `posDelayMs`. */
  processingMs?: number | null | undefined;
  /** Online or offline; `null`: as the reference simulates it (`P400Plus-TEST-000003` offline, the others online). */
  online?: boolean | null | undefined;
}

/**
 * Gives a simulated terminal its own settings, in the caller's transaction; 404 naming a `poiId`
 * that is not one of them. A payment already at the terminal keeps the time it was sent with.
 */
export function setTerminal(store: SandboxStore, environment: Environment, poiId: string, change: TerminalChange): TerminalSettings {
  if (!TEST_TERMINALS.some((terminal) => terminal.poiId === poiId)) throw notFound(`Terminal ${poiId}`);
  const { processingMs, online } = change;
  if (processingMs === undefined && online === undefined) throw invalid('give processingMs or online (or both)');
  if (processingMs != null && (!Number.isSafeInteger(processingMs) || processingMs < 0 || processingMs > MAX_PROCESSING_MS))
    throw invalid(`processingMs must be an integer from 0 to ${MAX_PROCESSING_MS}, or null for the default`);
  if (processingMs !== undefined) store.terminals.setProcessingMs(environment, poiId, processingMs);
  if (online !== undefined) store.terminals.setOnline(environment, poiId, online);
  const settings = terminalSettings(store, environment).find((terminal) => terminal.poiId === poiId);
  if (!settings) throw notFound(`Terminal ${poiId}`);
  return settings;
}
