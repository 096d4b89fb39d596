import { createPrivateKey } from 'node:crypto';
import type { Clock } from '../../domain/clock.js';
import {
  findCondition,
  IntegrationCondition,
  IntegrationReason,
  ProviderCondition,
  TokenLifetimeReason,
  type ConditionInput,
  type Verdict,
} from '../../domain/conditions.js';
import { missingSecretVerdict, writeConditions, type CatalogParts } from './conditions.js';
import { INTEGRATIONS, type IntegrationResource, type ProviderSpec } from '../../k8s/resources.js';
import { currentClientFault, secretsVersion } from '../../auth/refresh/integration-fault.js';
import { shortLivedReport } from '../short-lived-tokens.js';
import type { NeededKey } from '../../modes/auth-mode.js';
import { CLIENT_KEYS } from '../../modes/shared/oauth-client.js';
import { findAuthModeModule } from '../../modes/registry.js';
import { tokenRequestsPresentCertificate } from '../../auth/token-request.js';
import { providerWebhookUrl } from '../../catalog/webhook-url.js';
import { integrationConfigProblems } from '../../catalog/integration-config.js';
import { describeMissing, missingIntegrationValues } from '../../catalog/integration-values.js';
import { checkSigningCertificate, SIGNING_KEYS } from '../../domain/signing-certificate.js';

/**
 * The keys the Integration's Secret must hold for this Provider (its auth mode's module says; none: it needs
 * no client credentials). A Provider authenticating with private_key_jwt needs the signing key instead of
 * the client secret, and no client ID where the end user gives their own (OAUTH2_CC's form); one with
 * tls_client_auth needs no client secret at all.
 */
function secretKeysOf(spec: ProviderSpec): { keys: NeededKey[]; why: string } | undefined {
  const module = findAuthModeModule(spec.authMode);
  const needed = module?.integration.secret;
  const method = spec.tokenRequestAuthMethod;
  // RFC 7522: the end user types the client ID; the Integration signs the SAML assertion, no secret is sent.
  if (needed && spec.modeOptions?.samlBearer !== undefined)
    return {
      keys: [{ key: 'privateKey', pem: true }, { key: 'certificate' }],
      why: "the private key its SAML bearer assertions are signed with (RFC 7522) and that key's X.509 certificate, which the end users' administrators register with the provider",
    };
  if (!needed || (method !== 'private_key_jwt' && method !== 'tls_client_auth') || !needed.keys.some((k) => k.key === 'clientSecret'))
    return needed;
  // No secret is sent; no client ID either where the end user gives their own.
  const keys = needed.keys.filter((k) => k.key !== 'clientSecret' && (k.key !== 'clientId' || module.integration.clientBeforeConnect));
  if (method === 'private_key_jwt')
    return {
      keys: [...keys, { key: 'privateKey', pem: true }],
      why: 'the private key its client assertions are signed with (private_key_jwt)',
    };
  // RFC 8705: the certificate (clientCertificateRef, checked apart) proves the client.
  return keys.length ? { keys, why: 'the OAuth client ID (its TLS client certificate proves it)' } : undefined;
}

export type { Verdict } from '../../domain/conditions.js';

/**
 * Checks an Integration: its Provider exists (and is valid), and its client Secret exists, is visible
 * to Latchkey (labelled), and has the keys the provider's auth mode needs. The only writer of an
 * Integration's conditions.
 */
export class IntegrationReconciler {
  constructor(
    private readonly store: CatalogParts,
    private readonly clock: Clock,
    /** For `status.webhookUrl` (the `kubectl get integration -o wide` column); none: not written. */
    private readonly publicBaseUrl?: string,
  ) {}

  async reconcile(namespace: string, name: string): Promise<void> {
    const integration = this.store.catalog.getIntegration(namespace, name);
    if (!integration || integration.metadata.deletionTimestamp) return;
    const ready = { type: IntegrationCondition.Ready, ...(await this.check(integration)) };
    const lifetimes = tokenLifetimes(integration);
    await writeConditions(
      this.store,
      INTEGRATIONS,
      integration,
      lifetimes ? [ready, lifetimes] : [ready],
      this.clock.now(),
      this.fields(integration),
    );
  }

  /** Where the provider sends the Integration's webhooks, when its Provider declares them. */
  private fields(integration: IntegrationResource): Record<string, string | undefined> {
    if (!this.publicBaseUrl) return {};
    const takesWebhooks = Boolean(this.store.catalog.getProvider(integration.spec.provider)?.spec.webhooks);
    return {
      webhookUrl: takesWebhooks
        ? providerWebhookUrl(this.publicBaseUrl, integration.metadata.namespace!, integration.metadata.name)
        : undefined,
    };
  }

  async check(integration: IntegrationResource): Promise<Verdict<IntegrationReason>> {
    const verdict = await this.checkClient(integration);
    // A refusal the refresher recorded may come from the certificate (expired since it was checked): its own words first.
    if (verdict.status !== 'True' && verdict.reason !== IntegrationReason.ClientRejected) return verdict;
    const provider = this.store.catalog.getProvider(integration.spec.provider);
    if (!provider) return verdict;
    return (
      (await this.checkCertificate(integration, provider.spec)) ??
      connectionConfigVerdict(integration, provider.spec) ??
      checkValues(integration, provider.spec) ??
      verdict
    );
  }

  /** The TLS client certificate a Provider requires (mutual TLS): named, in place, and a current certificate with its key. */
  private async checkCertificate(integration: IntegrationResource, spec: ProviderSpec): Promise<Verdict<IntegrationReason> | undefined> {
    if (!tokenRequestsPresentCertificate(spec)) return undefined;
    const namespace = integration.metadata.namespace!;
    const name = integration.spec.clientCertificateRef?.name;
    const wanted = 'tls.crt and tls.key (a kubernetes.io/tls Secret, as cert-manager writes one)';
    if (!name) {
      return {
        status: 'False',
        reason: IntegrationReason.ClientCertificateRefMissing,
        message: `Provider "${integration.spec.provider}" requires a TLS client certificate: set spec.clientCertificateRef to a Secret with ${wanted}.`,
      };
    }
    const check = this.store.catalog.readClientCertificate(namespace, name, this.clock.now());
    if (!check) return missingSecretVerdict(this.store, namespace, name, 'spec.clientCertificateRef', wanted);
    if (!check.ok) {
      return {
        status: 'False',
        reason: check.reason === 'SecretKeyMissing' ? IntegrationReason.SecretKeyMissing : IntegrationReason.InvalidClientCertificate,
        message: `Secret "${name}" (spec.clientCertificateRef): ${check.message}.`,
      };
    }
    return undefined;
  }

  private async checkClient(integration: IntegrationResource): Promise<Verdict<IntegrationReason>> {
    const namespace = integration.metadata.namespace!;
    const { provider: providerName, clientSecretRef } = integration.spec;
    const provider = this.store.catalog.getProvider(providerName);
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
    const needed = secretKeysOf(provider.spec);
    if (!clientSecretRef) {
      if (!needed) {
        return { status: 'True', reason: IntegrationReason.Ready, message: `Ready: ${mode} connections need no client credentials.` };
      }
      return {
        status: 'False',
        reason: IntegrationReason.ClientSecretRefMissing,
        message:
          `${mode} integrations need client credentials: ` +
          `set spec.clientSecretRef to a Secret with keys ${describeKeys(provider.spec)}.`,
      };
    }
    const secret = this.store.catalog.getReferencedSecret(namespace, clientSecretRef.name);
    if (!secret)
      return missingSecretVerdict(
        this.store,
        namespace,
        clientSecretRef.name,
        'spec.clientSecretRef',
        `keys ${describeKeys(provider.spec)}`,
      );
    if (!needed) {
      return {
        status: 'True',
        reason: IntegrationReason.Ready,
        message: `Ready: Provider "${providerName}" exists and Secret "${clientSecretRef.name}" is in place.`,
      };
    }
    const has = (key: string) => {
      const v = secret.data?.[key];
      return v !== undefined && Buffer.from(v, 'base64').length > 0;
    };
    // Where each needed key was found (its own name first).
    const found = needed.keys.map((k) => (has(k.key) ? k.key : k.or && has(k.or) ? k.or : undefined));
    const missing = needed.keys.filter((_, i) => !found[i]).map((k) => k.key);
    const version = (name: string) => this.store.catalog.getReferencedSecret(namespace, name)?.metadata?.resourceVersion;
    const fault = missing.length ? undefined : currentClientFault(integration, secretsVersion(integration, version));
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
          `Secret "${clientSecretRef.name}" lacks ${missing.map((k) => `"${k}"`).join(' and ')}: ${mode} integrations need ${needed.why}. ` +
          `Add ${missing.length > 1 ? 'them' : 'it'} (kubectl edit secret ${clientSecretRef.name} -n ${namespace}).`,
      };
    }
    for (const [i, k] of needed.keys.entries()) {
      if (!k.pem) continue;
      try {
        createPrivateKey(Buffer.from(secret.data![found[i]!]!, 'base64').toString('utf8'));
      } catch {
        return {
          status: 'False',
          reason: IntegrationReason.InvalidPrivateKey,
          message:
            `Secret "${clientSecretRef.name}" key "${found[i]}" is not a PEM private key. ` +
            'Store the whole PEM file of the private key (for a GitHub App, download it again).',
        };
      }
    }
    const signing = provider.spec.modeOptions?.samlBearer !== undefined ? this.checkSigning(secret, clientSecretRef.name) : undefined;
    if (signing) return signing;
    return {
      status: 'True',
      reason: IntegrationReason.Ready,
      message: `Ready: Provider "${providerName}" exists and Secret "${clientSecretRef.name}" has ${needed.why}.`,
    };
  }

  /** A SAML bearer Integration's signing key and certificate: an RSA key, its own certificate, current. */
  private checkSigning(secret: { data?: Record<string, string> }, name: string): Verdict<IntegrationReason> | undefined {
    const value = (key: string) => Buffer.from(secret.data?.[key] ?? '', 'base64').toString('utf8');
    const check = checkSigningCertificate(value(SIGNING_KEYS.key), value(SIGNING_KEYS.cert), this.clock.now());
    if (check.ok) return undefined;
    return {
      status: 'False',
      reason: check.reason === 'InvalidPrivateKey' ? IntegrationReason.InvalidPrivateKey : IntegrationReason.InvalidSigningCertificate,
      message: `Secret "${name}": ${check.message}. The end users' administrators register this certificate with the provider.`,
    };
  }
}

/**
 * The values the platform team sets on the Integration (`spec.connectionConfig`, the Provider's `setBy:
 * integration` keys): each required one there and following its key's rule. Names keys, never values.
 */
function connectionConfigVerdict(integration: IntegrationResource, spec: ProviderSpec): Verdict<IntegrationReason> | undefined {
  const problems = integrationConfigProblems(spec, integration.spec);
  if (!problems.length) return undefined;
  const missing = problems.every((p) => p.kind === 'missing');
  return {
    status: 'False',
    reason: missing ? IntegrationReason.ConnectionConfigMissing : IntegrationReason.InvalidConnectionConfig,
    message:
      `Provider "${integration.spec.provider}" takes connection configuration from the Integration: ` +
      `${problems.map((p) => p.message).join('; ')}.`,
  };
}

/**
 * ProviderTokensShortLived from the refresh scheduler's annotation: True while it is there; False once
 * it is gone, if the condition was ever set (Integrations whose provider never did this carry none).
 */
export function tokenLifetimes(integration: IntegrationResource): ConditionInput | undefined {
  const type = IntegrationCondition.ProviderTokensShortLived;
  const report = shortLivedReport(integration);
  if (report) {
    return {
      type,
      status: 'True',
      reason: TokenLifetimeReason.ShortLivedTokens,
      message:
        `The provider keeps answering refreshes with tokens living ${report.lifetimeSeconds} s, less than the refresh ` +
        `floor of ${report.floorSeconds} s (LATCHKEY_REFRESH_FLOOR_SECONDS): each connection is refreshed at most ` +
        'once per floor, and its token may be used expired meanwhile. Check the provider or its app settings; ' +
        'the end users need do nothing.',
    };
  }
  if (!findCondition(integration.status?.conditions, type)) return undefined;
  return {
    type,
    status: 'False',
    reason: TokenLifetimeReason.NormalLifetimes,
    message: 'The provider answers refreshes with tokens that live at least the refresh floor.',
  };
}

/** The values the Provider needs of the Integration besides its client (src/catalog/integration-values.ts). */
function checkValues(integration: IntegrationResource, spec: ProviderSpec): Verdict<IntegrationReason> | undefined {
  const missing = missingIntegrationValues(spec, integration.spec);
  if (!missing.length) return undefined;
  return {
    status: 'False',
    reason: IntegrationReason.IntegrationValueMissing,
    message: `Provider "${integration.spec.provider}": ${describeMissing(spec.displayName, missing)}`,
  };
}

function describeKeys(spec: ProviderSpec): string {
  return (secretKeysOf(spec)?.keys ?? CLIENT_KEYS).map((k) => k.key).join(', ');
}
