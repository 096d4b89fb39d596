import { hash } from 'node:crypto';
import type { AccessReviews, ResourceAttributes, ReviewedUser, TokenReviewAnswer } from '../k8s/access-reviews.js';
import { LatchkeyError } from '../domain/errors.js';
import { ReviewCache } from './review-cache.js';

/** The API group of every permission Latchkey asks RBAC about (that of its custom resources). */
export const ACCESS_GROUP = 'latchkey.dev';

/** One right, in RBAC's terms (the group is {@link ACCESS_GROUP}; the namespace is the Environment's). */
export interface Permission {
  verb: string;
  resource: string;
  subresource?: string;
  /** The object's name (`resourceNames` in a Role); none for namespace-wide rights such as `list`. */
  name?: string;
}

/**
 * What one part of a request needs: any one of these rights (the first is the most specific, the one
 * a refusal names). A request needs every one of its checks.
 */
export interface AccessCheck {
  anyOf: Permission[];
}

/** A refused request, for the operation log (no token in it). */
export interface DeniedAccess {
  namespace: string;
  username: string;
  check: AccessCheck;
  message: string;
}

export interface ServiceAccountAuthOptions {
  reviews: AccessReviews;
  now: () => number;
  /** The audience tokens must be issued for (`latchkey` unless configured). */
  audience: string;
  /** The longest a TokenReview is kept (never past the token's own `exp`). */
  tokenReviewTtlMs: number;
  /** How long a SubjectAccessReview (allowed or denied) is kept. */
  accessReviewTtlMs: number;
  /** Entries per cache, at most. */
  maxEntries: number;
  /** Told of each refusal decided by an API call (a refusal answered from the cache is not told again). */
  onDenied?: (denied: DeniedAccess) => void;
}

/**
 * A bearer shaped as a JWT (`eyJ…`, three non-empty parts), not an Environment's secret key. Only the
 * shape: the TokenReview decides the rest. By `indexOf`, not a regular expression, which cost
 * microseconds of every request on a kilobyte of token.
 */
export function isJwtShaped(bearer: string): boolean {
  if (bearer.length > MAX_TOKEN_LENGTH || !bearer.startsWith('eyJ')) return false;
  const first = bearer.indexOf('.');
  const second = first === -1 ? -1 : bearer.indexOf('.', first + 1);
  return second > first + 1 && second < bearer.length - 1 && bearer.indexOf('.', second + 1) === -1;
}

/** Longer than any token the API server issues (node refuses headers over 16 KiB anyway). */
const MAX_TOKEN_LENGTH = 16_384;

const SERVICE_ACCOUNT_USER = /^system:serviceaccount:([a-z0-9]([-a-z0-9]*[a-z0-9])?):([^:]+)$/;
const NAMESPACE = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

/** The namespace of a ServiceAccount's user name (`system:serviceaccount:<namespace>:<name>`), or undefined for another user. */
export function serviceAccountNamespace(username: string): string | undefined {
  return SERVICE_ACCOUNT_USER.exec(username)?.[1];
}

/**
 * Requests that carry a Kubernetes token instead of the Environment's secret key (kube-rbac-proxy's
 * shape): the token is authenticated by a TokenReview for the configured audience, then each right
 * the request needs is asked of RBAC by a SubjectAccessReview in the Environment's namespace.
 *
 * Both answers are cached, keyed by the token's SHA-256 (never the token): a TokenReview for at most
 * `tokenReviewTtlMs` and never past the token's `exp` (read from the token without trusting it further:
 * it only shortens the time), a SubjectAccessReview for `accessReviewTtlMs`. A request whose answers
 * are cached makes no API call. A refused TokenReview is not cached (the failed-authentication throttle
 * bounds how often an address may try).
 */
export class ServiceAccountAuth {
  private readonly tokens: ReviewCache<TokenReviewAnswer>;
  private readonly access: ReviewCache<boolean>;

  constructor(private readonly opts: ServiceAccountAuthOptions) {
    this.tokens = new ReviewCache(opts.maxEntries, opts.now);
    this.access = new ReviewCache(opts.maxEntries, opts.now);
  }

  /**
   * The namespace a request works in, decided without an API call: the one named (the
   * `Latchkey-Namespace` header) or else the ServiceAccount's own, from the verified user when the
   * token's review is cached and otherwise from the token's `sub` claim (src/http/service-account-requests.ts
   * checks it against the reviewed user before anything is done).
   */
  namespaceOf(token: string, named: string | undefined): { namespace: string; tokenKey: string; cachedUser?: ReviewedUser } {
    const tokenKey = hash('sha256', token, 'base64url');
    const reviewed = this.tokens.get(tokenKey);
    const cachedUser = reviewed?.authenticated ? reviewed.user : undefined;
    if (named !== undefined) {
      if (!NAMESPACE.test(named) || named.length > 63)
        throw new LatchkeyError('invalid_input', 'invalid_namespace', 'The Latchkey-Namespace header must be a namespace name');
      return { namespace: named, tokenKey, cachedUser };
    }
    const username = cachedUser ? cachedUser.username : claimsOf(token)?.sub;
    const namespace = typeof username === 'string' ? serviceAccountNamespace(username) : undefined;
    if (!namespace)
      throw new LatchkeyError(
        'unauthenticated',
        'namespace_required',
        "The token is not a ServiceAccount's: name the Environment's namespace in the Latchkey-Namespace header",
      );
    return { namespace, tokenKey, cachedUser };
  }

  /** The user the token stands for, or a 401 (another audience, expired, a deleted ServiceAccount, not a token at all). */
  async authenticate(token: string, tokenKey: string): Promise<ReviewedUser> {
    const { value } = await this.tokens.getOrLookup(
      tokenKey,
      () => this.opts.reviews.reviewToken(token, [this.opts.audience]),
      (answer) => (answer.authenticated ? this.tokenTtlMs(token) : 0),
    );
    if (!value.authenticated)
      throw new LatchkeyError(
        'unauthenticated',
        'invalid_token',
        `The Kubernetes API server did not accept the token for the audience "${this.opts.audience}" (expired, another audience, or its ServiceAccount was deleted)`,
      );
    return value.user;
  }

  /**
   * Asks RBAC for every check for the user a token's review gave, in `namespace`; resolves when all
   * are allowed, else throws the 403 naming the right that would allow the request.
   */
  async authorize(user: ReviewedUser, tokenKey: string, namespace: string, checks: AccessCheck[]): Promise<void> {
    for (const check of checks) await this.require(user, tokenKey, namespace, check);
  }

  /** True when the cache already holds an allowed answer for every check: the request goes on without a promise. */
  allowedNow(tokenKey: string, namespace: string, checks: AccessCheck[]): boolean {
    return checks.every((check) =>
      check.anyOf.some((p) => this.access.get(accessKey(tokenKey, { namespace, group: ACCESS_GROUP, ...p })) === true),
    );
  }

  private async require(user: ReviewedUser, tokenKey: string, namespace: string, check: AccessCheck): Promise<void> {
    let decided = false;
    for (const permission of check.anyOf) {
      const attributes: ResourceAttributes = { namespace, group: ACCESS_GROUP, ...permission };
      const { value: allowed, fresh } = await this.access.getOrLookup(
        accessKey(tokenKey, attributes),
        async () => (await this.opts.reviews.reviewAccess(user, attributes)).allowed,
        () => this.opts.accessReviewTtlMs,
      );
      if (allowed) return;
      decided ||= fresh;
    }
    const message = refusal(user.username, namespace, check);
    if (decided) this.opts.onDenied?.({ namespace, username: user.username, check, message });
    throw new LatchkeyError('forbidden', 'forbidden', message);
  }

  /** The ceiling, shortened to the token's remaining lifetime when it says one. */
  private tokenTtlMs(token: string): number {
    const exp = claimsOf(token)?.exp;
    const ceiling = this.opts.tokenReviewTtlMs;
    if (typeof exp !== 'number' || !Number.isFinite(exp)) return ceiling;
    return Math.min(ceiling, exp * 1000 - this.opts.now());
  }
}

/** The cache key of one SubjectAccessReview: the token's digest and every attribute (NUL never occurs in them). */
function accessKey(tokenKey: string, a: ResourceAttributes): string {
  return `${tokenKey}\0${a.namespace}\0${a.verb}\0${a.resource}\0${a.subresource ?? ''}\0${a.name ?? ''}`;
}

/** A permission as `kubectl auth can-i` and a Role's rule write it: `get connections/credentials "name"`. */
export function describePermission(p: Permission): string {
  return `${p.verb} ${p.resource}${p.subresource ? `/${p.subresource}` : ''}${p.name ? ` "${p.name}"` : ''}`;
}

/** The 403's message: who, which right in which namespace (and the alternatives), and the `kubectl auth can-i` question. */
export function refusal(username: string, namespace: string, check: AccessCheck): string {
  const [first, ...others] = check.anyOf;
  const alternatives = others.length ? ` (or ${others.map(describePermission).join(', or ')})` : '';
  const canI = [
    'kubectl auth can-i',
    first!.verb,
    `${first!.resource}.${ACCESS_GROUP}${first!.name ? `/${first!.name}` : ''}`,
    ...(first!.subresource ? [`--subresource=${first!.subresource}`] : []),
    `-n ${namespace}`,
    `--as=${username}`,
  ].join(' ');
  return `${username} may not ${describePermission(first!)}${alternatives} in namespace "${namespace}" (API group ${ACCESS_GROUP}); a Role bound in "${namespace}" that grants it allows this request. Ask: ${canI}`;
}

/** The claims of a JWT, read without verifying it (only for what is checked against a review, or shortens a cache time). */
function claimsOf(token: string): { sub?: unknown; exp?: unknown } | undefined {
  const payload = token.split('.')[1];
  if (!payload) return undefined;
  try {
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as unknown;
    return typeof claims === 'object' && claims !== null ? (claims as { sub?: unknown; exp?: unknown }) : undefined;
  } catch {
    return undefined;
  }
}
