import { LatchkeyError } from '../domain/errors.js';
import { urlPathProblem } from './url-path.js';

/**
 * Fills `${connectionConfig.KEY}` placeholders (as in provider token URLs with a subdomain, e.g.
 * `https://${connectionConfig.subdomain}.zendesk.com/oauth/tokens`) from a connection's configuration.
 */
const PLACEHOLDER = /\$\{connectionConfig\.([A-Za-z0-9_]+)\}/g;

/** A template names connection configuration keys the connection does not have (the caller's input: 400). */
export class MissingTemplateValueError extends LatchkeyError {
  constructor(readonly keys: string[]) {
    super('invalid_input', 'missing_connection_config', `connection configuration is missing ${keys.map((k) => `"${k}"`).join(', ')}`);
    this.name = 'MissingTemplateValueError';
  }
}

/** Names of the connection configuration keys a template refers to. */
export function templateKeys(template: string): string[] {
  return [...new Set([...template.matchAll(PLACEHOLDER)].map((m) => m[1]!))];
}

export interface FillOptions {
  /** Percent-encode values (for URLs); default true. */
  encode?: boolean;
  /**
   * Keys with the urlPath rule (src/catalog/url-path.ts): filled as they are (their `/` kept), and an absent or
   * empty value fills nothing. A value that breaks the rule is refused here too, whatever checked it before.
   */
  pathKeys?: ReadonlySet<string>;
}

/**
 * Replaces every placeholder with the configuration value (strings and numbers). Throws
 * {@link MissingTemplateValueError} naming all missing keys, so a caller can answer with a clear error.
 */
export function fillTemplate(template: string, connectionConfig: Record<string, unknown> | undefined, opts: FillOptions = {}): string {
  const encode = opts.encode ?? true;
  const pathKeys = opts.pathKeys ?? new Set<string>();
  const missing = templateKeys(template).filter((k) => !pathKeys.has(k) && !isFilled(connectionConfig?.[k]));
  if (missing.length) throw new MissingTemplateValueError(missing);
  return template.replace(PLACEHOLDER, (_m, key: string) => {
    if (pathKeys.has(key)) return pathValue(key, connectionConfig?.[key]);
    const value = String(connectionConfig![key]);
    return encode ? encodeURIComponent(value) : value;
  });
}

function pathValue(key: string, v: unknown): string {
  if (v === undefined || v === null || v === '') return '';
  const problem = typeof v === 'string' ? urlPathProblem(v) : 'must be a string';
  if (problem)
    throw new LatchkeyError('invalid_input', 'invalid_connection_config', `Invalid connection configuration: "${key}" ${problem}`);
  return v as string;
}

function isFilled(v: unknown): boolean {
  return (typeof v === 'string' && v.length > 0) || (typeof v === 'number' && Number.isFinite(v));
}
