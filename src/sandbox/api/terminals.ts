/** The test terminals, as `GET /pos/terminals` lists them. */
import { TEST_TERMINALS } from '../../testing/index.js';
import { invalid } from '../responses.js';
import type { Answer } from './context.js';

const TERMINAL_TIMESTAMPS = { createdAt: '2025-01-15T09:00:00.000Z', updatedAt: '2025-06-01T12:00:00.000Z' };

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
