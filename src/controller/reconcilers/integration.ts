import { createPrivateKey } from 'node:crypto';
import type { Clock } from '../../domain/clock.js';
import { findCondition, IntegrationCondition, IntegrationReason, ProviderCondition, type Verdict } from '../../domain/conditions.js';
import { missingSecretVerdict, writeConditions } from './conditions.js';
import { INTEGRATIONS, type IntegrationResource } from '../../k8s/resources.js';
import type { KubeStore } from '../../k8s/store.js';
import { currentClientFault } from '../../auth/refresh/integration-fault.js';

/** Keys the Integration's Secret must hold for each auth mode that needs client credentials. */
const CLIENT_KEYS: Record<string, string[]> = {
  OAUTH2: ['clientId', 'clientSecret'],
  OAUTH1: ['clientId', 'clientSecret'],
  OAUTH2_CC: ['clientId', 'clientSecret'],
  // TBA: NetSuite's consumer key and secret (the integration record's), which sign every request.
  TBA: ['clientId', 'clientSecret'],
};

export type { Verdict } from '../../domain/conditions.js';

/**
 * Checks an Integration: its Provider exists (and is valid), and its client Secret exists, is visible
 * to Latchkey (labelled), and has the keys the provider's auth mode needs. The only writer of an
 * Integration's conditions.
 */
export class IntegrationReconciler {
  constructor(
    private readonly store: KubeStore,
    private readonly clock: Clock,
  ) {}

  async reconcile(namespace: string, name: string): Promise<void> {
    const integration = this.store.getIntegration(namespace, name);
    if (!integration || integration.metadata.deletionTimestamp) return;
    const ready = { type: IntegrationCondition.Ready, ...(await this.check(integration)) };
    await writeConditions(this.store, INTEGRATIONS, integration, [ready], this.clock.now());
  }

  async check(integration: IntegrationResource): Promise<Verdict<IntegrationReason>> {
    const namespace = integration.metadata.namespace!;
    const { provider: providerName, clientSecretRef } = integration.spec;
    const provider = this.store.getProvider(providerName);
    if (!provider) {
      return {
        status: 'False',
        reason: IntegrationReason.ProviderNotFound,
        message:
          `Provider "${providerName}" does not exist. Apply it (kubectl apply -f config/providers/${providerName}.yaml) ` +
          'or point the Integration at an existing Provider.',
      };
    }
    const providerReady = findCondition(provider.status?.conditions, ProviderCondition.Ready);
    if (providerReady?.status === 'False') {
      return {
        status: 'False',
        reason: IntegrationReason.ProviderNotReady,
        message: `Provider "${providerName}" is not valid: ${providerReady.message}`,
      };
    }
    const mode = provider.spec.authMode;
    const needed = mode === 'APP' ? undefined : CLIENT_KEYS[mode];
    const needsSecret = mode === 'APP' || needed !== undefined;
    if (!clientSecretRef) {
      if (!needsSecret) {
        return { status: 'True', reason: IntegrationReason.Ready, message: `Ready: ${mode} connections need no client credentials.` };
      }
      return {
        status: 'False',
        reason: IntegrationReason.ClientSecretRefMissing,
        message: `${mode} integrations need client credentials: ` + `set spec.clientSecretRef to a Secret with keys ${describeKeys(mode)}.`,
      };
    }
    const secret = this.store.getReferencedSecret(namespace, clientSecretRef.name);
    if (!secret)
      return missingSecretVerdict(this.store, namespace, clientSecretRef.name, 'spec.clientSecretRef', `keys ${describeKeys(mode)}`);
    const has = (key: string) => {
      const v = secret.data?.[key];
      return v !== undefined && Buffer.from(v, 'base64').length > 0;
    };
    if (mode === 'APP') {
      // The App ID and private key, under appId/privateKey (or the catalog's clientId/clientSecret fields).
      const idKey = has('appId') ? 'appId' : has('clientId') ? 'clientId' : undefined;
      const pemKey = has('privateKey') ? 'privateKey' : has('clientSecret') ? 'clientSecret' : undefined;
      const missing = [idKey ? undefined : 'appId', pemKey ? undefined : 'privateKey'].filter(Boolean);
      if (missing.length) {
        return {
          status: 'False',
          reason: IntegrationReason.SecretKeyMissing,
          message:
            `Secret "${clientSecretRef.name}" lacks ${missing.map((k) => `"${k}"`).join(' and ')}: ` +
            "APP integrations need the App ID (appId) and the App's private key in PEM (privateKey).",
        };
      }
      try {
        createPrivateKey(Buffer.from(secret.data![pemKey!]!, 'base64').toString('utf8'));
      } catch {
        return {
          status: 'False',
          reason: IntegrationReason.InvalidPrivateKey,
          message:
            `Secret "${clientSecretRef.name}" key "${pemKey}" is not a PEM private key. ` +
            "Download the App's private key again and store the whole .pem file.",
        };
      }
      return {
        status: 'True',
        reason: IntegrationReason.Ready,
        message: `Ready: Provider "${providerName}" and the App credentials in Secret "${clientSecretRef.name}" are in place.`,
      };
    }
    const missing = (needed ?? []).filter((k) => !has(k));
    const fault = missing.length ? undefined : currentClientFault(integration, secret.metadata?.resourceVersion);
    if (fault) {
      return {
        status: 'False',
        reason: IntegrationReason.ClientRejected,
        message:
          `The provider's token endpoint refused this integration's client (${fault.detail}). Check the client ID and ` +
          `secret in Secret "${clientSecretRef.name}" and the app's settings at the provider; refreshes resume when ` +
          'the Integration or its Secret changes.',
      };
    }
    if (missing.length) {
      return {
        status: 'False',
        reason: IntegrationReason.SecretKeyMissing,
        message:
          `Secret "${clientSecretRef.name}" lacks ${missing.map((k) => `"${k}"`).join(' and ')}, which ${mode} integrations need. ` +
          `Add ${missing.length > 1 ? 'them' : 'it'} (kubectl edit secret ${clientSecretRef.name} -n ${namespace}).`,
      };
    }
    return {
      status: 'True',
      reason: IntegrationReason.Ready,
      message: `Ready: Provider "${providerName}" exists and Secret "${clientSecretRef.name}" has the client credentials.`,
    };
  }
}

function describeKeys(mode: string): string {
  return mode === 'APP' ? 'appId and privateKey' : (CLIENT_KEYS[mode] ?? ['clientId', 'clientSecret']).join(' and ');
}
