/** Unit tests of when the controller refreshes (no cluster): the margin, and the scheduler's plan with an injected clock. */
import { controllerMetrics } from '../../src/controller/metrics.js';
import { REAUTH_VERSION_ANNOTATION, RefreshScheduler } from '../../src/controller/refresh-scheduler.js';
import { ConnectionCondition } from '../../src/domain/conditions.js';
import { refreshTime } from '../../src/controller/refresh-timing.js';
import type { ConnectionResource } from '../../src/k8s/resources.js';
import type { StoredConnection } from '../../src/k8s/store.js';
import { createLogger } from '../../src/platform/log.js';
import { Registry } from '../../src/platform/metrics.js';
import { eventually } from '../../dev/cluster.js';

const settings = { refreshMarginSeconds: 300, refreshMarginRatio: 0.25 };
const T0 = Date.parse('2030-01-01T00:00:00Z');
const oauth2 = (expiresInS: number | undefined, expiresAt: number) => ({
  type: 'OAUTH2',
  access_token: 'a',
  refresh_token: 'r',
  expires_at: new Date(expiresAt).toISOString(),
  raw: expiresInS === undefined ? {} : { expires_in: expiresInS },
});

describe('refresh margin', () => {
  it('is min(300 s, lifetime × 0.25) before expiry', () => {
    // 10-second token: 2.5 s early
    expect(T0 + 10_000 - refreshTime(oauth2(10, T0 + 10_000), settings)!).toBe(2_500);
    // 5-minute token: 75 s early
    expect(T0 + 300_000 - refreshTime(oauth2(300, T0 + 300_000), settings)!).toBe(75_000);
    // 60-day token: the fixed 5 minutes
    const sixtyDays = 60 * 86_400;
    expect(T0 + sixtyDays * 1000 - refreshTime(oauth2(sixtyDays, T0 + sixtyDays * 1000), settings)!).toBe(300_000);
    // unknown lifetime: the fixed margin
    expect(T0 + 3_600_000 - refreshTime(oauth2(undefined, T0 + 3_600_000), settings)!).toBe(300_000);
    // configurable
    expect(T0 + 3_600_000 - refreshTime(oauth2(3600, T0 + 3_600_000), { refreshMarginSeconds: 60, refreshMarginRatio: 0.5 })!).toBe(60_000);
  });

  it('is undefined for tokens that never expire', () => {
    expect(refreshTime({ type: 'OAUTH2', access_token: 'a', refresh_token: 'r', raw: {} }, settings)).toBeUndefined();
  });
});

/** A scheduler of OAuth 2 tokens with the margins above, at the clock `now()`, over a stand-in store (no cluster). */
function schedulerOver(store: object, now: () => number, opts: Partial<ConstructorParameters<typeof RefreshScheduler>[0]> = {}) {
  return new RefreshScheduler({
    connections: store as never,
    catalog: store as never,
    refresh: async () => undefined,
    nextRefreshAt: (c) => refreshTime(c.credentials, settings),
    isRefreshable: (c) => c.type === 'OAUTH2' && typeof c.refresh_token === 'string',
    events: { record: async () => 'event' },
    clock: { now },
    metrics: controllerMetrics(new Registry()),
    logger: createLogger('silent'),
    ...opts,
  });
}

describe('RefreshScheduler.plan', () => {
  let now = T0;
  const integration = { metadata: { name: 'int', namespace: 'ns' }, spec: { provider: 'p' }, status: { conditions: [] as unknown[] } };
  const store = {
    getIntegration: () => integration,
    getConnectionByName: () => undefined,
    updateConnectionStatus: async () => {
      throw new Error('not in unit tests');
    },
    updateConnection: async () => {
      throw new Error('not in unit tests');
    },
  };
  const scheduler = schedulerOver(store, () => now);
  afterAll(() => scheduler.stop());

  const conn = (
    credentials: StoredConnection['credentials'],
    status: ConnectionResource['status'] = {},
    annotations?: Record<string, string>,
  ): StoredConnection => ({
    resource: {
      apiVersion: 'latchkey.dev/v1alpha1',
      kind: 'Connection',
      metadata: { name: 'c', namespace: 'ns', generation: 1, annotations },
      spec: { integration: 'int', provider: 'p', connectionId: 'c1', id: 1, authMode: credentials.type as 'OAUTH2' },
      status,
    },
    credentials,
    credentialsVersion: '7',
  });

  it('plans at expiry minus margin, whatever the time now', () => {
    now = T0;
    expect(scheduler.plan(conn(oauth2(10, T0 + 10_000)))).toEqual({ kind: 'at', at: T0 + 7_500, retry: false });
    now = T0 + 9_000; // late (say, a restart): due in the past, so at once
    expect(scheduler.plan(conn(oauth2(10, T0 + 10_000)))).toEqual({ kind: 'at', at: T0 + 7_500, retry: false });
  });

  it('after transient failures waits for the backoff written in status', () => {
    now = T0 + 8_000;
    const retryAt = new Date(T0 + 12_000).toISOString();
    expect(scheduler.plan(conn(oauth2(10, T0 + 10_000), { refreshAttempts: 2, nextRefreshAt: retryAt }))).toEqual({
      kind: 'at',
      at: T0 + 12_000,
      retry: true,
    });
    now = T0 + 12_500; // backoff over: due
    expect(scheduler.plan(conn(oauth2(10, T0 + 10_000), { refreshAttempts: 2, nextRefreshAt: retryAt }))).toMatchObject({
      kind: 'at',
      at: T0 + 7_500,
    });
  });

  it('leaves alone tokens that never expire, cannot be renewed, or need re-authorization', () => {
    now = T0;
    expect(scheduler.plan(conn({ type: 'OAUTH2', access_token: 'a', refresh_token: 'r', raw: {} }))).toMatchObject({
      kind: 'none',
      why: 'never expires',
    });
    expect(
      scheduler.plan(conn({ type: 'OAUTH2', access_token: 'a', expires_at: new Date(T0 + 1000).toISOString(), raw: {} })),
    ).toMatchObject({ kind: 'none', why: 'not renewable' });
    expect(scheduler.plan(conn({ type: 'API_KEY', apiKey: 'k' }))).toMatchObject({ kind: 'none' });
    const reauth = {
      conditions: [
        {
          type: ConnectionCondition.NeedsReauthorization,
          status: 'True' as const,
          reason: 'ReauthorizationRequired',
          message: 'm',
          lastTransitionTime: new Date(T0).toISOString(),
        },
      ],
    };
    expect(scheduler.plan(conn(oauth2(10, T0 + 10_000), reauth, { [REAUTH_VERSION_ANNOTATION]: '7' }))).toMatchObject({
      kind: 'none',
      why: 'needs re-authorization',
    });
    // new credentials (another Secret version) lift it
    expect(scheduler.plan(conn(oauth2(10, T0 + 10_000), reauth, { [REAUTH_VERSION_ANNOTATION]: '6' }))).toMatchObject({ kind: 'at' });
  });

  it('waits while the integration is not ready', () => {
    integration.status.conditions = [{ type: 'Ready', status: 'False', reason: 'SecretKeyMissing', message: 'm', lastTransitionTime: '' }];
    expect(scheduler.plan(conn(oauth2(10, T0 + 10_000)))).toMatchObject({ kind: 'none', why: 'integration not ready' });
    integration.status.conditions = [];
  });
});

/** The Integration the scheduler tests' connections use (Ready: no conditions against it). */
const integration = { metadata: { name: 'int', namespace: 'ns' }, spec: { provider: 'p' }, status: { conditions: [] } };

/** An OAuth 2 connection of that integration with these credentials (Secret version `version`). */
function oauth2Connection(name: string, credentials: StoredConnection['credentials'], version: string): StoredConnection {
  return {
    resource: {
      apiVersion: 'latchkey.dev/v1alpha1',
      kind: 'Connection',
      metadata: { name, namespace: 'ns', generation: 1 },
      spec: { integration: 'int', provider: 'p', connectionId: name, id: 1, authMode: 'OAUTH2' },
      status: {},
    },
    credentials,
    credentialsVersion: version,
  };
}

describe('RefreshScheduler order', () => {
  it('runs an overdue connection just taken over ahead of its own overdue ones (all due at the same time)', async () => {
    const now = T0;
    // Every token expired together, a minute ago: earliest-due-first alone has no order among them.
    const stored = (name: string) => oauth2Connection(name, oauth2(undefined, now - 60_000), '1');
    const ran: string[] = [];
    let unblock!: () => void;
    const blocked = new Promise<void>((r) => (unblock = r));
    const store = { getIntegration: () => integration, getConnectionByName: (_ns: string, name: string) => stored(name) };
    const scheduler = schedulerOver(store, () => now, {
      // The first refresh holds the only slot until the others are queued.
      refresh: async (_ns, _integration, connectionId) => {
        ran.push(connectionId);
        if (ran.length === 1) await blocked;
      },
      concurrency: 1,
    });
    try {
      scheduler.schedule('ns/first');
      await new Promise((r) => setImmediate(r));
      for (const own of ['own-1', 'own-2', 'own-3']) scheduler.schedule(`ns/${own}`);
      scheduler.takenOver('ns/orphan');
      scheduler.schedule('ns/orphan');
      unblock();
      await new Promise((r) => setTimeout(r, 50));
      expect(ran).toEqual(['first', 'orphan', 'own-1', 'own-2', 'own-3']);
    } finally {
      await scheduler.stop();
    }
  });
});

describe('RefreshScheduler status writes', () => {
  it('holds back the status write of a refresh while others wait for a slot, then asks for all', async () => {
    // Expired a minute ago until refreshed, then valid for an hour (another Secret version).
    const refreshed = new Set<string>();
    const stored = (name: string) =>
      refreshed.has(name)
        ? oauth2Connection(name, oauth2(3600, Date.now() + 3_600_000), '2')
        : oauth2Connection(name, oauth2(3600, Date.now() - 60_000), '1');
    const gates = new Map<string, () => void>();
    let ended = false;
    const asked: string[] = [];
    const store = { getIntegration: () => integration, getConnectionByName: (_ns: string, name: string) => stored(name) };
    const scheduler = schedulerOver(store, Date.now, {
      refresh: async (_ns, _integration, connectionId) => {
        if (!ended) await new Promise<void>((r) => gates.set(connectionId, r));
        refreshed.add(connectionId);
      },
      concurrency: 1,
      onStateChanged: (key) => asked.push(key),
    });
    const until = (what: () => boolean) => eventually(what, 500, 5);
    try {
      scheduler.schedule('ns/first');
      await until(() => gates.has('first'));
      scheduler.schedule('ns/second');
      scheduler.schedule('ns/third');
      gates.get('first')!();
      // Two refreshes wait: the first one's status write waits for them.
      await until(() => gates.has('second'));
      expect(scheduler.isStatusDeferred('ns/first')).toBe(true);
      expect(scheduler.deferredStatusWrites).toBe(1);
      expect(asked).toEqual([]);
      gates.get('second')!();
      // The last waiting refresh took the slot: nothing waits, so both held writes are asked for.
      await until(() => gates.has('third'));
      expect(asked).toEqual(['ns/first', 'ns/second']);
      expect(scheduler.isStatusDeferred('ns/first')).toBe(false);
      gates.get('third')!();
      // Nothing waits behind the last one: its write is asked for at once.
      await until(() => asked.length === 3);
      expect(asked[2]).toBe('ns/third');
      expect(scheduler.deferredStatusWrites).toBe(0);
    } finally {
      // A failed expectation must not leave stop() waiting on a refresh.
      ended = true;
      for (const open of gates.values()) open();
      await scheduler.stop();
    }
  });
});
