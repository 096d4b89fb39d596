/** The fetch's answer kept as text: always the same JSON as the view it stands for (no cluster needed). */
import { connectionAnswer, connectionView } from '../../src/http/rest/routes/connection-view.js';
import type { StoredConnection, StoredCredentials } from '../../src/k8s/store.js';

function stored(credentials: StoredCredentials, name = 'github-user-1-0123456789'): StoredConnection {
  return {
    resource: {
      apiVersion: 'latchkey.dev/v1alpha1',
      kind: 'Connection',
      metadata: { name, namespace: 'ns', creationTimestamp: new Date('2026-11-25T10:00:00Z') },
      spec: {
        id: 7,
        connectionId: 'user-1',
        integration: 'github',
        provider: 'github',
        metadata: { plan: 'pro', quote: 'a "quoted" \u2028 value' },
        connectionConfig: { subdomain: 'acme' },
        endUser: { id: 'u1', email: 'u1@example.test', tags: { org: 'o1' } },
      },
      status: { errors: [{ type: 'auth', logId: 'log-1' }], updatedAt: '2026-11-25T10:01:00.000Z' },
    } as unknown as StoredConnection['resource'],
    credentials,
    credentialsVersion: '1',
  };
}

const oauth2: StoredCredentials = {
  type: 'OAUTH2',
  access_token: 'at-1',
  refresh_token: 'rt-1',
  expires_at: '2026-11-25T11:00:00.000Z',
  raw: { access_token: 'at-1', scope: 'repo' },
} as StoredCredentials;

describe('connectionAnswer', () => {
  it('is the serialized view with the fetch time, with and without the refresh token, on every call', () => {
    const conn = stored(oauth2);
    for (const includeRefreshToken of [false, true, false, true]) {
      for (const lastFetchedAt of ['2026-11-25T10:02:00.000Z', '2026-11-25T10:03:00.123Z']) {
        const text = connectionAnswer(conn, { includeRefreshToken, lastFetchedAt });
        expect(text).toBe(JSON.stringify(connectionView(conn, { includeRefreshToken, lastFetchedAt })));
      }
    }
    expect(
      JSON.parse(connectionAnswer(conn, { includeRefreshToken: false, lastFetchedAt: 'x' })).credentials.refresh_token,
    ).toBeUndefined();
    expect(JSON.parse(connectionAnswer(conn, { includeRefreshToken: true, lastFetchedAt: 'x' })).credentials.refresh_token).toBe('rt-1');
  });

  it('follows a new stored object (new credentials) and never reuses SIGNATURE answers', () => {
    const first = stored(oauth2);
    connectionAnswer(first, { includeRefreshToken: false, lastFetchedAt: 't' });
    const next = stored({ ...oauth2, access_token: 'at-2' } as StoredCredentials);
    expect(JSON.parse(connectionAnswer(next, { includeRefreshToken: false, lastFetchedAt: 't' })).credentials.access_token).toBe('at-2');

    const signed = stored({ type: 'SIGNATURE', username: 'u', password: 'p', token: 'sig-1' } as unknown as StoredCredentials);
    const one = connectionAnswer(signed, { includeRefreshToken: false, lastFetchedAt: 't' });
    (signed.credentials as unknown as { token: string }).token = 'sig-2';
    const two = connectionAnswer(signed, { includeRefreshToken: false, lastFetchedAt: 't' });
    expect(one).not.toBe(two);
    expect(two).toBe(JSON.stringify(connectionView(signed, { lastFetchedAt: 't' })));
  });
});
