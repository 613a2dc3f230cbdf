/**
 * The made tenants of a sandbox with a data folder, kept so that a restart reopens them: their
 * webcodes, names, keys, client secrets and seeds in `DIR/tenants/tenants.json`, readable by its
 * owner only (it holds keys and secrets, as the CLI's ready file and profiles do), and each
 * tenant's store in `DIR/tenants/{WEBCODE}/`.
 */
import { nodeFs, SandboxStoreError } from './store.js';

/** What a made tenant is opened from; the rest is the sandbox's. */
export interface MadeTenant {
  webcode: string;
  /** The name given at creation; the webcode when none was. */
  name: string;
  keys: { test: string; live: string };
  clientSecrets: { test: string; live: string };
  /** Seed of the tenant's own stream, drawn from the sandbox's. */
  seed: number;
}

/** The webcodes a tenant may have: they begin the records' ids (`{webcode}-EXT-...`), so no `-`. */
export const WEBCODE = /^[A-Z0-9_]{1,32}$/;

const LIST_FILE = 'tenants.json';

export class TenantRegistry {
  /** `DIR/tenants`. */
  readonly dir: string;
  readonly #file: string;

  constructor(dataDir: string) {
    this.dir = `${dataDir.replace(/\/+$/, '')}/tenants`;
    this.#file = `${this.dir}/${LIST_FILE}`;
  }

  /** The folder of a made tenant's store. */
  storeDir(webcode: string): string {
    return `${this.dir}/${webcode}`;
  }

  /**
   * The tenants kept, in the order they were made. The folder of a tenant not among them (its
   * removal or its creation was cut short) is deleted: a tenant made later with its webcode starts empty.
   */
  load(): MadeTenant[] {
    const fs = nodeFs();
    if (!fs.existsSync(this.dir)) return [];
    const made = fs.existsSync(this.#file) ? this.#read(fs.readFileSync(this.#file, 'utf8')) : [];
    const kept = new Set(made.map((tenant) => tenant.webcode));
    for (const name of fs.readdirSync(this.dir)) if (WEBCODE.test(name) && !kept.has(name)) this.removeFiles(name);
    return made;
  }

  /** Writes the list whole, through a temporary file: a crash leaves the old list or the new one. */
  save(made: readonly MadeTenant[]): void {
    const fs = nodeFs();
    fs.mkdirSync(this.dir, { recursive: true });
    // Made before by the first tenant's store, with the default mode.
    fs.chmodSync(this.dir, 0o700);
    const temporary = `${this.#file}.tmp`;
    fs.writeFileSync(temporary, `${JSON.stringify({ tenants: made }, null, 2)}\n`, { mode: 0o600 });
    // `mode` applies only to a new file: one left by a crash keeps its own.
    fs.chmodSync(temporary, 0o600);
    fs.renameSync(temporary, this.#file);
  }

  /** Deletes a tenant's store folder. */
  removeFiles(webcode: string): void {
    nodeFs().rmSync(this.storeDir(webcode), { force: true, recursive: true });
  }

  #read(text: string): MadeTenant[] {
    try {
      const tenants = (JSON.parse(text) as { tenants?: unknown } | null)?.tenants;
      if (!Array.isArray(tenants)) throw new Error('no "tenants" list');
      for (const tenant of tenants) if (!isMadeTenant(tenant)) throw new Error('an entry of the wrong shape');
      return tenants as MadeTenant[];
    } catch (error) {
      throw new SandboxStoreError(
        this.#file,
        `The sandbox's list of made tenants ${this.#file} cannot be read (${error instanceof Error ? error.message : String(error)}): move it aside (mv ${this.#file} ${this.#file}.broken) to start without them.`,
      );
    }
  }
}

function isMadeTenant(value: unknown): value is MadeTenant {
  const tenant = value as Partial<MadeTenant> | null;
  const pair = (item: unknown) =>
    typeof item === 'object' &&
    item !== null &&
    ['test', 'live'].every((name) => typeof (item as Record<string, unknown>)[name] === 'string');
  return (
    typeof tenant?.webcode === 'string' &&
    WEBCODE.test(tenant.webcode) &&
    typeof tenant.name === 'string' &&
    pair(tenant.keys) &&
    pair(tenant.clientSecrets) &&
    Number.isSafeInteger(tenant.seed)
  );
}
