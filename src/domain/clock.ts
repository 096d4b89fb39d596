/** Time source, injected so tests can move time without touching timers they don't own. */
export interface Clock {
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };
