/** Unit tests of the refresh floor (no cluster): the timing rule, the scheduler's plan with an injected clock, and the Integration's flag. */
import { controllerMetrics } from '../../src/controller/metrics.js';
import { RefreshScheduler } from '../../src/controller/refresh-scheduler.js';
import { flooredRefreshTime, refreshTime } from '../../src/controller/refresh-timing.js';
import { SHORT_LIVED_TOKENS_ANNOTATION, ShortLivedTokens } from '../../src/controller/short-lived-tokens.js';
import { tokenLifetimes } from '../../src/controller/reconcilers/integration.js';
import { lastRefreshOf } from '../../src/domain/refresh-floor.js';
import type { ConnectionResource, IntegrationResource } from '../../src/k8s/resources.js';
import type { StoredConnection } from '../../src/k8s/store.js';
import { createLogger } from '../../src/platform/log.js';
import { Registry } from '../../src/platform/metrics.js';

const settings = { refreshMarginSeconds: 300, refreshMarginRatio: 0.25 };
const T0 = Date.parse('2030-01-01T00:00:00Z');
const FLOOR = 3_000;
const iso = (ms: number) => new Date(ms).toISOString();
/** OAuth 2 credentials the provider gave `expiresInS` seconds at `issuedAt`. */
const oauth2 = (expiresInS: number, issuedAt: number) => ({
  type: 'OAUTH2',
  access_token: 'a',
  refresh_token: 'r',
  expires_at: iso(issuedAt + expiresInS * 1000),
  raw: { expires_in: expiresInS },
});

describe('the refresh floor rule', () => {
  it('holds a token shorter than the floor back until a floor after its last refresh', () => {
    const zero = oauth2(0, T0);
    const due = refreshTime(zero, settings)!;
    expect(due).toBeLessThanOrEqual(T0); // "about to expire" at once: without the floor, a refresh every chance
    expect(flooredRefreshTime(due, zero, T0, FLOOR)).toBe(T0 + FLOOR);
    const one = oauth2(1, T0);
    expect(flooredRefreshTime(refreshTime(one, settings)!, one, T0, FLOOR)).toBe(T0 + FLOOR);
  });

  it('leaves alone tokens that live at least the floor, and a token never refreshed', () => {
    const ten = oauth2(10, T0);
    expect(flooredRefreshTime(refreshTime(ten, settings)!, ten, T0, FLOOR)).toBe(T0 + 7_500);
    const zero = oauth2(0, T0);
    expect(flooredRefreshTime(T0, zero, undefined, FLOOR)).toBe(T0);
    // 0: the floor is off
    expect(flooredRefreshTime(T0, zero, T0, 0)).toBe(T0);
  });

  it('takes the last refresh from the status, unless credentials were stored since, and from memory for the same credentials', () => {
    expect(lastRefreshOf({ lastRefreshedAt: iso(T0), updatedAt: iso(T0) }, '7')).toBe(T0);
    // Re-authorized (or imported) after the refresh: these credentials were never refreshed.
    expect(lastRefreshOf({ lastRefreshedAt: iso(T0), updatedAt: iso(T0 + 500) }, '7')).toBeUndefined();
    // A refresh this process made, not in the status yet.
    expect(lastRefreshOf({ lastRefreshedAt: iso(T0) }, '8', { at: T0 + 2_000, credentialsVersion: '8' })).toBe(T0 + 2_000);
    // The credentials changed since that refresh (another version), and the status is no newer.
    expect(lastRefreshOf({ lastRefreshedAt: iso(T0) }, '9', { at: T0 + 2_000, credentialsVersion: '8' })).toBeUndefined();
  });
});

describe('RefreshScheduler.plan under the floor', () => {
  let now = T0;
  const integration = { metadata: { name: 'int', namespace: 'ns' }, spec: { provider: 'p' }, status: { conditions: [] } };
  const store = { getIntegration: () => integration, getConnectionByName: () => undefined };
  const scheduler = (floorMs: number) =>
    new RefreshScheduler({
      connections: store as never,
      catalog: store as never,
      refresh: async () => undefined,
      nextRefreshAt: (c) => refreshTime(c.credentials, settings),
      isRefreshable: () => true,
      events: { record: async () => 'event' },
      clock: { now: () => now },
      metrics: controllerMetrics(new Registry()),
      logger: createLogger('silent'),
      floorMs,
    });
  const conn = (credentials: StoredConnection['credentials'], status: ConnectionResource['status']): StoredConnection => ({
    resource: {
      apiVersion: 'latchkey.dev/v1alpha1',
      kind: 'Connection',
      metadata: { name: 'c', namespace: 'ns', generation: 1 },
      spec: { integration: 'int', provider: 'p', connectionId: 'c1', id: 1, authMode: 'OAUTH2' },
      status,
    },
    credentials,
    credentialsVersion: '7',
  });

  it('plans an expires_in: 0 token a floor after its last refresh (a forced one too), and at once without a floor', async () => {
    const floored = scheduler(FLOOR);
    const unfloored = scheduler(0);
    try {
      // Refreshed (by a fetch's forced refresh, say) at T0 into a token that expires at once.
      const refreshed = conn(oauth2(0, T0), { lastRefreshedAt: iso(T0), updatedAt: iso(T0) });
      now = T0 + 1_000;
      expect(floored.plan(refreshed)).toEqual({ kind: 'at', at: T0 + FLOOR, retry: false });
      // Without it: due since before the refresh (the margin alone), so at every chance.
      expect(unfloored.plan(refreshed)).toEqual({ kind: 'at', at: refreshTime(refreshed.credentials, settings), retry: false });
      expect(refreshTime(refreshed.credentials, settings)).toBeLessThan(now);
      now = T0 + FLOOR + 1; // the floor has passed: due
      expect(floored.plan(refreshed)).toEqual({ kind: 'at', at: T0 + FLOOR, retry: false });
      // A 10-second token is planned by the margin alone.
      expect(floored.plan(conn(oauth2(10, T0), { lastRefreshedAt: iso(T0), updatedAt: iso(T0) }))).toMatchObject({ at: T0 + 7_500 });
    } finally {
      await Promise.all([floored.stop(), unfloored.stop()]);
    }
  });
});

describe('ShortLivedTokens', () => {
  const integration = (annotations?: Record<string, string>, conditions: IntegrationResource['status'] = {}) =>
    ({
      apiVersion: 'latchkey.dev/v1alpha1',
      kind: 'Integration',
      metadata: { name: 'int', namespace: 'ns', annotations },
      spec: { provider: 'p' },
      status: conditions,
    }) as IntegrationResource;
  const connection = { metadata: { name: 'c', namespace: 'ns' }, spec: { integration: 'int' } } as ConnectionResource;

  function tracker() {
    let current = integration();
    const writes: Array<string | undefined> = [];
    const events: string[] = [];
    const catalog = {
      getIntegration: () => current,
      annotateIntegration: async (_ns: string, _name: string, key: string, value: string | undefined) => {
        writes.push(value);
        const annotations = { ...current.metadata.annotations };
        if (value === undefined) delete annotations[key];
        else annotations[key] = value;
        current = integration(annotations);
        return current;
      },
    };
    const shortLived = new ShortLivedTokens({
      catalog,
      catalogStatus: catalog,
      events: { recordIntegration: async (_i, input) => (events.push(`${input.type} ${input.reason}`), 'event') },
      floorMs: FLOOR,
      now: () => T0,
      logger: createLogger('silent'),
    });
    return { shortLived, writes, events, integration: () => current };
  }

  it('flags the Integration once after three short-lived tokens in a row, and lifts it at a normal lifetime', async () => {
    const t = tracker();
    await t.shortLived.observe('ns/c', connection, 0);
    await t.shortLived.observe('ns/c', connection, 1_000);
    expect(t.writes).toEqual([]);
    await t.shortLived.observe('ns/c', connection, 0);
    expect(t.writes).toHaveLength(1);
    expect(JSON.parse(t.writes[0]!)).toEqual({ lifetimeSeconds: 0, floorSeconds: 3, at: iso(T0) });
    expect(t.events).toEqual(['Warning ProviderTokensShortLived']);
    // Flagged already: no more writes or Events while it lasts.
    await t.shortLived.observe('ns/c', connection, 0);
    expect(t.writes).toHaveLength(1);
    expect(t.events).toHaveLength(1);
    expect(tokenLifetimes(t.integration())).toMatchObject({ type: 'ProviderTokensShortLived', status: 'True', reason: 'ShortLivedTokens' });
    await t.shortLived.observe('ns/c', connection, 3_600_000);
    expect(t.writes).toEqual([t.writes[0], undefined]);
    expect(t.integration().metadata.annotations?.[SHORT_LIVED_TOKENS_ANNOTATION]).toBeUndefined();
  });

  it('starts counting again after a normal lifetime (not three in a row)', async () => {
    const t = tracker();
    await t.shortLived.observe('ns/c', connection, 0);
    await t.shortLived.observe('ns/c', connection, 0);
    await t.shortLived.observe('ns/c', connection, 60_000);
    await t.shortLived.observe('ns/c', connection, 0);
    await t.shortLived.observe('ns/c', connection, 0);
    expect(t.writes).toEqual([]);
  });

  it('gives the condition only to Integrations flagged now or before', () => {
    expect(tokenLifetimes(integration())).toBeUndefined();
    const before = {
      conditions: [
        {
          type: 'ProviderTokensShortLived',
          status: 'True' as const,
          reason: 'ShortLivedTokens',
          message: 'm',
          lastTransitionTime: iso(T0),
        },
      ],
    };
    expect(tokenLifetimes(integration(undefined, before))).toMatchObject({ status: 'False', reason: 'NormalLifetimes' });
    expect(tokenLifetimes(integration({ [SHORT_LIVED_TOKENS_ANNOTATION]: 'not json' }))).toBeUndefined();
  });
});
