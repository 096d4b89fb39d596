import type { Condition } from '../k8s/resources.js';

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
