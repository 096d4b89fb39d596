/**
 * A CredentialBinding's `target.template` filled for one connection: the bound Secret's keys and
 * values. Only the values below exist: the access token and facts about the connection, never a
 * refresh token, client secret or key (an unknown placeholder is refused, not left in place).
 */
import { LatchkeyError } from '../domain/errors.js';

/** The Secret a binding writes when its template is not given. */
export const DEFAULT_BINDING_TEMPLATE: Readonly<Record<string, string>> = { token: '${accessToken}' };

/** What a template may name. `undefined`: the connection has none (a template naming it is refused). */
export interface BoundValues {
  accessToken: string;
  /** RFC 3339. */
  expiresAt: string | undefined;
  /** The provider's API base URL (its `proxy.baseUrl`, configuration filled in). */
  baseUrl: string | undefined;
  connectionId: string;
  integration: string;
  provider: string;
  connectionConfig: Record<string, unknown> | undefined;
}

const PLACEHOLDER = /\$\{([^}]*)\}/g;
const NAMED = new Set(['accessToken', 'expiresAt', 'baseUrl', 'connectionId', 'integration', 'provider']);
const CONFIG = /^connectionConfig\.([A-Za-z0-9_]+)$/;

/** The Secret's data (values as text) from the template; a `template_invalid` error naming what cannot be filled. */
export function fillBindingTemplate(template: Readonly<Record<string, string>>, values: BoundValues): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, text] of Object.entries(template)) {
    out[key] = text.replace(PLACEHOLDER, (_m, name: string) => {
      const value = valueOf(name, values);
      if (value === undefined) throw new LatchkeyError('invalid_input', 'template_invalid', `template key "${key}": ${missing(name)}`);
      return value;
    });
  }
  return out;
}

/** The same keys with empty values: what a bound Secret holds once its connection is gone or revoked. */
export function emptiedBindingValues(template: Readonly<Record<string, string>>): Record<string, string> {
  return Object.fromEntries(Object.keys(template).map((k) => [k, '']));
}

function valueOf(name: string, values: BoundValues): string | undefined {
  if (NAMED.has(name)) return values[name as keyof Omit<BoundValues, 'connectionConfig'>];
  const config = CONFIG.exec(name);
  if (!config) return undefined;
  const v = values.connectionConfig?.[config[1]!];
  return typeof v === 'string' || (typeof v === 'number' && Number.isFinite(v)) ? String(v) : undefined;
}

function missing(name: string): string {
  if (NAMED.has(name)) return `the connection has no ${name}`;
  if (CONFIG.test(name)) return `the connection's configuration has no ${name.slice('connectionConfig.'.length)}`;
  // Never echo more than a short name: a hostile template is still the user's own text, but keep messages bounded.
  return `\${${name.slice(0, 64)}} is not a value a binding can hold`;
}
