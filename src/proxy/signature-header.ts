/**
 * Where the proxy puts a SIGNATURE mode's per-request value: wherever the Provider's `proxy.headers`
 * or `proxy.query` use `${accessToken}` (Emarsys: `x-wsse: ${accessToken}`), otherwise in the
 * protocol's own header (`spec.signature.header`, default `x-wsse`).
 */
import { DEFAULT_SIGNATURE_HEADER } from '../auth/request-signature.js';
import { LatchkeyError } from '../domain/errors.js';
import type { ProviderSpec } from '../k8s/resources.js';
import type { StoredCredentials } from '../k8s/store.js';
import { templatesUse } from './credential-injection.js';
import { isUnsafeHeaderValue } from './headers.js';

/** `[name, value]` to add for SIGNATURE credentials (already carrying their fresh `token`), or undefined. */
export function signatureHeader(spec: ProviderSpec, credentials: StoredCredentials): [string, string] | undefined {
  if (credentials.type !== 'SIGNATURE' || templatesUse(spec, '${accessToken}')) return undefined;
  const value = credentials.token;
  if (typeof value !== 'string' || !value)
    throw new LatchkeyError('invalid_input', 'missing_credentials', 'The connection has no signature');
  if (isUnsafeHeaderValue(value))
    throw new LatchkeyError('invalid_input', 'invalid_credentials', 'The signature contains control characters');
  return [(spec.signature?.header ?? DEFAULT_SIGNATURE_HEADER).toLowerCase(), value];
}
