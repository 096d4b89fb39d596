/**
 * A deleted OAuth 2 connection's grant revoked at the provider, as its `revocation` declares: RFC 7009
 * (`token=…&token_type_hint=…`, the client authenticated as at the token endpoint) or the provider's own
 * shape (a JSON body, a bearer header, a method and URL template). Best effort: one call, bounded in
 * time; the outcome is a line for the operation log that never holds a token or a secret.
 */
import { fillProviderUrl, providerUrlTemplate } from '../catalog/connection-config.js';
import type { IntegrationResource, ProviderResource, RevocationSpec } from '../k8s/resources.js';
import type { CatalogStore, StoredCredentials } from '../k8s/store.js';
import { isAbortOrTimeout } from '../domain/errors.js';
import { providerText } from '../oplog/redact.js';
import { resolveClient } from './oauth2-client.js';
import { answerError, parseAnswerBody } from './provider-answers.js';

/** Seconds a revocation may take before the delete goes on without it. */
export const REVOCATION_TIMEOUT_SECONDS = 5;

export interface RevocationInput {
  catalog: CatalogStore;
  namespace: string;
  integration: IntegrationResource;
  provider: ProviderResource;
  credentials: StoredCredentials;
  connectionConfig: Record<string, unknown> | undefined;
  fetch: typeof fetch;
  timeoutSeconds?: number;
}

/** What happened, for the operation log; undefined when the provider declares no revocation or the connection has no token. */
export interface RevocationOutcome {
  revoked: boolean;
  message: string;
}

const str = (v: unknown) => (typeof v === 'string' && v ? v : undefined);

/** The request a revocation sends (exported for tests of the shapes). */
export function revocationRequest(
  spec: RevocationSpec,
  providerSpec: ProviderResource['spec'],
  token: { value: string; hint: 'refresh_token' | 'access_token' },
  client: { clientId: string; clientSecret?: string } | undefined,
  connectionConfig: Record<string, unknown> | undefined,
): { url: string; init: RequestInit } {
  const tokenIn = spec.tokenIn ?? 'form';
  const field = spec.tokenField ?? 'token';
  const clientAuth =
    spec.clientAuth ?? (tokenIn === 'form' ? (providerSpec.tokenRequestAuthMethod === 'basic' ? 'basic' : 'body') : 'none');
  // Absolute by the CRD's rule; resolved as every URL beside the base is (the catalog test compares it with documentedUrl).
  const template = (providerUrlTemplate(providerSpec, spec.url) ?? spec.url).replaceAll(
    '${clientId}',
    encodeURIComponent(client?.clientId ?? ''),
  );
  const url = fillProviderUrl(providerSpec, template, connectionConfig);
  const headers: Record<string, string> = { accept: 'application/json' };
  const clientFields: Record<string, string> = {};
  if (client && clientAuth === 'basic') {
    const enc = (s: string) => encodeURIComponent(s);
    headers.authorization = `Basic ${Buffer.from(`${enc(client.clientId)}:${enc(client.clientSecret ?? '')}`).toString('base64')}`;
  } else if (client && clientAuth === 'body') {
    clientFields.client_id = client.clientId;
    if (client.clientSecret) clientFields.client_secret = client.clientSecret;
  }
  let body: string | undefined;
  if (tokenIn === 'bearer') {
    headers.authorization = `Bearer ${token.value}`;
  } else if (tokenIn === 'json') {
    headers['content-type'] = 'application/json';
    body = JSON.stringify({ [field]: token.value, ...clientFields });
  } else {
    headers['content-type'] = 'application/x-www-form-urlencoded';
    body = new URLSearchParams({ [field]: token.value, token_type_hint: token.hint, ...clientFields }).toString();
  }
  return { url, init: { method: spec.method ?? 'POST', headers, body, redirect: 'manual' } };
}

/** Revokes the connection's grant; never throws. */
export async function revokeGrant(input: RevocationInput): Promise<RevocationOutcome | undefined> {
  const spec = input.provider.spec.revocation;
  if (!spec) return undefined;
  const c = input.credentials;
  const refresh = str(c.refresh_token);
  const access = str(c.access_token);
  const hint = spec.token === 'access_token' || !refresh ? 'access_token' : 'refresh_token';
  const value = hint === 'refresh_token' ? refresh : access;
  if (!value) return undefined;
  const name = input.provider.spec.displayName;
  try {
    const override = c.config_override as { client_id?: string; client_secret?: string } | undefined;
    const client = resolveClient(input.catalog, input.namespace, input.integration, override);
    const { url, init } = revocationRequest(spec, input.provider.spec, { value, hint }, client, input.connectionConfig);
    const res = await input.fetch(url, {
      ...init,
      signal: AbortSignal.timeout((input.timeoutSeconds ?? REVOCATION_TIMEOUT_SECONDS) * 1000),
    });
    if (res.status < 200 || res.status >= 300) {
      await res.body?.cancel().catch(() => undefined);
      return { revoked: false, message: `${name} did not revoke the grant (HTTP ${res.status}); the connection was deleted anyway` };
    }
    // RFC 7009 §2.2: 200 also when the token was already invalid; some providers answer 204. A 2xx that
    // carries an error (Slack's {"ok": false}) is read as token answers are: not revoked.
    const body = parseAnswerBody(await res.text(), res.headers.get('content-type') ?? '');
    const refused = body ? answerError(input.provider.spec.tokenResponse, body) : undefined;
    if (refused) {
      const said = providerText(
        `${refused.error}${refused.description ? `: ${refused.description}` : ''}`,
        [value, client?.clientSecret],
        200,
      );
      return { revoked: false, message: `${name} did not revoke the grant (it answered ${said}); the connection was deleted anyway` };
    }
    return { revoked: true, message: `Grant revoked at ${name} (${hint.replace('_', ' ')})` };
  } catch (err) {
    const why = isAbortOrTimeout(err) ? 'timed out' : 'could not be sent';
    return { revoked: false, message: `Revoking the grant at ${name} ${why}; the connection was deleted anyway` };
  }
}
