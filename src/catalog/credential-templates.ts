/**
 * A Provider's templated `proxy.headers`, `proxy.query` and `proxy.body` filled for one set of credentials and a
 * connection's configuration (`${apiKey}`, `${username}`, `${password}`, `${accessToken}`, `${sessionToken}`
 * (a session step's token: Bullhorn's BhRestToken), `${connectionConfig.X}`, and the Integration's `${clientId}` and
 * `${clientSecret}`): what the proxy adds to a request, and what a typed credential's check sends.
 */
import { fillTemplate, MissingTemplateValueError } from './template.js';
import { LatchkeyError } from '../domain/errors.js';
import { isUnsafeHeaderValue } from '../domain/header-value.js';

const VALUE_PLACEHOLDER = /\$\{(apiKey|username|password|accessToken|sessionToken|clientId|clientSecret)\}/g;

/** The Integration's client values a provider's API asks for beside the connection's token (Etsy's `x-api-key`). */
export const CLIENT_PLACEHOLDERS = ['${clientId}', '${clientSecret}'] as const;

/**
 * The credential values the templates name (undefined: the credentials have none); `clientId` and `clientSecret` are
 * the Integration's, for providers whose API takes the app's key on every call.
 */
export type CredentialValues = Record<'apiKey' | 'username' | 'password' | 'accessToken' | 'sessionToken', string | undefined> &
  Partial<Record<'clientId' | 'clientSecret', string>>;

/** True when the templates name the Integration's client (its values are then read for each use, never cached). */
export function templatesUseClient(templates: Array<Record<string, string> | undefined>): boolean {
  return templates.some((t) => Object.values(t ?? {}).some((v) => CLIENT_PLACEHOLDERS.some((p) => v.includes(p))));
}

export interface Injection {
  headers: Record<string, string>;
  query: Array<[string, string]>;
  /** The JSON body's fields (`proxy.body`), only for a provider that declares them. */
  body?: Array<[string, string]>;
}

/** Every template value a Provider's proxy declares (headers, query parameters, body fields). */
export function proxyTemplates(
  proxy: { headers?: Record<string, string>; query?: Record<string, string>; body?: Record<string, string> } | undefined,
): string[] {
  return [...Object.values(proxy?.headers ?? {}), ...Object.values(proxy?.query ?? {}), ...Object.values(proxy?.body ?? {})];
}

/** One template filled; a 400 naming what is missing. */
export function fillCredentialTemplate(
  template: string,
  where: string,
  values: CredentialValues,
  connectionConfig: Record<string, unknown> | undefined,
): string {
  let withConfig: string;
  try {
    withConfig = fillTemplate(template, connectionConfig, { encode: false });
  } catch (err) {
    if (err instanceof MissingTemplateValueError) {
      throw new LatchkeyError(
        'invalid_input',
        'missing_connection_config',
        `The provider's ${where} needs ${err.message.replace(/^connection configuration is missing /, 'connection configuration ')}`,
      );
    }
    throw err;
  }
  return withConfig.replace(VALUE_PLACEHOLDER, (_m, name: keyof CredentialValues) => {
    const v = values[name];
    if (v === undefined)
      throw new LatchkeyError(
        'invalid_input',
        'missing_credentials',
        name === 'clientId' || name === 'clientSecret'
          ? `The provider's ${where} needs the Integration's ${name}, which its client Secret does not have`
          : `The provider's ${where} needs the connection's ${name}, which its credentials do not have`,
      );
    return v;
  });
}

/** Header templates filled (names lower-cased); a 400 for a value with control characters. */
export function filledHeaders(
  templates: Record<string, string> | undefined,
  values: CredentialValues,
  connectionConfig: Record<string, unknown> | undefined,
  what = 'proxy header',
): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, template] of Object.entries(templates ?? {})) {
    const value = fillCredentialTemplate(template, `${what} ${name}`, values, connectionConfig);
    if (isUnsafeHeaderValue(value))
      throw new LatchkeyError('invalid_input', 'invalid_header_value', `The ${what} ${name} would contain control characters`);
    headers[name.toLowerCase()] = value;
  }
  return headers;
}

/** Query parameter templates filled. */
export function filledQuery(
  templates: Record<string, string> | undefined,
  values: CredentialValues,
  connectionConfig: Record<string, unknown> | undefined,
): Array<[string, string]> {
  return Object.entries(templates ?? {}).map(([name, template]) => [
    name,
    fillCredentialTemplate(template, `proxy query parameter ${name}`, values, connectionConfig),
  ]);
}

/** JSON body field templates filled (`proxy.body`); any string may go in a JSON string. */
export function filledBody(
  templates: Record<string, string>,
  values: CredentialValues,
  connectionConfig: Record<string, unknown> | undefined,
): Array<[string, string]> {
  return Object.entries(templates).map(([name, template]) => [
    name,
    fillCredentialTemplate(template, `proxy body field ${name}`, values, connectionConfig),
  ]);
}
