/** Unit test of the status comparison that keeps a reconcile which changes nothing from writing (no cluster needed). */
import { setConditions } from '../../src/domain/conditions.js';
import { sameStatus } from '../../src/controller/reconcilers/conditions.js';
import type { ConnectionStatus } from '../../src/k8s/resources.js';
import { asWrittenNow } from '../../src/controller/reconcilers/connection.js';

/** What the API server returns: every object's keys sorted (it serializes maps so). */
function asServerReturnsIt<T>(value: T): T {
  const sort = (v: unknown): unknown =>
    Array.isArray(v)
      ? v.map(sort)
      : v && typeof v === 'object'
        ? Object.fromEntries(
            Object.entries(v)
              .filter(([, x]) => x !== undefined)
              .sort(([a], [b]) => a.localeCompare(b))
              .map(([k, x]) => [k, sort(x)]),
          )
        : v;
  return sort(value) as T;
}

describe('sameStatus', () => {
  const now = Date.parse('2026-11-25T12:00:00Z');
  const built: ConnectionStatus = {
    observedGeneration: 1,
    conditions: setConditions(
      undefined,
      [
        { type: 'Ready', status: 'True', reason: 'Ready', message: 'ok' },
        { type: 'CredentialsValid', status: 'True', reason: 'CredentialsPresent', message: 'present' },
      ],
      1,
      now,
    ),
    expiresAt: '2026-11-25T13:00:00.000Z',
    nextRefreshAt: '2026-11-25T12:55:00.000Z',
    errors: [{ type: 'auth', logId: 'e1', message: 'refused', occurredAt: '2026-11-25T11:00:00.000Z' }],
    lastRefreshedAt: undefined,
  };

  it('finds a status read back from the API server the same as the one built here', () => {
    const stored = asServerReturnsIt(built);
    expect(JSON.stringify(stored)).not.toBe(JSON.stringify(built)); // the key order differs
    expect(sameStatus(stored, built)).toBe(true);
    // A later reconcile builds the conditions again (a newer clock): still nothing to write.
    const rebuilt = {
      ...built,
      conditions: setConditions(stored.conditions, [{ type: 'Ready', status: 'True', reason: 'Ready', message: 'ok' }], 1, now + 60_000),
    };
    expect(sameStatus(stored, rebuilt)).toBe(true);
  });

  it('tells a changed field, condition or generation apart', () => {
    const stored = asServerReturnsIt(built);
    expect(sameStatus(stored, { ...built, nextRefreshAt: '2026-11-25T12:56:00.000Z' })).toBe(false);
    expect(sameStatus(stored, { ...built, errors: [] })).toBe(false);
    expect(sameStatus(stored, { ...built, observedGeneration: 2 })).toBe(false);
    const notReady = setConditions(stored.conditions, [{ type: 'Ready', status: 'False', reason: 'Expired', message: 'expired' }], 1, now);
    expect(sameStatus(stored, { ...built, conditions: notReady })).toBe(false);
  });
});

describe('a Connection status written before the conditions were shortened', () => {
  const now = Date.parse('2026-11-25T12:00:00Z');
  const updates = [
    {
      type: 'IntegrationReady',
      status: 'True' as const,
      reason: 'IntegrationReady',
      message: 'Integration "crm" and its provider are in place.',
    },
    { type: 'CredentialsValid', status: 'True' as const, reason: 'CredentialsPresent', message: 'Credentials of type OAUTH2 are stored.' },
    {
      type: 'NeedsReauthorization',
      status: 'False' as const,
      reason: 'CredentialsAccepted',
      message: 'The provider has not refused these credentials.',
    },
    { type: 'Ready', status: 'True' as const, reason: 'Ready', message: 'The access token is renewed before it expires.' },
  ];
  const before: ConnectionStatus = { observedGeneration: 3, conditions: setConditions(undefined, updates, 3, now) };
  // As the reconciler builds it now: no message on the healthy ones.
  const shortened = (message: (u: (typeof updates)[number]) => string): ConnectionStatus => ({
    observedGeneration: 3,
    conditions: setConditions(
      undefined,
      updates.map((u) => ({ ...u, message: message(u) })),
      3,
      now,
    ),
  });
  const now3 = shortened((u) => (u.type === 'Ready' ? u.message : ''));

  it('is the same as the shortened one, so a reconcile does not rewrite it for that alone', () => {
    expect(sameStatus(before, now3)).toBe(false);
    expect(sameStatus(asWrittenNow(asServerReturnsIt(before)), now3)).toBe(true);
    expect(asWrittenNow(before).conditions!.every((c) => c.observedGeneration === 3)).toBe(true);
  });

  it('still differs when Ready’s message, a condition or the generation changed', () => {
    expect(
      sameStatus(
        asWrittenNow(before),
        shortened(() => ''),
      ),
    ).toBe(false);
    expect(sameStatus(asWrittenNow({ ...before, observedGeneration: 2 }), now3)).toBe(false);
    const refused = setConditions(
      before.conditions,
      [{ ...updates[2]!, status: 'True', reason: 'ReauthorizationRequired', message: 'x' }],
      3,
      now,
    );
    expect(sameStatus(asWrittenNow({ ...before, conditions: refused }), now3)).toBe(false);
  });
});
