/**
 * The oidc-provider peer of the e2e files: over HTTPS with a CA made at test start, on the node's
 * address (what the pods reach of the host); the Provider and Integration that use it; and the
 * refresh-token check (each refresh token presented once).
 */
import type { KubeConfig } from '@kubernetes/client-node';
import { applyProvider, createIntegration } from '../../../dev/fixtures.js';
import type { LocalNode } from '../../../dev/local-node.js';
import { startOidcServer, type OidcTestServer, type TestClient, type TokenCall } from '../../../dev/peers/oidc-server.js';
import { makeTestCa, type TestCa } from '../../support/test-ca.js';

export interface OidcPeer {
  ca: TestCa;
  oidc: OidcTestServer;
  /** Refresh grants at the peer, of one account or all of them. */
  refreshGrants(accountIds?: string[]): TokenCall[];
  close(): Promise<void>;
}

/**
 * oidc-provider over HTTPS on the node's address, with a CA made now (the release trusts it through
 * config.egress.caBundle, or NODE_OPTIONS for a release without that setting).
 */
export async function startOidcPeer(node: LocalNode, clients: TestClient[], accessTokenTtl: number): Promise<OidcPeer> {
  const ca = makeTestCa([node.nodeAddress]);
  const oidc = await startOidcServer({
    clients,
    accessTokenTtl,
    host: node.nodeAddress,
    tls: { key: ca.serverKey, cert: ca.serverCert },
  });
  return {
    ca,
    oidc,
    refreshGrants: (ids) =>
      oidc.tokenCalls.filter(
        (c) => c.grantType === 'refresh_token' && (ids === undefined || (c.accountId !== undefined && ids.includes(c.accountId))),
      ),
    async close() {
      await oidc.close();
      ca.remove();
    },
  };
}

/**
 * No refresh token presented twice, none refused: oidc-provider rotates refresh tokens, so a second
 * refresh with the same token (a refresh done twice) shows as the same hash twice, refused as reused
 * (which revokes the grant) or both accepted in a race. Returns the refreshes per connection of `ids`.
 */
export function expectEachRefreshOnce(peer: OidcPeer, ids: string[]): Record<string, number> {
  const grants = peer.refreshGrants(ids);
  const seen = new Map<string, number>();
  for (const g of grants) seen.set(g.presentedTokenHash!, (seen.get(g.presentedTokenHash!) ?? 0) + 1);
  expect(grants.filter((g) => g.status !== 200 || g.error).map((g) => `${g.accountId}: ${g.status} ${g.error ?? ''}`)).toEqual([]);
  expect(grants.filter((g) => seen.get(g.presentedTokenHash!)! > 1).map((g) => g.accountId)).toEqual([]);
  return Object.fromEntries(ids.map((id) => [id, grants.filter((g) => g.accountId === id).length]));
}

/** The Provider `e2e-oidc` (the peer's endpoints, the proxy to `proxyBaseUrl`) and the Integration `oidc` of `namespace` using it with `client`. */
export async function applyOidcIntegration(
  kc: KubeConfig,
  namespace: string,
  peer: OidcPeer,
  proxyBaseUrl: string,
  client: { clientId: string; clientSecret: string },
): Promise<void> {
  await applyProvider(kc, 'e2e-oidc', {
    displayName: 'E2E OIDC',
    authMode: 'OAUTH2',
    authorizationUrl: peer.oidc.authorizationUrl,
    tokenUrl: peer.oidc.tokenUrl,
    proxy: { baseUrl: proxyBaseUrl },
  });
  await createIntegration(kc, namespace, 'oidc', { provider: 'e2e-oidc' }, client);
}
