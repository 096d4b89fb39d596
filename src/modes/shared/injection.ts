/**
 * The proxy's Authorization header as modes build it: a bearer token, HTTP Basic, or nothing; none
 * when the Provider's templates (`proxy.headers`, `proxy.query`, `proxy.body`) already place the credential.
 */
import { LatchkeyError } from '../../domain/errors.js';
import { isUnsafeHeaderValue } from '../../domain/header-value.js';
import { proxyTemplates } from '../../catalog/credential-templates.js';
import type { ProviderSpec } from '../../k8s/resources.js';
import type { AuthorizationInput, ProxyInjection } from '../auth-mode.js';

/** True when the provider's templates already place this credential somewhere. */
export function templatesUse(spec: ProviderSpec, placeholder: string): boolean {
  return proxyTemplates(spec.proxy).some((v) => v.includes(placeholder));
}

/** A checked header value: a LatchkeyError naming what is missing or unsafe. */
export function headerValue(value: unknown, what: string): string {
  if (typeof value !== 'string' || !value) throw new LatchkeyError('invalid_input', 'missing_credentials', `The connection has no ${what}`);
  if (isUnsafeHeaderValue(value))
    throw new LatchkeyError('invalid_input', 'invalid_credentials', `The ${what} contains control characters`);
  return value;
}

/**
 * `Authorization: Bearer <token>` from the credentials' token field, unless the templates use `${accessToken}`
 * or `${sessionToken}` (the API takes a session token in its place: Bullhorn's BhRestToken).
 */
export function bearer(field: ProxyInjection['accessTokenField']): ProxyInjection['authorization'] {
  return ({ spec, credentials, headers }: AuthorizationInput) => {
    if (headers.authorization !== undefined || templatesUse(spec, '${accessToken}') || templatesUse(spec, '${sessionToken}'))
      return undefined;
    return `Bearer ${headerValue(credentials[field], 'access token')}`;
  };
}

/** Modes whose credential the templates place, or that need none. */
export const noAuthorization: ProxyInjection['authorization'] = () => undefined;

/** Injection of a mode whose tokens expire and are renewed: a bearer token, refreshed when used. */
export function bearerInjection(field: ProxyInjection['accessTokenField']): ProxyInjection {
  return { accessTokenField: field, refreshesOnUse: true, signsFormBody: false, authorization: bearer(field) };
}
