import type { Clock } from '../../domain/clock.js';
import type { EgressGuard } from '../../egress/guard.js';
import type { EnvironmentKeys } from '../../auth/environment-keys.js';
import { primaryOf } from '../../k8s/primary-environment.js';
import { secretKeyWeakness } from '../../auth/secret-key-strength.js';
import { ENVIRONMENT_SECRET_KEYS, ENVIRONMENTS, type EnvironmentResource } from '../../k8s/resources.js';
import { EnvironmentCondition, EnvironmentReason, type Verdict } from '../../domain/conditions.js';
import { missingSecretVerdict, writeConditions, type CatalogParts } from './conditions.js';

/** The Ready reason when the egress guard refuses the webhook URL's address (SSRF, docs/security.md). */

/**
 * Checks an Environment: it is the namespace's only (oldest) one, its Secret exists, is visible to
 * Latchkey and holds a strong `secretKey` of its own, its webhook and callback URLs are http(s) URLs, and
 * the egress guard lets webhooks reach the webhook URL's address. The only writer of an Environment's conditions.
 */
export class EnvironmentReconciler {
  constructor(
    private readonly store: CatalogParts,
    private readonly clock: Clock,
    private readonly keys: EnvironmentKeys,
    private readonly egress: EgressGuard,
  ) {}

  async reconcile(namespace: string, name: string): Promise<void> {
    const env = this.store.catalog.listEnvironments(namespace).find((e) => e.metadata.name === name);
    if (!env || env.metadata.deletionTimestamp) return;
    await writeConditions(
      this.store,
      ENVIRONMENTS,
      env,
      [{ type: EnvironmentCondition.Ready, ...(await this.check(env)) }],
      this.clock.now(),
    );
  }

  async check(env: EnvironmentResource): Promise<Verdict<EnvironmentReason>> {
    const namespace = env.metadata.namespace!;
    // The same rule the REST API uses to pick the namespace's Environment.
    const oldest = primaryOf(this.store.catalog.listEnvironments(namespace));
    if (oldest && oldest.metadata.name !== env.metadata.name) {
      return {
        status: 'False',
        reason: EnvironmentReason.DuplicateEnvironment,
        message:
          `Namespace ${namespace} already has Environment "${oldest.metadata.name}" (the oldest one is used); ` +
          'delete this one or move it to its own namespace.',
      };
    }
    const secretName = env.spec.secretRef.name;
    const secret = this.store.catalog.getReferencedSecret(namespace, secretName);
    if (!secret)
      return missingSecretVerdict(this.store, namespace, secretName, 'spec.secretRef', `key ${ENVIRONMENT_SECRET_KEYS.secretKey}`);
    const key = secret.data?.[ENVIRONMENT_SECRET_KEYS.secretKey];
    const value = key === undefined ? '' : Buffer.from(key, 'base64').toString('utf8');
    if (value.length === 0) {
      return {
        status: 'False',
        reason: EnvironmentReason.SecretKeyMissing,
        message:
          `Secret "${secretName}" has no "${ENVIRONMENT_SECRET_KEYS.secretKey}": ` +
          'add the API secret key that application backends send as "Authorization: Bearer <key>".',
      };
    }
    const weakness = secretKeyWeakness(value);
    if (weakness) {
      return {
        status: 'False',
        reason: EnvironmentReason.WeakSecretKey,
        message: `The secret key in Secret "${secretName}" is refused: ${weakness}. Use a random key of at least 128 bits, e.g. \`openssl rand -hex 32\`.`,
      };
    }
    const shared = this.keys.sharedWith(namespace);
    if (shared > 0) {
      return {
        status: 'False',
        reason: EnvironmentReason.SecretKeyShared,
        message: `The secret key in Secret "${secretName}" is also the key of ${shared} other namespace(s); it is refused everywhere until each namespace has its own.`,
      };
    }
    for (const [field, value] of [
      ['spec.webhooks.url', env.spec.webhooks?.url],
      ['spec.callbackUrl', env.spec.callbackUrl],
    ] as const) {
      if (value === undefined) continue;
      if (!isHttpUrl(value)) {
        return {
          status: 'False',
          reason: EnvironmentReason.InvalidURL,
          message: `${field} is not a valid http(s) URL: "${value.slice(0, 200)}".`,
        };
      }
    }
    const refused = env.spec.webhooks?.url ? await this.webhookRefusal(env.spec.webhooks.url) : undefined;
    if (refused) return refused;
    return { status: 'True', reason: EnvironmentReason.Ready, message: `Ready: the secret key is in Secret "${secretName}".` };
  }

  /**
   * The verdict when the guard refuses the webhook URL now. Delivery checks again on every
   * connection (names can change their answers); a name that does not resolve yet is no refusal.
   */
  private async webhookRefusal(url: string): Promise<Verdict<EnvironmentReason> | undefined> {
    const refusal = await this.egress.check(url).catch(() => undefined);
    if (!refusal) return undefined;
    const what = refusal.host === refusal.address ? refusal.address : `${refusal.host} resolves to ${refusal.address}`;
    return {
      status: 'False',
      reason: EnvironmentReason.WebhookURLRefused,
      message: `spec.webhooks.url is refused: ${what}, a ${refusal.addressClass} address. Use a public address, or ask the platform team to add it to the egress allowlist (LATCHKEY_EGRESS_ALLOW).`,
    };
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
