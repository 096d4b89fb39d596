/**
 * Typed credentials (an API key, a username and password) checked with the provider before they are
 * stored: the Provider's `verification` call, sent once with the credentials injected as the proxy
 * would inject them (headers, query parameters, JSON body fields). A 2xx accepts them; 401 or 403
 * refuses them; a network failure, a timeout, 404, 429 or a 5xx is "could not check right now" (the
 * end user tries again; a 404 is also what a provider
 * answers while a path is being moved, and the operation log keeps what it said); any other answer
 * means the Provider's description does not fit the endpoint. Nothing of the answer is stored.
 */
import { fillProviderUrl, providerUrlTemplate } from '../../catalog/connection-config.js';
import { providerText } from '../../oplog/redact.js';
import { filledBody, filledHeaders, filledQuery, type CredentialValues } from '../../catalog/credential-templates.js';
import { isAbortOrTimeout, LatchkeyError } from '../../domain/errors.js';
import { isRetryableStatus } from '../../domain/retry.js';
import type { ProviderResource } from '../../k8s/resources.js';

/** Seconds the check may take: the end user is waiting in the Connect form. */
export const CREDENTIAL_CHECK_TIMEOUT_SECONDS = 10;

export interface CredentialCheck {
  provider: ProviderResource;
  values: CredentialValues;
  connectionConfig: Record<string, unknown> | undefined;
  /** The mode's Authorization header given the templated headers (BASIC), or undefined. */
  authorization: (headers: Record<string, string>, url: URL) => string | undefined;
  /** What was typed, for messages: "API key", "username and password". */
  what: string;
  fetch: typeof fetch;
}

/** How the check ended; `refused` and `unavailable` carry the error the form shows and a line for the log. */
export type CheckResult = { ok: true } | { ok: false; error: LatchkeyError; detail: string };

/** The URL the check calls: under `proxy.baseUrl`, or an absolute URL on the base URL's domain. */
export function verificationUrl(provider: ProviderResource, connectionConfig: Record<string, unknown> | undefined): URL {
  const spec = provider.spec;
  const template = providerUrlTemplate(spec, spec.verification!.path);
  if (!template) throw misconfigured(provider, 'verification.path is relative but the provider has no proxy.baseUrl');
  const url = new URL(fillProviderUrl(spec, template, connectionConfig));
  const base = spec.proxy?.baseUrl ? new URL(fillProviderUrl(spec, spec.proxy.baseUrl, connectionConfig)) : undefined;
  // Absolute: only on the provider's own domain, so a Provider cannot send typed keys elsewhere.
  if (base && !sameDomain(url.hostname, base.hostname))
    throw misconfigured(provider, `verification.path's host ${url.hostname} is not on the provider's domain`);
  return url;
}

function sameDomain(a: string, b: string): boolean {
  const domain = (h: string) => h.split('.').slice(-2).join('.');
  return domain(a) === domain(b);
}

function misconfigured(provider: ProviderResource, why: string): LatchkeyError {
  return new LatchkeyError(
    'unavailable',
    'integration_misconfigured',
    `${provider.spec.displayName}'s credential check is not usable: ${why}`,
  );
}

/** Sends the provider's verification call once with the typed credentials. */
export async function checkTypedCredentials(check: CredentialCheck): Promise<CheckResult> {
  const { provider, values, connectionConfig } = check;
  const spec = provider.spec;
  const verification = spec.verification!;
  const name = spec.displayName;
  const url = verificationUrl(provider, connectionConfig);
  for (const [k, v] of filledQuery(spec.proxy?.query, values, connectionConfig)) url.searchParams.append(k, v);
  const headers: Record<string, string> = {
    accept: 'application/json',
    ...filledHeaders(spec.proxy?.headers, values, connectionConfig),
    ...filledHeaders(verification.headers, values, connectionConfig, 'verification header'),
  };
  // As the proxy does: an Authorization the templates set wins over the mode's.
  const authorization = headers.authorization === undefined ? check.authorization(headers, url) : undefined;
  if (authorization !== undefined) headers.authorization = authorization;
  // A provider taking the credential in the JSON body (Mandrill's `key`): the body is its fields alone, as the
  // proxy sends them on a call without a body (src/proxy/json-body-fields.ts); the CRD makes such a check a POST.
  const bodyFields = spec.proxy?.body ? Object.fromEntries(filledBody(spec.proxy.body, values, connectionConfig)) : undefined;
  if (bodyFields) headers['content-type'] = 'application/json';
  const unavailable = (detail: string): CheckResult => ({
    ok: false,
    error: new LatchkeyError('upstream', 'provider_unavailable', `${name} could not check this ${check.what} right now; try again.`),
    detail,
  });
  let res: Response;
  try {
    res = await check.fetch(url, {
      method: verification.method ?? 'GET',
      headers,
      ...(bodyFields ? { body: JSON.stringify(bodyFields) } : {}),
      redirect: 'manual',
      signal: AbortSignal.timeout(CREDENTIAL_CHECK_TIMEOUT_SECONDS * 1000),
    });
  } catch (err) {
    const why = isAbortOrTimeout(err) ? 'timed out' : 'network error';
    return unavailable(`Credential check could not reach the provider: ${why}`);
  }
  if (res.status === 404 || res.status === 429 || res.status >= 500 || isRetryableStatus(res.status)) {
    // What the provider said goes to the operation log (its words, cleared of the typed values).
    const said = await answerText(res, [values.apiKey, values.username, values.password, headers.authorization]);
    return unavailable(`Credential check answered HTTP ${res.status}${said ? `: ${said}` : ''}`);
  }
  // Nothing else of the answer is needed; ctx.fetch bounds it, and the socket is released.
  await res.body?.cancel().catch(() => undefined);
  if (res.status >= 200 && res.status < 300) return { ok: true };
  if (res.status === 401 || res.status === 403) {
    return {
      ok: false,
      error: new LatchkeyError('invalid_input', 'invalid_credentials', `${name} refused this ${check.what}.`, {
        errors: [{ path: 'values', message: 'refused by the provider', code: 'invalid_credentials' }],
      }),
      detail: `Credential check refused by the provider (HTTP ${res.status})`,
    };
  }
  return {
    ok: false,
    error: misconfigured(provider, `the check answered HTTP ${res.status}`),
    detail: `Credential check answered HTTP ${res.status}; the Provider's verification does not fit the endpoint`,
  };
}

/** The start of an answer's body for the log, redacted; '' when it cannot be read. */
async function answerText(res: Response, secrets: Array<string | undefined>): Promise<string> {
  try {
    const text = (await res.text()).replace(/\s+/g, ' ').trim();
    return text ? providerText(text.slice(0, 2000), secrets, 300) : '';
  } catch {
    return '';
  }
}
