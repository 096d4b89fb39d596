/**
 * The soak's load generator, in its own process (forked by bench/soak.ts): imports, fetches and
 * deletes at fixed rates against one Latchkey server, keeping a population of live connections.
 * Half the imports are OAuth 2 connections whose tokens expire soon, so refreshes (by the controller,
 * and on fetch when one is due) run all along; the other half are API keys.
 *
 * Phases, told by the parent over IPC: `fill` (imports only, as fast as FILL_IN_FLIGHT allows, until
 * the population is reached), then `steady` (the mix), then `stop`. `counts` answers the counts so
 * far by kind and outcome; each request that is not a 2xx is counted by status (0 and why: no answer).
 */
import { randomInt } from 'node:crypto';

export interface SoakLoadOptions {
  baseUrl: string;
  secretKey: string;
  /** Live connections kept (deletes follow imports once reached). */
  population: number;
  importsPerSecond: number;
  fetchesPerSecond: number;
  /** OAuth 2 imports: the token expires between 1 minute and this many after the import. */
  maxExpiresInSeconds: number;
}

export type SoakLoadCommand = { start: SoakLoadOptions } | 'steady' | 'counts' | 'stop';
export type Kind = 'import' | 'fetch' | 'delete';
export interface SoakLoadCounts {
  live: number;
  ok: Record<Kind, number>;
  /** By kind, then status ("0 <why>": no answer). */
  failed: Record<Kind, Record<string, number>>;
  /** Ticks that skipped requests because too many were still in flight. */
  skipped: number;
}

const TICK_MS = 100;
/** Above the server's own bound on a fetch that waits for another replica's refresh (30 s), so that answer is seen. */
const REQUEST_TIMEOUT_MS = 40_000;
const MAX_IN_FLIGHT = 64;
const FILL_IN_FLIGHT = 8;
const INTEGRATIONS = { keys: 'keys', oauth: 'oauth' } as const;

const counts: Omit<SoakLoadCounts, 'live'> = {
  ok: { import: 0, fetch: 0, delete: 0 },
  failed: { import: {}, fetch: {}, delete: {} },
  skipped: 0,
};
/** Live connections, oldest first: [integration, connection ID]. */
const live: Array<[string, string]> = [];
let inFlight = 0;
let serial = 0;
let opts: SoakLoadOptions;
let timer: NodeJS.Timeout | undefined;

async function call(kind: Kind, method: string, path: string, body?: unknown): Promise<boolean> {
  inFlight++;
  let status: number | string = 0;
  try {
    const res = await fetch(`${opts.baseUrl}${path}`, {
      method,
      headers: { authorization: `Bearer ${opts.secretKey}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
      signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
    });
    status = res.status;
    await res.arrayBuffer();
  } catch (err) {
    // No answer: counted as 0 with what failed (a timeout, a reset), e.g. "0 TimeoutError", "0 UND_ERR_SOCKET".
    const e = err as { name?: string; cause?: { code?: string } };
    status = `0 ${e.cause?.code ?? e.name ?? 'error'}`;
  } finally {
    inFlight--;
  }
  if (typeof status === 'number' && status >= 200 && status < 300) {
    counts.ok[kind]++;
    return true;
  }
  counts.failed[kind][status] = (counts.failed[kind][status] ?? 0) + 1;
  return false;
}

async function importOne(): Promise<void> {
  const n = serial++;
  const oauth = n % 2 === 1;
  const connectionId = `soak-${n}`;
  const integration = oauth ? INTEGRATIONS.oauth : INTEGRATIONS.keys;
  const credentials = oauth
    ? {
        type: 'OAUTH2',
        access_token: `at.soak-${n}.0`,
        refresh_token: `rt.soak-${n}.0`,
        expires_at: new Date(Date.now() + randomInt(60, opts.maxExpiresInSeconds + 1) * 1000).toISOString(),
      }
    : { type: 'API_KEY', apiKey: `soak-key-${n}-0123456789abcdef` };
  const ok = await call('import', 'POST', '/connections', {
    provider_config_key: integration,
    connection_id: connectionId,
    credentials,
    metadata: { plan: n % 3 === 0 ? 'pro' : 'free' },
    end_user: { id: `user-${n}` },
  });
  if (ok) live.push([integration, connectionId]);
}

async function fetchOne(): Promise<void> {
  if (live.length === 0) return;
  const [integration, id] = live[randomInt(0, live.length)]!;
  await call('fetch', 'GET', `/connections/${id}?provider_config_key=${integration}`);
}

async function deleteOldest(): Promise<void> {
  const oldest = live.shift();
  if (!oldest) return;
  await call('delete', 'DELETE', `/connections/${oldest[1]}?provider_config_key=${oldest[0]}`);
}

function failures(kind: Kind): number {
  return Object.values(counts.failed[kind]).reduce((a, b) => a + b, 0);
}

/** Fractional rates per tick carried over, so 2.5/s is 2.5/s. */
const owed = { import: 0, fetch: 0 };

function tick(): void {
  owed.import += (opts.importsPerSecond * TICK_MS) / 1000;
  owed.fetch += (opts.fetchesPerSecond * TICK_MS) / 1000;
  for (; owed.import >= 1; owed.import--) {
    if (inFlight >= MAX_IN_FLIGHT) {
      counts.skipped++;
      continue;
    }
    void importOne();
    if (live.length >= opts.population) void deleteOldest();
  }
  for (; owed.fetch >= 1; owed.fetch--) {
    if (inFlight >= MAX_IN_FLIGHT) {
      counts.skipped++;
      continue;
    }
    void fetchOne();
  }
}

async function fill(): Promise<void> {
  await Promise.all(
    Array.from({ length: FILL_IN_FLIGHT }, async () => {
      // A server that refuses imports for good would keep the fill going for ever: the parent sees the failures.
      while (live.length + inFlight < opts.population && failures('import') < 100) await importOne();
    }),
  );
}

process.on('message', (command: SoakLoadCommand) => {
  if (typeof command === 'object') {
    opts = command.start;
    void fill().then(() => process.send!({ filled: live.length }));
  } else if (command === 'steady') {
    timer = setInterval(tick, TICK_MS);
  } else if (command === 'counts') {
    process.send!({ counts: { ...counts, live: live.length } });
  } else if (command === 'stop') {
    clearInterval(timer);
    const wait = setInterval(() => {
      if (inFlight > 0) return;
      clearInterval(wait);
      process.send!({ stopped: { ...counts, live: live.length } });
    }, 50);
  }
});
