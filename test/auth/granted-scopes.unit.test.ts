/** The scopes a grant holds, from token answers as providers send them, and the values a refresh answer changes. */
import { grantedScopes, recordedScopes, scopesOf } from '../../src/auth/granted-scopes.js';
import { changedProviderValues, describeChanges } from '../../src/auth/refresh/provider-values.js';
import { toPublicCredentials } from '../../src/domain/credentials.js';
import type { ConnectionResource, ProviderSpec } from '../../src/k8s/resources.js';
import type { StoredConnection } from '../../src/k8s/store.js';
import { connectionDetail } from '../../src/http/dashboard/views.js';
import { connectionView } from '../../src/http/rest/routes/connection-view.js';

describe('granted scopes', () => {
  it("reads RFC 6749's space-delimited scope, Pipedrive's and GitHub's commas, and Linear's array", () => {
    expect(scopesOf('openid https://www.googleapis.com/auth/calendar.readonly')).toEqual([
      'openid',
      'https://www.googleapis.com/auth/calendar.readonly',
    ]);
    expect(scopesOf('base,deals:read')).toEqual(['base', 'deals:read']);
    expect(scopesOf('repo, user')).toEqual(['repo', 'user']);
    expect(scopesOf(['read', 'write', 'read'])).toEqual(['read', 'write']);
    expect(scopesOf('')).toBeUndefined();
    expect(scopesOf(null)).toBeUndefined();
    expect(scopesOf([1, {}])).toBeUndefined();
  });

  it("takes the answer's scope, else those requested; a refresh without scope records nothing new", () => {
    expect(grantedScopes({ access_token: 'a', scope: 'b c' }, ['x'])).toEqual(['b', 'c']);
    expect(grantedScopes({ access_token: 'a' }, ['x', 'y'])).toEqual(['x', 'y']);
    expect(grantedScopes({ access_token: 'a' }, [])).toBeUndefined();
    expect(grantedScopes({ access_token: 'a' })).toBeUndefined();
  });

  it('keeps them out of the credentials the API returns (shown beside them)', () => {
    const stored = { type: 'OAUTH2', access_token: 'tok', raw: { access_token: 'tok', scope: 'a b' }, granted_scopes: ['a', 'b'] };
    expect(recordedScopes(stored)).toEqual(['a', 'b']);
    expect(toPublicCredentials(stored, { includeRefreshToken: false })).toEqual({
      type: 'OAUTH2',
      access_token: 'tok',
      raw: { access_token: 'tok', scope: 'a b' },
    });
  });
});

describe('where granted scopes are shown', () => {
  const resource = {
    metadata: { name: 'c', namespace: 'n', creationTimestamp: '2026-01-01T00:00:00Z' },
    spec: { integration: 'g', provider: 'google', connectionId: 'c-1', id: 1, authMode: 'OAUTH2' },
  } as unknown as ConnectionResource;
  const conn = (credentials: Record<string, unknown>): StoredConnection =>
    ({
      resource,
      credentials: { type: 'OAUTH2', access_token: 'secret-access-token-value', ...credentials },
      credentialsVersion: '1',
    }) as StoredConnection;

  it('GET /connections/{id} and the dashboard show them beside the credentials (null when none are known)', () => {
    const view = connectionView(conn({ granted_scopes: ['a', 'b'] }));
    expect(view.granted_scopes).toEqual(['a', 'b']);
    expect(view.credentials).not.toHaveProperty('granted_scopes');
    expect(connectionView(conn({})).granted_scopes).toBeNull();
    const detail = connectionDetail(conn({ granted_scopes: ['a', 'b'] }), Date.parse('2026-01-02T00:00:00Z'));
    expect(detail.granted_scopes).toEqual(['a', 'b']);
    expect(detail.credentials).not.toHaveProperty('granted_scopes');
    expect(JSON.stringify(detail)).not.toContain('secret-access-token-value');
  });
});

describe('provider values a refresh answer changes', () => {
  const pipedrive: ProviderSpec = {
    displayName: 'Pipedrive',
    authMode: 'OAUTH2',
    connectionConfiguration: [
      {
        name: 'companyDomain',
        pattern: '[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?',
        required: true,
        from: { tokenResponse: 'api_domain', as: 'subdomain' },
      },
      { name: 'typed', pattern: '[a-z]+' },
    ],
  };

  it('names a changed value, with what it was', () => {
    const changes = changedProviderValues(pipedrive, { api_domain: 'https://acme-renamed.pipedrive.com' }, { companyDomain: 'acme' });
    expect(changes).toEqual([{ key: 'companyDomain', from: 'acme', to: 'acme-renamed' }]);
    expect(describeChanges(changes)[0]).toContain('companyDomain changed from "acme" to "acme-renamed"');
  });

  it('leaves the stored value when the answer repeats it, lacks it, or breaks its rule', () => {
    expect(changedProviderValues(pipedrive, { api_domain: 'https://acme.pipedrive.com' }, { companyDomain: 'acme' })).toEqual([]);
    expect(changedProviderValues(pipedrive, { access_token: 'x' }, { companyDomain: 'acme' })).toEqual([]);
    expect(changedProviderValues(pipedrive, { api_domain: 'https://-bad_.pipedrive.com' }, { companyDomain: 'acme' })).toEqual([]);
    expect(changedProviderValues(pipedrive, undefined, { companyDomain: 'acme' })).toEqual([]);
    expect(changedProviderValues({ ...pipedrive, connectionConfiguration: [] }, { api_domain: 'https://x.pipedrive.com' }, {})).toEqual([]);
  });
});
