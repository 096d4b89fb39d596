import type { Clock } from '../context.js';
import { ENVIRONMENT_SECRET_KEYS, ENVIRONMENTS, LABELS, type EnvironmentResource } from '../k8s/resources.js';
import { secretExists } from '../k8s/secret-presence.js';
import type { KubeStore } from '../k8s/store.js';
import { READY, sameConditions, setConditions, type ConditionInput } from './conditions.js';
import type { Verdict } from './integration-reconciler.js';

/**
 * Checks an Environment: it is the namespace's only (oldest) one, its Secret exists, is visible to
 * Latchkey and holds `secretKey`, and its webhook and callback URLs are http(s) URLs.
 */
export class EnvironmentReconciler {
  constructor(private readonly store: KubeStore, private readonly clock: Clock) {}

  async reconcile(namespace: string, name: string): Promise<void> {
    const env = this.store.listEnvironments(namespace).find((e) => e.metadata.name === name);
    if (!env || env.metadata.deletionTimestamp) return;
    const verdict = await this.check(env);
    const updates: ConditionInput[] = [{ type: READY, ...verdict }];
    const generation = env.metadata.generation;
    const next = setConditions(env.status?.conditions, updates, generation, this.clock.now());
    if (env.status?.observedGeneration === generation && sameConditions(env.status?.conditions, next)) return;
    await this.store.updateStatus(ENVIRONMENTS, namespace, name, (s) => ({
      ...s,
      observedGeneration: generation,
      conditions: setConditions(s.conditions, updates, generation, this.clock.now()),
    }));
  }

  async check(env: EnvironmentResource): Promise<Verdict> {
    const namespace = env.metadata.namespace!;
    const oldest = this.store
      .listEnvironments(namespace)
      .sort((a, b) => created(a) - created(b) || a.metadata.name.localeCompare(b.metadata.name))[0];
    if (oldest && oldest.metadata.name !== env.metadata.name) {
      return {
        status: 'False', reason: 'DuplicateEnvironment',
        message: `Namespace ${namespace} already has Environment "${oldest.metadata.name}" (the oldest one is used); delete this one or move it to its own namespace.`,
      };
    }
    const secretName = env.spec.secretRef.name;
    const secret = this.store.getReferencedSecret(namespace, secretName);
    if (!secret) {
      const exists = await secretExists(this.store.core, namespace, secretName);
      return exists
        ? {
            status: 'False', reason: 'SecretNotWatched',
            message: `Secret "${secretName}" exists but Latchkey cannot see it: label it ${LABELS.watch}=true (kubectl label secret ${secretName} -n ${namespace} ${LABELS.watch}=true).`,
          }
        : {
            status: 'False', reason: 'SecretNotFound',
            message: `Secret "${secretName}" (spec.secretRef) does not exist in namespace ${namespace}. Create it with key ${ENVIRONMENT_SECRET_KEYS.secretKey} and the label ${LABELS.watch}=true.`,
          };
    }
    const key = secret.data?.[ENVIRONMENT_SECRET_KEYS.secretKey];
    const value = key === undefined ? '' : Buffer.from(key, 'base64').toString('utf8');
    if (value.length === 0) {
      return {
        status: 'False', reason: 'SecretKeyMissing',
        message: `Secret "${secretName}" has no "${ENVIRONMENT_SECRET_KEYS.secretKey}": add the API secret key that application backends send as "Authorization: Bearer <key>".`,
      };
    }
    for (const [field, value] of [['spec.webhooks.url', env.spec.webhooks?.url], ['spec.callbackUrl', env.spec.callbackUrl]] as const) {
      if (value === undefined) continue;
      if (!isHttpUrl(value)) {
        return { status: 'False', reason: 'InvalidURL', message: `${field} is not a valid http(s) URL: "${value.slice(0, 200)}".` };
      }
    }
    return { status: 'True', reason: 'Ready', message: `Ready: the secret key is in Secret "${secretName}".` };
  }
}

function isHttpUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return (url.protocol === 'https:' || url.protocol === 'http:') && url.hostname.length > 0;
  } catch {
    return false;
  }
}

function created(env: EnvironmentResource): number {
  const t = Date.parse(String(env.metadata.creationTimestamp ?? ''));
  return Number.isFinite(t) ? t : Number.MAX_SAFE_INTEGER;
}
