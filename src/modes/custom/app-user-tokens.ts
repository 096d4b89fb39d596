/**
 * The user side of CUSTOM (a code-host app with user authorization, e.g. a GitHub App with "Request
 * user authorization (OAuth) during installation"): the code from the install callback exchanged for a
 * user token, its refresh (GitHub: user tokens expire after 8 hours, refresh tokens after 6 months and
 * are single use), and the check that the installation is one the user can access — the only proof
 * that an `installation_id` in a callback was not typed in by someone else.
 */
import { findAnswerTooLarge } from '../../domain/errors.js';
import { readAnswerJson, readAnswerText } from '../../egress/bounded-body.js';
import { providerText, requestSecrets } from '../../oplog/redact.js';
import { RefreshError } from '../../auth/refresh/errors.js';
import { jsonObjectOf, unavailableAnswer } from '../shared/app-installation.js';

export interface UserToken {
  access_token: string;
  refresh_token?: string;
  expires_at?: string;
  refresh_token_expires_at?: string;
  /** The token response without the tokens. */
  raw: Record<string, unknown>;
}

interface TokenCall {
  tokenUrl: string;
  clientId: string;
  clientSecret: string;
  fetch: typeof fetch;
  now: number;
  timeoutSeconds?: number;
}

/** Authorization code → user token. Throws {@link RefreshError} (permanent: the code or the client was refused). */
export function exchangeUserCode(call: TokenCall & { code: string; redirectUri?: string }): Promise<UserToken> {
  const params: Record<string, string> = { code: call.code };
  if (call.redirectUri) params.redirect_uri = call.redirectUri;
  return tokenRequest(call, params);
}

/** Refresh-token grant; the answer carries a new refresh token (the old one is spent). */
export function refreshUserToken(call: TokenCall & { refreshToken: string }): Promise<UserToken> {
  return tokenRequest(call, { grant_type: 'refresh_token', refresh_token: call.refreshToken });
}

async function tokenRequest(call: TokenCall, params: Record<string, string>): Promise<UserToken> {
  const init: RequestInit = {
    method: 'POST',
    headers: { accept: 'application/json', 'content-type': 'application/x-www-form-urlencoded', 'user-agent': 'latchkey' },
    body: new URLSearchParams({ client_id: call.clientId, client_secret: call.clientSecret, ...params }),
    signal: AbortSignal.timeout((call.timeoutSeconds ?? 10) * 1000),
  };
  let res: Response;
  try {
    res = await call.fetch(call.tokenUrl, init);
  } catch {
    throw new RefreshError('provider unavailable: user token request failed', { permanent: false, code: 'provider_unavailable' });
  }
  const text = await readAnswerText(res);
  const later = unavailableAnswer(res, 'user token endpoint', call.now);
  if (later) throw later;
  // handled below: no token
  const body = jsonObjectOf(text);
  // GitHub answers 200 with `error` (bad_verification_code, bad_refresh_token, incorrect_client_credentials).
  if (typeof body.error === 'string' || res.status >= 400 || typeof body.access_token !== 'string' || !body.access_token) {
    // The provider's words, without what the request carried (it may quote it).
    const said = typeof body.error === 'string' ? providerText(body.error, requestSecrets(init), 100) : undefined;
    throw new RefreshError(`reauthorization required: user token endpoint answered ${said ?? `status ${res.status}`}`, {
      permanent: true,
      code: 'reauthorization_required',
      providerError: { status: res.status, error: said },
    });
  }
  const { access_token, refresh_token, ...raw } = body;
  const at = (seconds: unknown) =>
    typeof seconds === 'number' && seconds > 0 ? new Date(call.now + seconds * 1000).toISOString() : undefined;
  const token: UserToken = { access_token: access_token as string, raw };
  if (typeof refresh_token === 'string' && refresh_token) token.refresh_token = refresh_token;
  const expiresAt = at(body.expires_in);
  if (expiresAt) token.expires_at = expiresAt;
  const refreshExpiresAt = at(body.refresh_token_expires_in);
  if (refreshExpiresAt) token.refresh_token_expires_at = refreshExpiresAt;
  return token;
}

/**
 * Whether the user token's user can access the installation (GitHub: `GET /user/installations`,
 * following `Link: rel="next"` for up to 10 pages of 100).
 */
export async function userCanAccessInstallation(req: {
  userInstallationsUrl: string;
  userToken: string;
  installationId: string;
  fetch: typeof fetch;
  timeoutSeconds?: number;
}): Promise<boolean> {
  let next: string | undefined = withPageSize(req.userInstallationsUrl);
  for (let page = 0; next && page < 10; page++) {
    let res: Response;
    try {
      res = await req.fetch(next, {
        headers: { authorization: `Bearer ${req.userToken}`, accept: 'application/vnd.github+json', 'user-agent': 'latchkey' },
        signal: AbortSignal.timeout((req.timeoutSeconds ?? 10) * 1000),
      });
    } catch {
      throw new RefreshError('provider unavailable: installation list request failed', { permanent: false, code: 'provider_unavailable' });
    }
    if (!res.ok) {
      await res.body?.cancel();
      if (res.status >= 500 || res.status === 429)
        throw new RefreshError(`provider unavailable: installation list answered ${res.status}`, {
          permanent: false,
          code: 'provider_unavailable',
        });
      return false;
    }
    const body = (await readAnswerJson(res).catch((err: unknown) => {
      const tooLarge = findAnswerTooLarge(err);
      if (tooLarge) throw tooLarge;
      return {};
    })) as { installations?: Array<{ id?: unknown }> };
    if (body.installations?.some((i) => String(i.id) === req.installationId)) return true;
    next = /<([^>]+)>;\s*rel="next"/.exec(res.headers.get('link') ?? '')?.[1];
    if (next && new URL(next).origin !== new URL(req.userInstallationsUrl).origin) return false;
  }
  return false;
}

function withPageSize(url: string): string {
  const u = new URL(url);
  if (!u.searchParams.has('per_page')) u.searchParams.set('per_page', '100');
  return u.href;
}
