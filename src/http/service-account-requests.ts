import type { IncomingMessage } from 'node:http';
import type { EnvironmentKeys, ResolvedEnvironment } from '../auth/environment-keys.js';
import { serviceAccountNamespace, type ServiceAccountAuth } from '../auth/service-account-auth.js';
import type { ReviewedUser } from '../k8s/access-reviews.js';
import { LatchkeyError } from '../domain/errors.js';
import { sourceAddress, type FailedAuthThrottle } from './failed-auth-throttle.js';

/** The header naming the Environment's namespace when it is not the ServiceAccount's own. */
export const NAMESPACE_HEADER = 'latchkey-namespace';

/**
 * A request with a Kubernetes token as its bearer: the Environment of the namespace it works in
 * (see {@link ServiceAccountAuth.namespaceOf}), with the caller that reviews the token and asks RBAC
 * (src/http/rest/routes/define.ts and the proxy call it before serving). No API call is made here:
 * the secret key's path and this one share only the shape check of the bearer.
 */
export class ServiceAccountRequests {
  constructor(
    private readonly auth: ServiceAccountAuth,
    private readonly keys: EnvironmentKeys,
    private readonly throttle: FailedAuthThrottle,
  ) {}

  /** The Environment of the namespace the `Latchkey-Namespace` header names, or of the ServiceAccount's own. */
  resolve(token: string, req: IncomingMessage): ResolvedEnvironment {
    const named = req.headers[NAMESPACE_HEADER];
    return this.resolveIn(token, typeof named === 'string' ? named : undefined, sourceAddress(req));
  }

  /** The Environment of `named` (or, without it, of the ServiceAccount's own namespace); `address`: the caller's, for the throttle. */
  resolveIn(token: string, named: string | undefined, address: string): ResolvedEnvironment {
    const { namespace, tokenKey, cachedUser } = this.auth.namespaceOf(token, named);
    const ownNamespace = named === undefined;
    const environment = this.keys.primaryEnvironment(namespace);
    if (!environment)
      throw new LatchkeyError(
        'forbidden',
        'no_environment',
        `Namespace "${namespace}" has no Environment served here${ownNamespace ? ": name the Environment's namespace in the Latchkey-Namespace header" : ''}`,
      );
    const belongs = (user: ReviewedUser) => !ownNamespace || serviceAccountNamespace(user.username) === namespace;
    // A cached review decides without a promise; otherwise one review per request, however many checks it needs.
    const known = cachedUser && belongs(cachedUser) ? cachedUser : undefined;
    let reviewing: Promise<ReviewedUser> | undefined;
    const review = () =>
      (reviewing ??= this.auth.authenticate(token, tokenKey).then(
        (user) => {
          if (!belongs(user))
            throw new LatchkeyError('unauthenticated', 'invalid_token', "The token's claims do not match the user the API server reviewed");
          return user;
        },
        (err: unknown) => {
          // A refused token counts toward its address's failures, as a wrong secret key does.
          if (err instanceof LatchkeyError && err.code === 'invalid_token') this.throttle.failed('rest', address);
          throw err;
        },
      ));
    return {
      namespace,
      name: environment.metadata.name,
      resource: environment,
      serviceAccount: {
        authenticate: () => (known ? undefined : review().then(() => undefined)),
        authorize: (checks) =>
          known && this.auth.allowedNow(tokenKey, namespace, checks)
            ? undefined
            : review().then((user) => this.auth.authorize(user, tokenKey, namespace, checks)),
      },
    };
  }
}
