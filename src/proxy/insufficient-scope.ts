/**
 * A provider's answer saying the token lacks a scope, read from its headers (never its body):
 * - RFC 6750 §3.1: 403 with `WWW-Authenticate: Bearer error="insufficient_scope", scope="..."` (the scope
 *   the call needs, when the provider names it);
 * - GitHub: 403 with `X-Accepted-OAuth-Scopes` (the scopes the action checks for, any one suffices) of
 *   which none is in `X-OAuth-Scopes` (the token's) —
 *   https://docs.github.com/en/apps/oauth-apps/building-oauth-apps/scopes-for-oauth-apps.
 * The proxy answers such a 403 with a clear error naming the scope (src/proxy/credential-proxy.ts).
 */
import { scopesOf } from '../auth/granted-scopes.js';

export interface ScopeRefusal {
  /** The scopes the provider says the call needs (any one of them for GitHub); none when it does not say. */
  needed: string[];
  /** Whether any one of `needed` suffices (GitHub) rather than all (RFC 6750). */
  anyOf: boolean;
  /** The token's scopes, when the provider says them (GitHub). */
  granted?: string[];
}

/** Headers the proxy passes on with its own answer to a scope refusal. */
export const SCOPE_HEADERS = ['www-authenticate', 'x-oauth-scopes', 'x-accepted-oauth-scopes'] as const;

/** Shown scope names: printable, without quotes or backslashes, at most 256 characters, at most 20. */
function shown(scopes: string[] | undefined): string[] {
  return (scopes ?? []).filter((s) => s.length <= 256 && /^[\x21\x23-\x5b\x5d-\x7e]+$/.test(s)).slice(0, 20);
}

/** The `insufficient_scope` challenge of a WWW-Authenticate value, and its `scope` (RFC 6750 §3). */
function bearerInsufficientScope(value: string): { scope?: string } | undefined {
  if (value.length > 8192 || !/(^|[\s,])Bearer\s/i.test(value)) return undefined;
  const params = new Map<string, string>();
  for (const m of value.matchAll(/([A-Za-z_][A-Za-z0-9_-]*)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^\s,"]+))/g)) {
    const name = m[1]!.toLowerCase();
    if (!params.has(name)) params.set(name, (m[2] ?? m[3] ?? '').replace(/\\(.)/g, '$1'));
  }
  if (params.get('error') !== 'insufficient_scope') return undefined;
  const scope = params.get('scope');
  return scope !== undefined ? { scope } : {};
}

/** The scope refusal a provider's answer states, if any. */
export function scopeRefusal(status: number, header: (name: string) => string | undefined): ScopeRefusal | undefined {
  if (status !== 403) return undefined;
  const challenge = header('www-authenticate');
  const bearer = challenge === undefined ? undefined : bearerInsufficientScope(challenge);
  if (bearer) return { needed: shown(scopesOf(bearer.scope)), anyOf: false };
  const accepted = shown(scopesOf(header('x-accepted-oauth-scopes')));
  const tokenScopes = header('x-oauth-scopes');
  if (accepted.length && tokenScopes !== undefined) {
    const granted = shown(scopesOf(tokenScopes));
    if (!accepted.some((s) => granted.includes(s))) return { needed: accepted, anyOf: true, granted };
  }
  return undefined;
}

/** The error's message: what is missing, what the grant has, and how to get more. */
export function scopeRefusalMessage(
  refusal: ScopeRefusal,
  providerName: string,
  recorded: string[] | undefined,
  integration: string,
): string {
  const quoted = (list: string[]) => list.map((s) => `"${s}"`).join(', ');
  const granted = refusal.granted ?? shown(recorded);
  const needs = refusal.needed.length
    ? refusal.needed.length === 1
      ? `the scope ${quoted(refusal.needed)}`
      : `${refusal.anyOf ? 'one of the scopes' : 'the scopes'} ${quoted(refusal.needed)}`
    : 'a scope it does not name';
  return (
    `${providerName} refused the call: the connection's grant lacks ${needs}` +
    (granted.length ? ` (granted: ${granted.join(' ')})` : '') +
    `. Reconnect it asking for more scopes (a reconnect session with integrations_config_defaults.${integration}.connection_config.oauth_scopes_override).`
  );
}
