/**
 * What the Connect UI does for each auth mode, as its module says (src/modes): send the browser to
 * the provider (`oauth`: OAuth 2, OAuth 1.0a, the app and plugin installs) or show a form, the form's
 * credential fields, and their labels.
 */
import type { AuthMode } from '../domain/auth-modes.js';
import type { ProviderResource, ProviderSpec } from '../k8s/resources.js';
import type { ConnectFlow, CredentialField } from '../modes/auth-mode.js';
import { authModeModule } from '../modes/registry.js';

export type { CredentialField } from '../modes/auth-mode.js';

/** The Connect flow of an auth mode as the page names it (`oauth`: a redirect). */
export function connectFlowOf(mode: AuthMode): 'oauth' | 'form' {
  return authModeModule(mode).connect.flow === 'redirect' ? 'oauth' : 'form';
}

/** The redirect flow of a mode, or undefined for a form. */
export function redirectFlow(mode: AuthMode): Extract<ConnectFlow, { flow: 'redirect' }> | undefined {
  const connect = authModeModule(mode).connect;
  return connect.flow === 'redirect' ? connect : undefined;
}

/** Connection configuration the provider's flow fills itself: never asked from the end user. */
export function flowSuppliedKeys(spec: ProviderSpec): ReadonlySet<string> {
  return redirectFlow(spec.authMode)?.suppliedKeys(spec) ?? new Set();
}

/** The credential fields the end user fills in for this provider (none for a redirect flow). */
export function credentialFields(provider: ProviderResource): CredentialField[] {
  const connect = authModeModule(provider.spec.authMode).connect;
  return connect.flow === 'form' ? connect.fields(provider.spec) : [];
}

const DEFAULT_LABELS: Record<string, string> = {
  apiKey: 'API key',
  username: 'Username',
  password: 'Password',
  clientId: 'Client ID',
  clientSecret: 'Client secret',
  organization_id: 'Organization ID',
  dev_key: 'Developer key',
  issuer_id: 'Issuer ID',
  key_id: 'Key ID',
  private_key: 'Private key (contents of the .p8 file)',
  tokenId: 'Token ID',
  tokenSecret: 'Token secret',
};

/** A field's label: the Provider's `fieldLabels`, then the field's own label, then ours, then its name. */
export function fieldLabel(provider: ProviderResource, name: string, own?: string): string {
  return provider.spec.fieldLabels?.[name] ?? own ?? DEFAULT_LABELS[name] ?? name;
}
