import { emptyState, type SandboxState } from './records.js';

/** A JSON file holding the sandbox state, replaced atomically on every save. */
export interface FileStore {
  load(): SandboxState | undefined;
  save(state: SandboxState): void;
}

interface FsModule {
  mkdirSync(path: string, options: { recursive: true }): void;
  readFileSync(path: string, encoding: 'utf8'): string;
  writeFileSync(path: string, data: string): void;
  renameSync(from: string, to: string): void;
  existsSync(path: string): boolean;
}

/**
 * Opens `dir/sandbox-state.json`. Saves write a temporary file and rename it over the old one, so
 * a crash leaves either the old state or the new one, never half of each.
 */
export function openFileStore(dir: string): FileStore {
  const fs = (globalThis as { process?: { getBuiltinModule?: (name: string) => unknown } }).process?.getBuiltinModule?.('node:fs') as
    | FsModule
    | undefined;
  if (!fs) throw new Error('dataDir needs Node.js 22 or later');
  fs.mkdirSync(dir, { recursive: true });
  const file = `${dir.replace(/\/+$/, '')}/sandbox-state.json`;
  let sequence = 0;
  return {
    load() {
      if (!fs.existsSync(file)) return undefined;
      return { ...emptyState(), ...(JSON.parse(fs.readFileSync(file, 'utf8')) as SandboxState) };
    },
    save(state) {
      const temporary = `${file}.${(globalThis as { process?: { pid?: number } }).process?.pid ?? 0}.${++sequence}.tmp`;
      fs.writeFileSync(temporary, JSON.stringify(state));
      fs.renameSync(temporary, file);
    },
  };
}
