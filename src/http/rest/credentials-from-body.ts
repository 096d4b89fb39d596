import type { StoredCredentials } from '../../k8s/store.js';
import type { ImportCredentials } from './schemas/connections.js';

/** Stored credentials from an import body's credentials (timestamps normalized to ISO 8601). */
export function storedFromImport(c: ImportCredentials): StoredCredentials {
  switch (c.type) {
    case 'OAUTH2': {
      const { config_override, ...rest } = c;
      return compact({
        ...rest,
        expires_at: isoOrUndefined(c.expires_at),
        raw: compact({ ...rest, type: undefined, expires_at: isoOrUndefined(c.expires_at) }),
        config_override,
      });
    }
    case 'OAUTH1':
      return { ...c, raw: { oauth_token: c.oauth_token, oauth_token_secret: c.oauth_token_secret } };
    case 'OAUTH2_CC':
      return compact({ ...c, expires_at: isoOrUndefined(c.expires_at), raw: { access_token: c.token } });
    case 'TBA':
      return compact({ ...c, config_override: c.config_override && Object.keys(c.config_override).length ? c.config_override : undefined });
    default:
      return { ...c };
  }
}

function isoOrUndefined(v: string | undefined): string | undefined {
  return v === undefined ? undefined : new Date(v).toISOString();
}

function compact<T extends Record<string, unknown>>(o: T): T & { type: string } {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T & { type: string };
}
