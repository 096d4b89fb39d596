/**
 * `POST /oauth2/token`: RFC 8693 token exchange. A workload trades its ServiceAccount token (or the
 * Environment's secret key) for the provider access token of one connection, with one standard call
 * that agents and gateways already speak. Authorization is the REST API's: a ServiceAccount needs
 * `get` on `connections/credentials` (src/http/access-table.ts).
 *
 * Errors are OAuth's (RFC 6749 §5.2: `{ "error", "error_description" }`, 400 unless said otherwise),
 * not Latchkey's `{ "error": { "code", "message" } }`: the clients of this endpoint are OAuth
 * libraries, which read `error` as a string.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import express, { type Router } from 'express';
import { z } from 'zod';
import type { EnvironmentKeys, ResolvedEnvironment } from '../auth/environment-keys.js';
import type { TokenRefresher } from '../auth/refresh/token-refresher.js';
import { RefreshError } from '../auth/refresh/token-refresher.js';
import { exchangeForAccessToken } from '../connections/token-exchange.js';
import type { Clock } from '../domain/clock.js';
import { LatchkeyError } from '../domain/errors.js';
import { isApiUnavailable } from '../k8s/errors.js';
import type { Logger } from '../platform/log.js';
import { tokenExchangeAccess } from './access-table.js';
import { sourceAddress, throttled, type FailedAuthThrottle } from './failed-auth-throttle.js';
import type { ServiceAccountRequests } from './service-account-requests.js';

export const TOKEN_EXCHANGE_PATH = '/oauth2/token';
export const TOKEN_EXCHANGE_GRANT = 'urn:ietf:params:oauth:grant-type:token-exchange';
/** A Kubernetes ServiceAccount token (RFC 8693 §3). */
export const JWT_TOKEN_TYPE = 'urn:ietf:params:oauth:token-type:jwt';
/** The Environment's secret key: Latchkey's own token type URI (RFC 8693 §3 allows other URIs). */
export const SECRET_KEY_TOKEN_TYPE = 'urn:latchkey:params:oauth:token-type:secret-key';
export const ACCESS_TOKEN_TYPE = 'urn:ietf:params:oauth:token-type:access_token';
/** `resource` or `audience`: `urn:latchkey:connection:<namespace>:<integration>:<connection ID, percent-encoded>`. */
export const CONNECTION_URN_PREFIX = 'urn:latchkey:connection:';

export interface TokenExchangeDeps {
  keys: EnvironmentKeys;
  tokens: ServiceAccountRequests;
  throttle: FailedAuthThrottle;
  refresher: TokenRefresher;
  clock: Clock;
  logger: Logger;
}

/** The `error` codes this endpoint answers (RFC 6749 §5.2 and RFC 8693 §2.2.2's `invalid_target`). */
const OAUTH_ERROR_CODES = [
  'invalid_request',
  'invalid_target',
  'unauthorized_client',
  'unsupported_grant_type',
  'invalid_scope',
  'temporarily_unavailable',
  'server_error',
] as const;
type OAuthErrorCode = (typeof OAUTH_ERROR_CODES)[number];

/**
 * The form as the OpenAPI document describes it (src/http/openapi.ts). {@link exchange} reads it field
 * by field, so that each problem gets its own OAuth error.
 */
export const TokenExchangeForm = z.object({
  grant_type: z.literal(TOKEN_EXCHANGE_GRANT),
  subject_token: z.string().describe("A projected ServiceAccount token (audience `latchkey` by default) or the Environment's secret key"),
  subject_token_type: z.enum([JWT_TOKEN_TYPE, SECRET_KEY_TOKEN_TYPE]),
  resource: z
    .string()
    .optional()
    .describe(
      `The connection: \`${CONNECTION_URN_PREFIX}<namespace>:<integration>:<connection ID, percent-encoded>\` (this or \`audience\`)`,
    ),
  audience: z.string().optional().describe('The connection, as `resource` (when both are sent they must be equal)'),
  requested_token_type: z.literal(ACCESS_TOKEN_TYPE).optional(),
});

/** RFC 8693 §2.2.1's answer: the provider's access token, never a refresh token. */
export const TokenExchangeAnswer = z.object({
  access_token: z.string().describe("The provider's current access token of the connection"),
  issued_token_type: z.literal(ACCESS_TOKEN_TYPE),
  token_type: z.literal('Bearer'),
  expires_in: z.number().int().nonnegative().optional().describe('Seconds until it expires, when the provider said'),
});

/** RFC 6749 §5.2's error body. */
export const OAuthErrorBody = z.object({ error: z.enum(OAUTH_ERROR_CODES), error_description: z.string() });

/** An answer in RFC 6749 §5.2's shape: `error`, its description, the status. */
interface OAuthAnswer {
  error: OAuthErrorCode;
  description: string;
  status: number;
  retryAfterMs?: number;
}

/** An OAuth error thrown inside the exchange: a LatchkeyError whose code is `oauth:<error>` (400). */
function oauthError(error: OAuthErrorCode, description: string): LatchkeyError {
  return new LatchkeyError('invalid_input', `oauth:${error}`, description);
}

export interface ConnectionTarget {
  namespace: string;
  integration: string;
  connectionId: string;
}

/** The connection a `resource`/`audience` URN names, or undefined when it is not one. */
export function parseConnectionUrn(value: string): ConnectionTarget | undefined {
  if (!value.startsWith(CONNECTION_URN_PREFIX)) return undefined;
  const match = /^([a-z0-9]([-a-z0-9]*[a-z0-9])?):([a-z0-9]([-a-z0-9.]*[a-z0-9])?):(.+)$/.exec(value.slice(CONNECTION_URN_PREFIX.length));
  if (!match || match[1]!.length > 63 || match[3]!.length > 63) return undefined;
  let connectionId: string;
  try {
    connectionId = decodeURIComponent(match[5]!);
  } catch {
    return undefined;
  }
  if (connectionId.length > 255) return undefined;
  return { namespace: match[1]!, integration: match[3]!, connectionId };
}

/** The URN naming a connection, as `resource` or `audience` (docs/workloads.md). */
export function connectionUrn(t: ConnectionTarget): string {
  return `${CONNECTION_URN_PREFIX}${t.namespace}:${t.integration}:${encodeURIComponent(t.connectionId)}`;
}

/** The router serving {@link TOKEN_EXCHANGE_PATH} (form-encoded bodies, as RFC 6749 §4.1.3 sends them). */
export function tokenExchangeRoutes(deps: TokenExchangeDeps): Router {
  const router = express.Router();
  const form = express.urlencoded({ extended: false, limit: '32kb', parameterLimit: 20, type: () => true });
  router.post(TOKEN_EXCHANGE_PATH, (req, res) => {
    if (!/^application\/x-www-form-urlencoded\b/i.test(req.headers['content-type'] ?? '')) {
      answerError(res, { error: 'invalid_request', description: 'The body must be application/x-www-form-urlencoded', status: 400 });
      return;
    }
    form(req, res, (err?: unknown) => {
      if (err) {
        answerError(res, {
          error: 'invalid_request',
          description: 'The body is not a readable form (or is larger than 32 KiB)',
          status: 400,
        });
        return;
      }
      exchange(deps, req, req.body as Record<string, unknown>).then(
        (answer) => {
          res.setHeader('Cache-Control', 'no-store');
          res.setHeader('Pragma', 'no-cache');
          res.status(200).json(answer);
        },
        (e: unknown) => answerError(res, asOAuthError(e, deps.logger)),
      );
    });
  });
  router.all(TOKEN_EXCHANGE_PATH, (_req, res) => {
    res.setHeader('Allow', 'POST');
    answerError(res, { error: 'invalid_request', description: 'Only POST is served here', status: 405 });
  });
  return router;
}

async function exchange(deps: TokenExchangeDeps, req: IncomingMessage, body: Record<string, unknown>) {
  const one = (name: string): string | undefined => {
    const v = body[name];
    if (v === undefined) return undefined;
    if (typeof v !== 'string')
      throw oauthError(name === 'resource' || name === 'audience' ? 'invalid_target' : 'invalid_request', `${name} must be given once`);
    return v;
  };
  const grantType = one('grant_type');
  if (grantType !== TOKEN_EXCHANGE_GRANT)
    throw oauthError(grantType === undefined ? 'invalid_request' : 'unsupported_grant_type', `grant_type must be ${TOKEN_EXCHANGE_GRANT}`);
  const subjectToken = one('subject_token');
  const subjectTokenType = one('subject_token_type');
  if (!subjectToken || !subjectTokenType) throw oauthError('invalid_request', 'subject_token and subject_token_type are required');
  if (one('actor_token') !== undefined || one('actor_token_type') !== undefined)
    throw oauthError('invalid_request', 'Delegation (actor_token) is not supported');
  if (one('scope') !== undefined)
    throw oauthError('invalid_scope', "A connection's token has the scopes its end user granted; scope cannot be asked for");
  const requested = one('requested_token_type');
  if (requested !== undefined && requested !== ACCESS_TOKEN_TYPE)
    throw oauthError('invalid_request', `requested_token_type must be ${ACCESS_TOKEN_TYPE} (the provider's access token)`);
  const target = targetOf(one('resource'), one('audience'));

  let environment: ResolvedEnvironment;
  try {
    environment = throttled(deps.throttle, 'rest', req, () => {
      if (subjectTokenType === JWT_TOKEN_TYPE) return deps.tokens.resolveIn(subjectToken, target.namespace, sourceAddress(req));
      if (subjectTokenType === SECRET_KEY_TOKEN_TYPE) {
        const env = deps.keys.resolve(subjectToken);
        if (!env) throw new LatchkeyError('unauthenticated', 'unknown_secret_key', 'The secret key does not belong to any environment');
        return env;
      }
      throw oauthError(
        'invalid_request',
        `subject_token_type must be ${JWT_TOKEN_TYPE} (a ServiceAccount token) or ${SECRET_KEY_TOKEN_TYPE}`,
      );
    });
  } catch (err) {
    if (err instanceof LatchkeyError && err.code === 'no_environment')
      throw oauthError('invalid_target', `Namespace "${target.namespace}" has no Environment served here`);
    throw err;
  }
  if (environment.namespace !== target.namespace)
    throw oauthError('invalid_target', `The secret key's Environment is not in namespace "${target.namespace}"`);
  if (environment.serviceAccount) await environment.serviceAccount.authorize(tokenExchangeAccess(target.integration, target.connectionId));

  const token = await exchangeForAccessToken(deps, target.namespace, target.integration, target.connectionId);
  const answer: z.output<typeof TokenExchangeAnswer> = {
    access_token: token.accessToken,
    issued_token_type: ACCESS_TOKEN_TYPE,
    token_type: 'Bearer',
    ...(token.expiresIn !== undefined ? { expires_in: token.expiresIn } : {}),
  };
  return answer;
}

/** The one connection `resource` and/or `audience` name (both may be sent; then they must agree). */
function targetOf(resource: string | undefined, audience: string | undefined): ConnectionTarget {
  if (resource === undefined && audience === undefined)
    throw oauthError(
      'invalid_request',
      `resource or audience is required: ${CONNECTION_URN_PREFIX}<namespace>:<integration>:<connection ID>`,
    );
  if (resource !== undefined && audience !== undefined && resource !== audience)
    throw oauthError('invalid_target', 'resource and audience name different connections; one token is issued for one connection');
  const target = parseConnectionUrn((resource ?? audience)!);
  if (!target)
    throw oauthError(
      'invalid_target',
      `resource/audience must be ${CONNECTION_URN_PREFIX}<namespace>:<integration>:<connection ID, percent-encoded>`,
    );
  return target;
}

/** Latchkey's errors in OAuth's words. */
function asOAuthError(err: unknown, logger: Logger): OAuthAnswer {
  const answer = (error: OAuthErrorCode, description: string, status = 400, retryAfterMs?: number): OAuthAnswer => ({
    error,
    description,
    status,
    ...(retryAfterMs !== undefined ? { retryAfterMs } : {}),
  });
  if (err instanceof RefreshError) {
    if (err.code === 'reauthorization_required')
      return answer('invalid_target', "The provider rejected the connection's grant; the end user must reconnect");
    return answer('temporarily_unavailable', 'The token could not be refreshed now; try again later', 503, err.retryAfterMs ?? 2000);
  }
  if (err instanceof LatchkeyError) {
    if (err.code.startsWith('oauth:')) return answer(err.code.slice('oauth:'.length) as OAuthErrorCode, err.message);
    switch (err.kind) {
      case 'unauthenticated':
      case 'invalid_input':
        return answer(err.code === 'not_exchangeable' ? 'invalid_target' : 'invalid_request', err.message);
      case 'forbidden':
        return answer('unauthorized_client', err.message);
      case 'not_found':
        return answer('invalid_target', err.message);
      case 'rate_limited':
        return answer('temporarily_unavailable', err.message, 429, err.retryAfterMs);
      case 'upstream':
      case 'unavailable':
        return answer('temporarily_unavailable', err.message, 503, err.retryAfterMs ?? 2000);
      default:
        break;
    }
  }
  if (isApiUnavailable(err))
    return answer('temporarily_unavailable', 'The Kubernetes API server is unavailable; try again shortly', 503, 2000);
  logger.error({ err }, 'token exchange failed');
  return answer('server_error', 'Internal error; see the service logs', 500);
}

function answerError(res: ServerResponse, err: OAuthAnswer): void {
  const body = JSON.stringify({ error: err.error, error_description: err.description });
  res.statusCode = err.status;
  if (err.retryAfterMs !== undefined) res.setHeader('Retry-After', String(Math.max(1, Math.ceil(err.retryAfterMs / 1000))));
  res.setHeader('Cache-Control', 'no-store');
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.setHeader('Content-Length', Buffer.byteLength(body));
  res.end(body);
}
