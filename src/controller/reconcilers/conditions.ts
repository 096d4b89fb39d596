import { isDeepStrictEqual } from 'node:util';
import type { KubernetesObject } from '../../k8s/client.js';
import { LABELS, type CommonStatus, type Condition, type Kind } from '../../k8s/resources.js';
import type { KubeStore } from '../../k8s/store.js';

/** What the reconcilers of Providers, Integrations and Environments read and write of the catalog. */
export type CatalogParts = Pick<KubeStore, 'catalog' | 'catalogStatus'>;
import { terminalIfRefused } from './terminal.js';
import { SecretReason, setConditions, type ConditionInput, type Verdict } from '../../domain/conditions.js';

/** True when the conditions (ignoring lastTransitionTime) and generation are already what we would write. */
export function sameConditions(a: Condition[] | undefined, b: Condition[] | undefined): boolean {
  const strip = (list: Condition[] | undefined) =>
    JSON.stringify((list ?? []).map((c) => ({ t: c.type, s: c.status, r: c.reason, m: c.message, g: c.observedGeneration })));
  return strip(a) === strip(b);
}

/**
 * True when two statuses say the same (conditions as {@link sameConditions}). The one read from the
 * API server has its keys in another order than one built here (it serializes maps sorted), and
 * fields left undefined are absent there: compared as JSON values, not as strings, or every reconcile
 * would write a status that changes nothing.
 */
export function sameStatus<S extends CommonStatus>(a: S, b: S): boolean {
  const { conditions: ca, ...ra } = a;
  const { conditions: cb, ...rb } = b;
  return sameConditions(ca, cb) && isDeepStrictEqual(asJson(ra), asJson(rb));
}

const asJson = (value: unknown): unknown => JSON.parse(JSON.stringify(value)) as unknown;

/**
 * Writes conditions (and `observedGeneration`) to an object's status, unless they are already what
 * it shows: a reconcile that changes nothing writes nothing.
 */
export async function writeConditions<T extends KubernetesObject & { status?: CommonStatus }>(
  store: Pick<CatalogParts, 'catalogStatus'>,
  kind: Kind<T>,
  obj: T,
  updates: ConditionInput[],
  now: number,
  /** Other status fields the same reconciler owns (undefined removes one), written with the conditions. */
  fields: Record<string, string | undefined> = {},
): Promise<void> {
  const generation = obj.metadata?.generation;
  const next = setConditions(obj.status?.conditions, updates, generation, now);
  const status = (obj.status ?? {}) as Record<string, unknown>;
  const sameFields = Object.entries(fields).every(([k, v]) => status[k] === v);
  if (obj.status?.observedGeneration === generation && sameConditions(obj.status?.conditions, next) && sameFields) return;
  await store.catalogStatus
    .updateStatus(kind, obj.metadata?.namespace, obj.metadata!.name!, (s) => ({
      ...s,
      ...fields,
      observedGeneration: generation,
      conditions: setConditions(s.conditions, updates, generation, now),
    }))
    .catch((err: unknown) =>
      terminalIfRefused(err, `${kind.kind} ${obj.metadata?.namespace ? `${obj.metadata.namespace}/` : ''}${obj.metadata!.name!}`),
    );
}

/**
 * The verdict for a referenced Secret missing from the watch cache: it does not exist, or it exists
 * without the `latchkey.dev/watch=true` label (asked of the API server, so the message says which).
 */
export async function missingSecretVerdict(
  store: Pick<CatalogParts, 'catalog'>,
  namespace: string,
  name: string,
  field: string,
  wanted: string,
): Promise<Verdict<SecretReason>> {
  const exists = await store.catalog.secretExists(namespace, name);
  if (exists) {
    const label = `${LABELS.watch}=true`;
    return {
      status: 'False',
      reason: SecretReason.SecretNotWatched,
      message:
        `Secret "${name}" exists but Latchkey cannot see it: label it ${label} ` +
        `(kubectl label secret ${name} -n ${namespace} ${label}).`,
    };
  }
  return {
    status: 'False',
    reason: SecretReason.SecretNotFound,
    message:
      `Secret "${name}" (${field}) does not exist in namespace ${namespace}. ` +
      `Create it with ${wanted} and the label ${LABELS.watch}=true.`,
  };
}
