import { createPrivateKey, sign } from 'node:crypto';
import { fillProviderUrl } from '../../catalog/connection-config.js';
import { INTEGRATION_SECRET_KEYS } from '../../k8s/resources.js';
import { parseRetryAfter } from '../../domain/retry.js';
import { readAnswerText } from '../../egress/bounded-body.js';
import { providerText, requestSecrets } from '../../oplog/redact.js';
import { RefreshError } from '../../auth/refresh/errors.js';
import { isAbortOrTimeout } from '../../domain/errors.js';
import type { RefreshStrategy, StrategyInput } from '../../auth/refresh/strategies.js';
import type { CatalogStore } from '../../k8s/store.js';
import type { IntegrationResource } from '../../k8s/resources.js';

/**
 * Code-host app installations (auth mode APP, e.g. GitHub Apps): the app authenticates with a short
 * JWT signed RS256 with its private key, and exchanges it at the provider's installation token URL
 * (`.../app/installations/${connectionConfig.installationId}/access_tokens`) for an installation
 * access token that lives about an hour.
 */

const b64url = (data: Buffer | string) => Buffer.from(data).toString('base64url');

/** The app's JWT: iss = App ID, iat a minute in the past (clock drift), exp 9 minutes ahead (GitHub allows 10). */
export function appJwt(appId: string, privateKeyPem: string, nowMs: number): string {
  const now = Math.floor(nowMs / 1000);
  const header = b64url(JSON.stringify({ alg: 'RS256', typ: 'JWT' }));
  const payload = b64url(JSON.stringify({ iat: now - 60, exp: now + 9 * 60, iss: appId }));
  const key = createPrivateKey(privateKeyPem);
  const signature = sign('RSA-SHA256', Buffer.from(`${header}.${payload}`), key);
  return `${header}.${payload}.${b64url(signature)}`;
}

export interface InstallationToken {
  token: string;
  /** ISO time, when the provider says. */
  expiresAt?: string;
  /** The response without the token (permissions, repository selection...). */
  raw: Record<string, unknown>;
}

export interface InstallationTokenRequest {
  appId: string;
  privateKeyPem: string;
  /** The installation token URL, placeholders already filled. */
  tokenUrl: string;
  fetch: typeof fetch;
  now: number;
  timeoutSeconds?: number;
}

/**
 * Mints an installation access token. Throws {@link RefreshError}: permanent when the provider
 * refuses the app or the installation (401, 403, 404, 422: a removed installation or a wrong key),
 * transient on 5xx, 429 (with Retry-After) and network errors.
 */
export async function requestInstallationToken(req: InstallationTokenRequest): Promise<InstallationToken> {
  let jwt: string;
  try {
    jwt = appJwt(req.appId, req.privateKeyPem, req.now);
  } catch {
    throw new RefreshError('the App private key is not a valid PEM RSA key', { permanent: true, code: 'integration_misconfigured' });
  }
  const init: RequestInit = {
    method: 'POST',
    headers: { authorization: `Bearer ${jwt}`, accept: 'application/vnd.github+json', 'user-agent': 'latchkey' },
    signal: AbortSignal.timeout((req.timeoutSeconds ?? 10) * 1000),
  };
  let res: Response;
  try {
    res = await req.fetch(req.tokenUrl, init);
  } catch (err) {
    const timeout = isAbortOrTimeout(err);
    throw new RefreshError(`provider unavailable: installation token request ${timeout ? 'timed out' : 'failed'}`, {
      permanent: false,
      code: 'provider_unavailable',
    });
  }
  const text = await readAnswerText(res);
  // not JSON: handled below by status
  const body = jsonObjectOf(text);
  const later = unavailableAnswer(res, 'installation token endpoint', req.now);
  if (later) throw later;
  if (res.status >= 400) {
    // The provider's message may quote the request: not the app's JWT (nor its signature alone), nor the key.
    const said = typeof body.message === 'string' ? providerText(body.message, [...requestSecrets(init), req.privateKeyPem], 200) : '';
    const detail = said ? `: ${said}` : '';
    throw new RefreshError(`reauthorization required: installation token endpoint answered ${res.status}${detail}`, {
      permanent: true,
      code: 'reauthorization_required',
      providerError: { status: res.status, description: detail.slice(2) || undefined },
    });
  }
  if (typeof body.token !== 'string' || body.token.length === 0) {
    throw new RefreshError(`provider unavailable: installation token endpoint answered ${res.status} without a token`, {
      permanent: false,
      code: 'provider_unavailable',
      providerError: { status: res.status },
    });
  }
  const { token, ...raw } = body;
  const expiresAt =
    typeof body.expires_at === 'string' && Number.isFinite(Date.parse(body.expires_at))
      ? new Date(Date.parse(body.expires_at)).toISOString()
      : undefined;
  return { token, expiresAt, raw };
}

/** The App ID and private key from the Integration's Secret (appId/privateKey, or clientId/clientSecret). */
export function appCredentialsOf(input: Pick<StrategyInput, 'catalog' | 'namespace' | 'integration'>): {
  appId: string;
  privateKeyPem: string;
} {
  const ref = input.integration.spec.clientSecretRef?.name;
  const read = (key: string) => (ref ? input.catalog.readSecretValue(input.namespace, ref, key) : undefined) || undefined;
  const appId = read(INTEGRATION_SECRET_KEYS.appId) ?? read(INTEGRATION_SECRET_KEYS.clientId);
  const privateKeyPem = read(INTEGRATION_SECRET_KEYS.privateKey) ?? read(INTEGRATION_SECRET_KEYS.clientSecret);
  if (!appId || !privateKeyPem) {
    throw new RefreshError(`integration ${input.integration.metadata.name} needs a Secret with appId and privateKey (clientSecretRef)`, {
      permanent: true,
      code: 'integration_misconfigured',
    });
  }
  return { appId, privateKeyPem };
}

/** APP: a new installation token each time, from the app's keys (the APP mode's strategy, src/modes/app/mode.ts). */
export const appInstallationStrategy: RefreshStrategy = {
  canRefresh: () => true,
  async refresh(input) {
    const tokenTemplate = input.provider.spec.tokenUrl;
    if (!tokenTemplate) {
      throw new RefreshError(`provider ${input.provider.metadata.name} has no tokenUrl`, {
        permanent: true,
        code: 'integration_misconfigured',
      });
    }
    const tokenUrl = fillProviderUrl(input.provider.spec, tokenTemplate, input.connection.resource.spec.connectionConfig);
    const minted = await requestInstallationToken({
      ...appCredentialsOf(input),
      tokenUrl,
      fetch: input.fetch,
      now: input.now,
      timeoutSeconds: input.timeoutSeconds,
    });
    const next: Record<string, unknown> = { ...input.connection.credentials, type: 'APP', access_token: minted.token, raw: minted.raw };
    if (minted.expiresAt) next.expires_at = minted.expiresAt;
    else delete next.expires_at;
    return next as { type: string } & Record<string, unknown>;
  },
};

/** The installation as the provider describes it to its app. */
export interface InstallationInfo {
  id: string;
  /** The app the installation belongs to (GitHub: `app_id`). */
  appId?: string;
  /** The account the app is installed on (GitHub: `account.login`). */
  account?: string;
  createdAt?: string;
}

/**
 * The installation URL (GET with the app's JWT): the Provider's `appInstallation.installationUrl`, else
 * its tokenUrl without the trailing `/access_tokens` (GitHub's layout). Placeholders filled.
 */
export function installationUrlOf(
  spec: { appInstallation?: { installationUrl?: string }; tokenUrl?: string },
  fill: (template: string) => string,
): string | undefined {
  const template = spec.appInstallation?.installationUrl ?? spec.tokenUrl?.replace(/\/access_tokens\/?$/, '');
  return template ? fill(template) : undefined;
}

/**
 * Asks the provider, as the app, for one installation. `undefined` when the provider does not know it
 * for this app (401/403/404/422: forged, removed, or another app's). Throws {@link RefreshError}
 * (transient) when the provider fails or cannot be reached, permanent when the key is unusable.
 */
export async function getInstallation(
  req: Omit<InstallationTokenRequest, 'tokenUrl'> & { installationUrl: string },
): Promise<InstallationInfo | undefined> {
  let jwt: string;
  try {
    jwt = appJwt(req.appId, req.privateKeyPem, req.now);
  } catch {
    throw new RefreshError('the App private key is not a valid PEM RSA key', { permanent: true, code: 'integration_misconfigured' });
  }
  let res: Response;
  try {
    res = await req.fetch(req.installationUrl, {
      headers: { authorization: `Bearer ${jwt}`, accept: 'application/vnd.github+json', 'user-agent': 'latchkey' },
      signal: AbortSignal.timeout((req.timeoutSeconds ?? 10) * 1000),
    });
  } catch {
    throw new RefreshError('provider unavailable: installation lookup failed', { permanent: false, code: 'provider_unavailable' });
  }
  const text = await readAnswerText(res);
  if ([401, 403, 404, 422].includes(res.status)) return undefined;
  if (!res.ok) {
    throw new RefreshError(`provider unavailable: installation lookup answered ${res.status}`, {
      permanent: false,
      code: 'provider_unavailable',
      providerError: { status: res.status },
    });
  }
  // an answer without JSON names no app: refused by the caller
  const body = jsonObjectOf(text);
  const account = body.account as { login?: unknown } | undefined;
  const str = (v: unknown) => (typeof v === 'string' || typeof v === 'number' ? String(v) : undefined);
  return {
    id: str(body.id) ?? '',
    appId: str(body.app_id),
    account: str(account?.login),
    createdAt: str(body.created_at),
  };
}

/** An answer that says "later" (5xx, 429, 408): a transient failure, with the provider's Retry-After. */
export function unavailableAnswer(res: Response, what: string, now: number): RefreshError | undefined {
  if (res.status < 500 && res.status !== 429 && res.status !== 408) return undefined;
  return new RefreshError(`provider unavailable: ${what} answered ${res.status}`, {
    permanent: false,
    code: 'provider_unavailable',
    retryAfterMs: parseRetryAfter(res.headers.get('retry-after'), now),
    providerError: { status: res.status },
  });
}

/** The JSON object an answer holds, or an empty one (not JSON, or not an object). */
export function jsonObjectOf(text: string): Record<string, unknown> {
  try {
    const parsed = JSON.parse(text) as unknown;
    return parsed && typeof parsed === 'object' ? (parsed as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

/** Connection configuration the install flow fills itself: never asked from the end user. */
export const APP_SUPPLIED_KEYS: ReadonlySet<string> = new Set(['appSlug', 'installationId']);

/** The app slug from the Integration's Secret (`appSlug`, or the last path segment of `appLink`), if any. */
export function appSlugOfIntegration(store: CatalogStore, namespace: string, integration: IntegrationResource): string | undefined {
  const ref = integration.spec.clientSecretRef?.name;
  const read = (key: string) => (ref ? store.readSecretValue(namespace, ref, key) : undefined) || undefined;
  const slug = read('appSlug');
  if (slug) return slug;
  const link = read('appLink');
  if (!link) return undefined;
  try {
    return new URL(link).pathname.split('/').filter(Boolean).pop();
  } catch {
    return undefined;
  }
}

/** The earlier of two ISO times (either may be missing): a CUSTOM connection lapses with the first of its tokens. */
export function earlierOf(a: string | undefined, b: string | undefined): string | undefined {
  if (!a) return b;
  if (!b) return a;
  return Date.parse(a) <= Date.parse(b) ? a : b;
}
