import type { KubernetesObject } from '../../k8s/client.js';
import { secretExists } from '../../k8s/secret-presence.js';
import { LABELS, type CommonStatus, type Condition, type Kind } from '../../k8s/resources.js';
import type { KubeStore } from '../../k8s/store.js';

export type ConditionInput = Omit<Condition, 'lastTransitionTime' | 'observedGeneration'>;

/**
 * Sets conditions in the Kubernetes manner: `lastTransitionTime` moves only when the status changes,
 * every condition carries the generation it was computed from, and the order is stable.
 */
export function setConditions(
  existing: Condition[] | undefined,
  updates: ConditionInput[],
  generation: number | undefined,
  now: number,
): Condition[] {
  const out = [...(existing ?? [])];
  for (const update of updates) {
    const i = out.findIndex((c) => c.type === update.type);
    const previous = i >= 0 ? out[i] : undefined;
    const next: Condition = {
      type: update.type,
      status: update.status,
      ...(generation !== undefined ? { observedGeneration: generation } : {}),
      lastTransitionTime: previous && previous.status === update.status ? previous.lastTransitionTime : new Date(now).toISOString(),
      reason: update.reason,
      message: update.message.slice(0, 32_000),
    };
    if (i >= 0) out[i] = next;
    else out.push(next);
  }
  return out;
}

export function findCondition(conditions: Condition[] | undefined, type: string): Condition | undefined {
  return conditions?.find((c) => c.type === type);
}

/** True when the conditions (ignoring lastTransitionTime) and generation are already what we would write. */
export function sameConditions(a: Condition[] | undefined, b: Condition[] | undefined): boolean {
  const strip = (list: Condition[] | undefined) =>
    JSON.stringify((list ?? []).map((c) => ({ t: c.type, s: c.status, r: c.reason, m: c.message, g: c.observedGeneration })));
  return strip(a) === strip(b);
}

export const READY = 'Ready';

/** What a reconciler concluded about its object's `Ready` condition. */
export type Verdict = Omit<ConditionInput, 'type'>;

/**
 * Writes conditions (and `observedGeneration`) to an object's status, unless they are already what
 * it shows: a reconcile that changes nothing writes nothing.
 */
export async function writeConditions<T extends KubernetesObject & { status?: CommonStatus }>(
  store: KubeStore,
  kind: Kind<T>,
  obj: T,
  updates: ConditionInput[],
  now: number,
): Promise<void> {
  const generation = obj.metadata?.generation;
  const next = setConditions(obj.status?.conditions, updates, generation, now);
  if (obj.status?.observedGeneration === generation && sameConditions(obj.status?.conditions, next)) return;
  await store.updateStatus(kind, obj.metadata?.namespace, obj.metadata!.name!, (s) => ({
    ...s,
    observedGeneration: generation,
    conditions: setConditions(s.conditions, updates, generation, now),
  }));
}

/**
 * The verdict for a referenced Secret missing from the watch cache: it does not exist, or it exists
 * without the `latchkey.dev/watch=true` label (asked of the API server, so the message says which).
 */
export async function missingSecretVerdict(
  store: KubeStore,
  namespace: string,
  name: string,
  field: string,
  wanted: string,
): Promise<Verdict> {
  const exists = await secretExists(store.core, namespace, name);
  if (exists) {
    return {
      status: 'False',
      reason: 'SecretNotWatched',
      message: `Secret "${name}" exists but Latchkey cannot see it: label it ${LABELS.watch}=true (kubectl label secret ${name} -n ${namespace} ${LABELS.watch}=true).`,
    };
  }
  return {
    status: 'False',
    reason: 'SecretNotFound',
    message: `Secret "${name}" (${field}) does not exist in namespace ${namespace}. Create it with ${wanted} and the label ${LABELS.watch}=true.`,
  };
}
