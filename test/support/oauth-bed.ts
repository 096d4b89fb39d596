/**
 * The bed of the refresh tests: a test namespace, a real oidc-provider (refresh token rotation and reuse
 * detection on), an OAUTH2 Provider pointing at it, and an Integration holding the test client.
 */
import type { KubeConfig } from '@kubernetes/client-node';
import { createTestNamespace } from '../../dev/cluster.js';
import { applyProvider, createIntegration, deleteProvider } from '../../dev/fixtures.js';
import { startOidcServer, type OidcTestServer, type TestClient } from '../../dev/peers/oidc-server.js';

export interface OAuthBed {
  ns: Awaited<ReturnType<typeof createTestNamespace>>;
  oidc: OidcTestServer;
  providerName: string;
  /** Stops the OAuth server, deletes the Provider and the namespace. */
  close(): Promise<void>;
}

export async function startOAuthBed(
  kc: KubeConfig,
  opts: {
    namespace: string;
    client: TestClient;
    integration: string;
    accessTokenTtl?: number;
    /** The client secret the Integration's Secret holds; the client's own unless a test wants it wrong. */
    integrationClientSecret?: string;
  },
): Promise<OAuthBed> {
  const ns = await createTestNamespace(kc, opts.namespace);
  const oidc = await startOidcServer({ clients: [opts.client], accessTokenTtl: opts.accessTokenTtl });
  const providerName = `oidc-${ns.name}`;
  await applyProvider(kc, providerName, {
    displayName: 'Test OIDC',
    authMode: 'OAUTH2',
    authorizationUrl: oidc.authorizationUrl,
    tokenUrl: oidc.tokenUrl,
  });
  await createIntegration(
    kc,
    ns.name,
    opts.integration,
    { provider: providerName },
    { clientId: opts.client.clientId, clientSecret: opts.integrationClientSecret ?? opts.client.clientSecret },
  );
  return {
    ns,
    oidc,
    providerName,
    close: async () => {
      await oidc.close();
      await deleteProvider(kc, providerName);
      await ns.delete();
    },
  };
}
