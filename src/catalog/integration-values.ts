/**
 * The values a Provider needs of each Integration besides its client (declared on the Provider, never
 * known to one provider's code): the name its callback URL is registered under (`redirectUriIsName`: the
 * Integration's `redirectUriName`, eBay's RuName) and the keys of its `authorizationParams` the provider
 * cannot authorize without (`requiredAuthorizationParams`: Amazon Selling Partner's `application_id`). The
 * Integration reconciler reports a missing one on the Ready condition; a connect attempt is refused
 * before anything is sent ({@link refuseMissingIntegrationValues}).
 */
import { LatchkeyError } from '../domain/errors.js';
import type { IntegrationSpec, ProviderSpec } from '../k8s/resources.js';

/** One value the Integration lacks: the field to set, and why the provider needs it. */
export interface MissingIntegrationValue {
  field: string;
  why: string;
}

export function missingIntegrationValues(provider: ProviderSpec, integration: IntegrationSpec): MissingIntegrationValue[] {
  const missing: MissingIntegrationValue[] = [];
  if (provider.redirectUriIsName && !integration.redirectUriName?.trim())
    missing.push({ field: 'spec.redirectUriName', why: 'the name the provider registered for the callback URL (sent as redirect_uri)' });
  for (const key of provider.requiredAuthorizationParams ?? []) {
    if (!integration.authorizationParams?.[key]?.trim())
      missing.push({ field: `spec.authorizationParams.${key}`, why: `the authorization URL's ${key}` });
  }
  return missing;
}

/** The operator's words for what is missing (the Ready condition's message and a refused start's). */
export function describeMissing(displayName: string, missing: MissingIntegrationValue[]): string {
  return `${displayName} needs ${missing.map((m) => `${m.field} (${m.why})`).join(' and ')}: set ${missing.length > 1 ? 'them' : 'it'} on the Integration.`;
}

/** 409 `integration_not_configured` (the Integration's state, not the caller's request) when a value is missing. */
export function refuseMissingIntegrationValues(provider: ProviderSpec, integration: IntegrationSpec): void {
  const missing = missingIntegrationValues(provider, integration);
  if (!missing.length) return;
  throw new LatchkeyError('conflict', 'integration_not_configured', describeMissing(provider.displayName, missing), {
    errors: missing.map((m) => ({ path: m.field, message: `missing: ${m.why}` })),
  });
}
