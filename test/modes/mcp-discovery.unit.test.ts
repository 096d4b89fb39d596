/**
 * MCP_OAUTH2's discovery rules without a network: the metadata URLs in MCP's order (as the SDK's
 * `buildDiscoveryUrls`), the challenge's parameters, the canonical server URI, the order of the
 * requests from the server URL alone, and the client choice (pre-registered, then a Client ID Metadata
 * Document, then registration). The fetch here is a table of answers written for the test (it records
 * what was asked); the real servers are in test/connect/mcp-oauth-*.test.ts.
 */
import { authorizationServerMetadataUrls, canonicalServerUri, challengeParam, discover } from '../../src/modes/mcp-oauth/discovery.js';
import { chooseClient, metadataDocumentUrl } from '../../src/modes/mcp-oauth/registration.js';
import { exchangeCode } from '../../src/modes/mcp-oauth/token-client.js';
import type { RedirectDeps } from '../../src/modes/auth-mode.js';
import type { IntegrationResource } from '../../src/k8s/resources.js';

describe('MCP_OAUTH2 discovery', () => {
  it('asks an issuer with a path in the spec order, one without a path at the root', () => {
    expect(authorizationServerMetadataUrls(new URL('https://auth.example.com/tenant1')).map(String)).toEqual([
      'https://auth.example.com/.well-known/oauth-authorization-server/tenant1',
      'https://auth.example.com/.well-known/openid-configuration/tenant1',
      'https://auth.example.com/tenant1/.well-known/openid-configuration',
    ]);
    expect(authorizationServerMetadataUrls(new URL('https://auth.example.com')).map(String)).toEqual([
      'https://auth.example.com/.well-known/oauth-authorization-server',
      'https://auth.example.com/.well-known/openid-configuration',
    ]);
  });

  it('reads resource_metadata and scope from a Bearer challenge, quoted or not', () => {
    const h =
      'Bearer error="insufficient_scope", scope="files:read files:write", resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource/mcp"';
    expect(challengeParam(h, 'scope')).toBe('files:read files:write');
    expect(challengeParam(h, 'resource_metadata')).toBe('https://mcp.example.com/.well-known/oauth-protected-resource/mcp');
    expect(challengeParam('Bearer realm=x, scope=a', 'scope')).toBe('a');
    expect(challengeParam('Basic realm="x", scope="a"', 'scope')).toBeUndefined();
    expect(challengeParam(null, 'scope')).toBeUndefined();
  });

  it('makes the canonical server URI: no fragment, no trailing slash on a bare origin, the path kept', () => {
    expect(canonicalServerUri('https://MCP.Example.com/mcp#x')).toBe('https://mcp.example.com/mcp');
    expect(canonicalServerUri('https://mcp.example.com')).toBe('https://mcp.example.com');
    expect(canonicalServerUri('https://mcp.example.com/')).toBe('https://mcp.example.com/');
  });

  it('without a resource_metadata in the challenge: the path-inserted metadata, then the root one, then the issuer', async () => {
    const asked: string[] = [];
    const docs: Record<string, unknown> = {
      'https://mcp.example.com/.well-known/oauth-protected-resource': {
        resource: 'https://mcp.example.com',
        authorization_servers: ['https://auth.example.com/t1'],
        scopes_supported: ['read'],
      },
      'https://auth.example.com/.well-known/openid-configuration/t1': {
        issuer: 'https://auth.example.com/t1',
        authorization_endpoint: 'https://auth.example.com/t1/authorize',
        token_endpoint: 'https://auth.example.com/t1/token',
        code_challenge_methods_supported: ['S256'],
        client_id_metadata_document_supported: true,
        authorization_response_iss_parameter_supported: true,
      },
    };
    const fetchFn = (async (input: string | URL) => {
      const url = String(input);
      asked.push(url);
      if (url === 'https://mcp.example.com/mcp')
        return new Response('{}', { status: 401, headers: { 'www-authenticate': 'Bearer scope="read"' } });
      const doc = docs[url];
      return doc ? Response.json(doc) : new Response('not here', { status: 404 });
    }) as typeof fetch;
    const found = await discover(fetchFn, 'https://mcp.example.com/mcp');
    expect(asked).toEqual([
      'https://mcp.example.com/mcp',
      'https://mcp.example.com/.well-known/oauth-protected-resource/mcp',
      'https://mcp.example.com/.well-known/oauth-protected-resource',
      'https://auth.example.com/.well-known/oauth-authorization-server/t1',
      'https://auth.example.com/.well-known/openid-configuration/t1',
    ]);
    expect(found).toMatchObject({
      resource: 'https://mcp.example.com/mcp',
      challengeScope: 'read',
      authorizationServer: { issuer: 'https://auth.example.com/t1', clientIdMetadataDocumentSupported: true, issParameterSupported: true },
    });
  });

  it('chooses the Integration client first, then a metadata document where advertised (https only), then registration', async () => {
    const integration = {
      metadata: { name: 'notion', uid: 'u' },
      spec: { provider: 'notion-mcp', clientSecretRef: { name: 'c' } },
    } as unknown as IntegrationResource;
    const as = {
      issuer: 'https://auth.example.com',
      authorizationEndpoint: 'https://auth.example.com/authorize',
      tokenEndpoint: 'https://auth.example.com/token',
      clientIdMetadataDocumentSupported: true,
      issParameterSupported: false,
    };
    const deps = (secret: Record<string, string>) =>
      ({
        catalog: { readSecretValue: (_ns: string, _name: string, key: string) => secret[key] },
        fetch,
        clock: { now: () => 0 },
      }) as unknown as RedirectDeps;
    const choice = {
      namespace: 'team-a',
      integration,
      authorizationServer: as,
      redirectUri: 'https://lk.example.com/oauth/callback',
      clientName: 'App',
      publicBaseUrl: 'https://lk.example.com',
    };
    expect(await chooseClient(deps({ clientId: 'pre', clientSecret: 's' }), choice)).toEqual({
      clientId: 'pre',
      clientSecret: 's',
      registration: 'pre-registered',
      tokenEndpointAuthMethod: 'client_secret_post',
    });
    expect(await chooseClient(deps({}), choice)).toEqual({
      clientId: metadataDocumentUrl('https://lk.example.com', 'team-a', 'notion'),
      registration: 'metadata-document',
      tokenEndpointAuthMethod: 'none',
    });
    expect(metadataDocumentUrl('https://lk.example.com/', 'team-a', 'notion')).toBe('https://lk.example.com/connect/clients/team-a/notion');
    // A client ID must be an https URL: over http, and without a registration endpoint, nothing fits.
    await expect(chooseClient(deps({}), { ...choice, publicBaseUrl: 'http://127.0.0.1:8080' })).rejects.toThrow('pre-registered client');
  });

  it('refuses an authorization response whose iss names another server before any token request (RFC 9207)', async () => {
    const asked: string[] = [];
    const fetchFn = (async (input: string | URL) => {
      asked.push(String(input));
      return new Response('{}', { status: 500 });
    }) as typeof fetch;
    const callback = {
      query: new URLSearchParams({ code: 'c', state: 's', iss: 'https://evil.example.com' }),
      redirectUri: 'https://lk.example.com/oauth/callback',
      expectedState: 's',
      codeVerifier: 'v'.repeat(43),
      resource: 'https://mcp.example.com/mcp',
    };
    const client = {
      issuer: 'https://auth.example.com',
      tokenEndpoint: 'https://auth.example.com/token',
      issParameter: true,
      clientId: 'c1',
      tokenEndpointAuthMethod: 'none' as const,
      fetch: fetchFn,
    };
    await expect(exchangeCode(client, callback, 0)).rejects.toMatchObject({ code: 'issuer_mismatch' });
    expect(asked).toEqual([]);
  });
});
