/** Connect session tokens issued to an application's backend (`POST /connect/sessions`, `/connect/sessions/reconnect`). */
import { randomBytes } from 'node:crypto';
import type { ResolvedEnvironment } from '../auth/environment-keys.js';
import { sealSessionToken, type SessionClaims } from '../auth/session-tokens.js';
import type { AppContext } from '../context/app-context.js';
import { LatchkeyError } from '../domain/errors.js';
import { ENVIRONMENT_SECRET_KEYS } from '../k8s/resources.js';

/**
 * A new session token sealed under the Environment's secret key, with a new session ID and the
 * configured lifetime; `exp` in seconds. Stored nowhere: every replica verifies it.
 */
export function issueSessionToken(
  deps: Pick<AppContext, 'catalog' | 'clock' | 'config'>,
  env: ResolvedEnvironment,
  claims: Omit<SessionClaims, 'namespace' | 'sid' | 'exp'>,
): { token: string; exp: number } {
  const secretKey = deps.catalog.readSecretValue(env.namespace, env.resource.spec.secretRef.name, ENVIRONMENT_SECRET_KEYS.secretKey);
  if (!secretKey)
    throw new LatchkeyError('unavailable', 'environment_not_ready', "The environment's secret key is not readable; try again");
  const exp = Math.floor(deps.clock.now() / 1000) + deps.config.sessionTtlSeconds;
  const token = sealSessionToken({ ...claims, namespace: env.namespace, sid: randomBytes(16).toString('base64url'), exp }, secretKey);
  return { token, exp };
}
