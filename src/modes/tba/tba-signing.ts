/**
 * Auth mode TBA: NetSuite token-based authentication. Every request is signed with OAuth 1.0a
 * (RFC 5849) using HMAC-SHA256, the Integration's consumer key and secret, the connection's token ID
 * and secret, and `realm` set to the NetSuite account ID. There is no flow and nothing expires: the
 * token is created in NetSuite (Setup > Users/Roles > Access Tokens) and revoked there.
 *
 * NetSuite writes one account ID two ways: `1234567_SB1` (the realm, upper case, underscore) and
 * `1234567-sb1` (host names, lower case, dash). Connection configuration holds the host form, because
 * it builds `https://{accountId}.suitetalk.api.netsuite.com` and `.restlets.api.netsuite.com`; the
 * realm is derived from it here.
 */
import { LatchkeyError } from '../../domain/errors.js';
import type { ProviderSpec } from '../../k8s/resources.js';
import { signRequest } from '../shared/oauth1.js';

/** The TBA part of a Provider's spec (`spec.tba`): the account ID's configuration key (default `accountId`), the signature method (default HMAC-SHA256). */
export type TbaSettings = NonNullable<ProviderSpec['tba']>;

export const DEFAULT_ACCOUNT_ID_KEY = 'accountId';

/** The realm NetSuite expects for an account ID in either of its forms: `1234567-sb1` → `1234567_SB1`. */
export function netsuiteRealm(accountId: string): string {
  return accountId.trim().toUpperCase().replace(/-/g, '_');
}

export interface TbaSignInput {
  settings: TbaSettings | undefined;
  credentials: Record<string, unknown>;
  connectionConfig: Record<string, unknown> | undefined;
  consumer: { consumerKey: string; consumerSecret: string } | undefined;
  method: string;
  url: URL;
  /** Parameters of a form-encoded body (signed too). */
  formParams?: URLSearchParams;
}

/** The `Authorization: OAuth realm="…", …` value for one request. Throws a 400/503-kind LatchkeyError naming what is missing. */
export function tbaAuthorization(input: TbaSignInput): string {
  if (!input.consumer)
    throw new LatchkeyError(
      'invalid_input',
      'missing_client_credentials',
      'The integration has no consumer key and secret (clientSecretRef) to sign NetSuite TBA requests',
    );
  const { token_id: tokenId, token_secret: tokenSecret } = input.credentials;
  if (typeof tokenId !== 'string' || !tokenId || typeof tokenSecret !== 'string' || !tokenSecret)
    throw new LatchkeyError('invalid_input', 'missing_credentials', 'The connection has no TBA token ID and secret');
  const key = input.settings?.accountIdKey ?? DEFAULT_ACCOUNT_ID_KEY;
  const accountId = input.connectionConfig?.[key];
  if (typeof accountId !== 'string' || !accountId.trim())
    throw new LatchkeyError(
      'invalid_input',
      'missing_connection_config',
      `TBA signing needs the account ID: connection configuration "${key}" is missing`,
    );
  return signRequest({
    method: input.method,
    url: input.url.toString(),
    consumerKey: input.consumer.consumerKey,
    consumerSecret: input.consumer.consumerSecret,
    token: tokenId,
    tokenSecret,
    bodyParams: input.formParams,
    realm: netsuiteRealm(accountId),
    signatureMethod: input.settings?.signatureMethod ?? 'HMAC-SHA256',
  });
}
