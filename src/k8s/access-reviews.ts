import { KubeJsonApi } from './json-api.js';
import type { KubeConfig } from './kubernetes-client.js';

/** The user a TokenReview authenticated, as the API server names it. */
export interface ReviewedUser {
  username: string;
  uid?: string;
  groups: string[];
  extra?: Record<string, string[]>;
}

export type TokenReviewAnswer = { authenticated: true; user: ReviewedUser; audiences: string[] } | { authenticated: false; error: string };

/** What a SubjectAccessReview asks (its `resourceAttributes`, in the Kubernetes API's own words). */
export interface ResourceAttributes {
  namespace: string;
  verb: string;
  group: string;
  resource: string;
  subresource?: string;
  name?: string;
}

export interface AccessReviewAnswer {
  allowed: boolean;
  /** Why, as the authorizer says it (e.g. the RoleBinding that allowed it); no token is in it. */
  reason?: string;
}

/**
 * The API server's two review APIs, as kube-rbac-proxy and Vault's Kubernetes auth use them: who a
 * bearer token is (TokenReview, for the audiences given), and whether that user may do something
 * (SubjectAccessReview, decided by the cluster's RBAC). Injected where they are used, so tests can
 * count the calls.
 */
export interface AccessReviews {
  reviewToken(token: string, audiences: string[]): Promise<TokenReviewAnswer>;
  reviewAccess(user: ReviewedUser, attributes: ResourceAttributes): Promise<AccessReviewAnswer>;
}

interface TokenReviewObject {
  status?: { authenticated?: boolean; user?: Partial<ReviewedUser>; audiences?: string[]; error?: string };
}

interface SubjectAccessReviewObject {
  status?: { allowed?: boolean; denied?: boolean; reason?: string };
}

/** {@link AccessReviews} over the API server (plain JSON on one pooled connection, bounded like every call). */
export class KubeAccessReviews implements AccessReviews {
  private readonly api: KubeJsonApi;

  constructor(kc: KubeConfig) {
    this.api = new KubeJsonApi(kc);
  }

  async reviewToken(token: string, audiences: string[]): Promise<TokenReviewAnswer> {
    const review = await this.api.post<TokenReviewObject>('/apis/authentication.k8s.io/v1/tokenreviews', {
      apiVersion: 'authentication.k8s.io/v1',
      kind: 'TokenReview',
      spec: { token, audiences },
    });
    const status = review.status ?? {};
    const user = status.user;
    if (!status.authenticated || !user?.username) return { authenticated: false, error: status.error ?? 'not authenticated' };
    // The API server answers the audiences the token was valid for, a subset of those asked.
    const granted = status.audiences ?? [];
    if (!audiences.some((a) => granted.includes(a))) return { authenticated: false, error: 'token not valid for the audience' };
    return {
      authenticated: true,
      user: { username: user.username, uid: user.uid, groups: user.groups ?? [], ...(user.extra ? { extra: user.extra } : {}) },
      audiences: granted,
    };
  }

  async reviewAccess(user: ReviewedUser, attributes: ResourceAttributes): Promise<AccessReviewAnswer> {
    const review = await this.api.post<SubjectAccessReviewObject>('/apis/authorization.k8s.io/v1/subjectaccessreviews', {
      apiVersion: 'authorization.k8s.io/v1',
      kind: 'SubjectAccessReview',
      spec: {
        user: user.username,
        ...(user.uid ? { uid: user.uid } : {}),
        groups: user.groups,
        ...(user.extra ? { extra: user.extra } : {}),
        resourceAttributes: attributes,
      },
    });
    const status = review.status ?? {};
    return { allowed: status.allowed === true && status.denied !== true, ...(status.reason ? { reason: status.reason } : {}) };
  }

  async close(): Promise<void> {
    await this.api.close();
  }
}
