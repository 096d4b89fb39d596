/**
 * The scopes a connection's grant holds, as the provider said or as they were asked for: the token
 * answer's `scope` (RFC 6749 §5.1: space-delimited; Pipedrive and GitHub separate with commas, Linear
 * sends a JSON array), else the scopes requested (RFC 6749 §3.3: an answer without `scope` granted those).
 * Kept in the credentials Secret (`granted_scopes`, a private field: src/domain/credentials.ts) and shown
 * beside the credentials by GET /connections/{id}.
 */

/** The field of the stored credentials holding the granted scopes. */
export const GRANTED_SCOPES_FIELD = 'granted_scopes';

/** Scopes from a `scope` value: a string split on spaces and commas, or an array of strings; none when absent or empty. */
export function scopesOf(value: unknown): string[] | undefined {
  const parts = typeof value === 'string' ? value.split(/[\s,]+/) : Array.isArray(value) ? value : undefined;
  if (!parts) return undefined;
  const scopes = [...new Set(parts.filter((s): s is string => typeof s === 'string' && s !== '' && s.length <= 512))];
  return scopes.length ? scopes.slice(0, 500) : undefined;
}

/**
 * What a new token answer says is granted: its `scope`, else (`requested`) what was asked for. A refresh
 * passes no `requested`: an answer without `scope` leaves the recorded scopes as they were (RFC 6749 §6:
 * a refresh grants the same scope unless it says otherwise).
 */
export function grantedScopes(answer: Record<string, unknown> | undefined, requested?: readonly string[]): string[] | undefined {
  return scopesOf(answer?.scope) ?? (requested?.length ? [...new Set(requested)] : undefined);
}

/** The recorded granted scopes of stored credentials (none for modes without scopes). */
export function recordedScopes(credentials: Record<string, unknown>): string[] | undefined {
  return scopesOf(credentials[GRANTED_SCOPES_FIELD]);
}
