import { primaryOf } from '../k8s/primary-environment.js';
import { openSessionToken, sessionTokenNamespace, type SessionClaims } from '../auth/session-tokens.js';
import type { CatalogStore } from '../k8s/store.js';
import { ENVIRONMENT_SECRET_KEYS, type EnvironmentResource } from '../k8s/resources.js';
import { LatchkeyError } from '../domain/errors.js';

export interface EnvironmentWithKey {
  namespace: string;
  environment: EnvironmentResource;
  secretKey: string;
}

/** The Environment that counts in a namespace and its secret key (which seals sessions and flow state). */
export function environmentWithKey(catalog: CatalogStore, namespace: string): EnvironmentWithKey | undefined {
  const environment = primaryOf(catalog.listEnvironments(namespace));
  if (!environment) return undefined;
  const secretKey = catalog.readSecretValue(namespace, environment.spec.secretRef.name, ENVIRONMENT_SECRET_KEYS.secretKey);
  return secretKey ? { namespace, environment, secretKey } : undefined;
}

export interface OpenSession extends EnvironmentWithKey {
  claims: SessionClaims;
}

/** Opens a connect session token, or throws the error the end user should see. */
export function openSession(catalog: CatalogStore, token: string | undefined, nowMs: number): OpenSession {
  if (!token) throw new LatchkeyError('unauthenticated', 'missing_session', 'This page needs a connect session token.');
  const namespace = sessionTokenNamespace(token);
  const env = namespace ? environmentWithKey(catalog, namespace) : undefined;
  if (!env)
    throw new LatchkeyError('unauthenticated', 'invalid_session', 'The connect session is not valid. Ask the application for a new link.');
  const opened = openSessionToken(token, env.secretKey, nowMs);
  if (!opened.ok) {
    throw opened.reason === 'expired'
      ? new LatchkeyError(
          'unauthenticated',
          'session_expired',
          'The connect session has expired. Go back to the application and start again.',
        )
      : new LatchkeyError('unauthenticated', 'invalid_session', 'The connect session is not valid. Ask the application for a new link.');
  }
  return { ...env, claims: opened.claims };
}
