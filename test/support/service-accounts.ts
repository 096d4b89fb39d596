/**
 * ServiceAccounts, their tokens (the TokenRequest API, as a pod's projected volume gets them) and
 * RBAC on the test control plane, for the tests of Kubernetes-token requests.
 */
import { createPrivateKey, createSign, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { AuthorizationV1Api, CoreV1Api, RbacAuthorizationV1Api, type KubeConfig, type V1PolicyRule } from '@kubernetes/client-node';
import { eventually } from '../../dev/cluster.js';

export const AUDIENCE = 'latchkey';

export interface TestServiceAccount {
  namespace: string;
  name: string;
  uid: string;
  username: string;
}

export async function createServiceAccount(kc: KubeConfig, namespace: string, name: string): Promise<TestServiceAccount> {
  const core = kc.makeApiClient(CoreV1Api);
  const sa = await core.createNamespacedServiceAccount({ namespace, body: { metadata: { name } } });
  return { namespace, name, uid: sa.metadata!.uid!, username: `system:serviceaccount:${namespace}:${name}` };
}

/** A token for the ServiceAccount from the TokenRequest API (what kubelet puts in a projected volume). */
export async function requestToken(
  kc: KubeConfig,
  sa: { namespace: string; name: string },
  opts: { audiences?: string[]; expirationSeconds?: number } = {},
): Promise<string> {
  const core = kc.makeApiClient(CoreV1Api);
  const answer = await core.createNamespacedServiceAccountToken({
    namespace: sa.namespace,
    name: sa.name,
    body: { spec: { audiences: opts.audiences ?? [AUDIENCE], expirationSeconds: opts.expirationSeconds ?? 3600 } },
  });
  return answer.status!.token!;
}

/**
 * A token shaped as the API server issues them but already expired, signed with the control plane's
 * own ServiceAccount key (the TokenRequest API issues none shorter than ten minutes).
 */
export function expiredToken(sa: TestServiceAccount, audience = AUDIENCE): string {
  const keyFile = process.env.LATCHKEY_TEST_SA_SIGNING_KEY;
  if (!keyFile) throw new Error('LATCHKEY_TEST_SA_SIGNING_KEY is not set: the test needs the control plane the jest setup started');
  const now = Math.floor(Date.now() / 1000);
  const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');
  const header = b64({ alg: 'RS256', typ: 'JWT' });
  const payload = b64({
    iss: 'https://kubernetes.default.svc.cluster.local',
    aud: [audience],
    sub: sa.username,
    iat: now - 7200,
    nbf: now - 7200,
    exp: now - 3600,
    jti: randomBytes(8).toString('hex'),
    'kubernetes.io': { namespace: sa.namespace, serviceaccount: { name: sa.name, uid: sa.uid } },
  });
  const signer = createSign('RSA-SHA256');
  signer.update(`${header}.${payload}`);
  return `${header}.${payload}.${signer.sign(createPrivateKey(readFileSync(keyFile))).toString('base64url')}`;
}

/** A Role with `rules` in `namespace`, bound to the ServiceAccount (of any namespace); resolves once RBAC answers with it. */
export async function grant(
  kc: KubeConfig,
  namespace: string,
  sa: TestServiceAccount,
  rules: V1PolicyRule[],
  name?: string,
): Promise<string> {
  const rbac = kc.makeApiClient(RbacAuthorizationV1Api);
  const roleName = name ?? `r-${randomBytes(4).toString('hex')}`;
  await rbac.createNamespacedRole({ namespace, body: { metadata: { name: roleName }, rules } });
  await rbac.createNamespacedRoleBinding({
    namespace,
    body: {
      metadata: { name: roleName },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: roleName },
      subjects: [{ kind: 'ServiceAccount', name: sa.name, namespace: sa.namespace }],
    },
  });
  // RBAC reads Roles through its own informers: wait until it answers with this one.
  const first = rules[0]!;
  await eventually(() =>
    canI(kc, sa, {
      namespace,
      verb: first.verbs[0]!,
      resource: first.resources![0]!.split('/')[0]!,
      subresource: first.resources![0]!.split('/')[1],
      name: first.resourceNames?.[0],
    }),
  );
  return roleName;
}

export async function revoke(kc: KubeConfig, namespace: string, roleName: string): Promise<void> {
  const rbac = kc.makeApiClient(RbacAuthorizationV1Api);
  await rbac.deleteNamespacedRoleBinding({ namespace, name: roleName });
  await rbac.deleteNamespacedRole({ namespace, name: roleName });
}

/** What `kubectl auth can-i --as` answers (a SubjectAccessReview of the test's own). */
export async function canI(
  kc: KubeConfig,
  sa: TestServiceAccount,
  attrs: { namespace: string; verb: string; resource: string; subresource?: string; name?: string },
): Promise<boolean> {
  const authz = kc.makeApiClient(AuthorizationV1Api);
  const review = await authz.createSubjectAccessReview({
    body: {
      spec: {
        user: sa.username,
        groups: ['system:serviceaccounts', `system:serviceaccounts:${sa.namespace}`, 'system:authenticated'],
        resourceAttributes: { group: 'latchkey.dev', ...attrs },
      },
    },
  });
  return review.status?.allowed === true;
}

/** A rule on Latchkey's API group. */
export function rule(verbs: string[], resources: string[], resourceNames?: string[]): V1PolicyRule {
  return { apiGroups: ['latchkey.dev'], verbs, resources, ...(resourceNames ? { resourceNames } : {}) };
}
