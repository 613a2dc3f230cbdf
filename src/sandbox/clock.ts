/** The sandbox clock (the system's, a manual one, or either moved ahead by the control API) and its seeded randomness. */
/** A timer handle of a {@link SandboxClock}. */
export type TimerHandle = { readonly id: number };

/** All time the sandbox uses: injectable, so tests control expiry, delays and retries. */
export interface SandboxClock {
  /** Milliseconds since the Unix epoch. */
  now(): number;
  /** Runs `callback` after `ms`. */
  setTimeout(callback: () => void, ms: number): TimerHandle;
  clearTimeout(handle: TimerHandle): void;
}

/** The real clock. Its timers do not keep a Node process alive. */
export function systemClock(): SandboxClock {
  const timers = new Map<number, ReturnType<typeof setTimeout>>();
  let next = 0;
  return {
    now: () => Date.now(),
    setTimeout(callback, ms) {
      const id = ++next;
      const timer = setTimeout(() => {
        timers.delete(id);
        callback();
      }, ms);
      (timer as { unref?: () => void }).unref?.();
      timers.set(id, timer);
      return { id };
    },
    clearTimeout(handle) {
      clearTimeout(timers.get(handle.id));
      timers.delete(handle.id);
    },
  };
}

/** A clock that moves only when told, for deterministic tests. */
export interface ManualClock extends SandboxClock {
  /** Moves time forward, running every timer that falls due, in order. */
  advance(ms: number): Promise<void>;
  /** Sets the time (forward only), running due timers. */
  set(epochMs: number): Promise<void>;
}

/** A {@link ManualClock} starting at `start` (default 2026-01-01T00:00:00Z). */
export function manualClock(start = Date.UTC(2026, 0, 1)): ManualClock {
  let now = start;
  let next = 0;
  const timers = new Map<number, { at: number; callback: () => void }>();
  const clock: ManualClock = {
    now: () => now,
    setTimeout(callback, ms) {
      const id = ++next;
      timers.set(id, { at: now + Math.max(0, ms), callback });
      return { id };
    },
    clearTimeout(handle) {
      timers.delete(handle.id);
    },
    async advance(ms) {
      await clock.set(now + ms);
    },
    async set(epochMs) {
      for (;;) {
        const due = [...timers.entries()].filter(([, timer]) => timer.at <= epochMs).sort((a, b) => a[1].at - b[1].at || a[0] - b[0])[0];
        if (!due) break;
        timers.delete(due[0]);
        now = Math.max(now, due[1].at);
        due[1].callback();
        // Let promise chains started by the callback settle before the next timer.
        await new Promise((resolve) => setTimeout(resolve, 0));
      }
      now = Math.max(now, epochMs);
    },
  };
  return clock;
}

/** A seedable source of randomness (mulberry32): the same seed gives the same ids and delays. */
export function seededRandom(seed = 1): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

/**
 * A seedable source with 128 bits of state (sfc32), its state drawn from `seed` and `key`: the
 * stream of a made tenant. Streams of mulberry32 ({@link seededRandom}) are all shifts of one cycle
 * of 2^32 draws, so two seeds close on it repeat each other's draws; streams of different keys here
 * have no such relation.
 */
export function keyedRandom(seed: number, key: string): () => number {
  let hash = 0x811c9dc5;
  for (let index = 0; index < key.length; index++) hash = Math.imul(hash ^ key.charCodeAt(index), 0x01000193);
  let a = seed >>> 0;
  let b = hash >>> 0;
  let c = (Math.imul(a ^ (b >>> 16), 0x85ebca6b) ^ b) >>> 0;
  let d = 1;
  const next = (): number => {
    const t = (((a + b) | 0) + d) | 0;
    d = (d + 1) | 0;
    a = b ^ (b >>> 9);
    b = (c + (c << 3)) | 0;
    c = (c << 21) | (c >>> 11);
    c = (c + t) | 0;
    return (t >>> 0) / 4_294_967_296;
  };
  // The first draws still show the seed's bits: mix them away.
  for (let index = 0; index < 15; index++) next();
  return next;
}

/** The sandbox's own clock: another clock moved ahead by an offset, which only grows. */
export interface OffsetClock extends SandboxClock {
  /** How far ahead of the underlying clock this one is, in ms. */
  readonly offsetMs: number;
  /** Moves this clock ahead by `ms` (timers keep their real delays: the caller reschedules). */
  moveAhead(ms: number): void;
  /** Back to the underlying clock's time. */
  resetOffset(): void;
}

/** `base` moved ahead by `offsetMs`: what the control API's clock advance changes. */
export function offsetClock(base: SandboxClock, offsetMs = 0): OffsetClock {
  let offset = offsetMs;
  return {
    now: () => base.now() + offset,
    setTimeout: (callback, ms) => base.setTimeout(callback, ms),
    clearTimeout: (handle) => base.clearTimeout(handle),
    get offsetMs() {
      return offset;
    },
    moveAhead(ms) {
      offset += Math.max(0, ms);
    },
    resetOffset() {
      offset = 0;
    },
  };
}
