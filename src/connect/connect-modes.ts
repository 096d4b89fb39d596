/**
 * What the Connect UI does for each auth mode: send the browser to the provider (`oauth`: OAuth 2,
 * OAuth 1.0a, the app and plugin installs) or show a form, and the form's credential fields with
 * their labels. Keyed by every auth mode, so a new mode does not compile until it has an entry.
 */
import { twoStepOptions } from '../auth/two-step.js';
import type { AuthMode } from '../domain/auth-modes.js';
import type { ProviderResource, ProviderSpec } from '../k8s/resources.js';

export interface CredentialField {
  name: string;
  secret: boolean;
  required: boolean;
  /** The Provider's own label for it (TWO_STEP declares its fields with labels). */
  label?: string;
}

type ConnectMode = { flow: 'oauth' } | { flow: 'form'; fields: readonly CredentialField[] | ((spec: ProviderSpec) => CredentialField[]) };

/** A field shown as a password, required. */
const secret = (name: string, required = true): CredentialField => ({ name, secret: true, required });
/** A field shown as text, required. */
const plain = (name: string): CredentialField => ({ name, secret: false, required: true });

const REDIRECT: ConnectMode = { flow: 'oauth' };

/** TWO_STEP: the fields the Provider declares; none when its exchange is not usable (its Ready condition says why). */
function twoStepFields(spec: ProviderSpec): CredentialField[] {
  try {
    return twoStepOptions(spec).credentialFields.map((f) => ({ name: f.name, secret: f.secret, required: f.required, label: f.label }));
  } catch {
    return [];
  }
}

export const CONNECT_MODES: Record<AuthMode, ConnectMode> = {
  OAUTH2: REDIRECT,
  OAUTH1: REDIRECT,
  APP: REDIRECT,
  CUSTOM: REDIRECT,
  INSTALL_PLUGIN: REDIRECT,
  API_KEY: { flow: 'form', fields: [secret('apiKey')] },
  BASIC: { flow: 'form', fields: [plain('username'), secret('password', false)] },
  // Checked by getting a token before anything is stored.
  OAUTH2_CC: { flow: 'form', fields: [plain('clientId'), secret('clientSecret')] },
  // The signing key; the key ID, issuer and the like are the provider's connection configuration.
  JWT: { flow: 'form', fields: [secret('apiKey')] },
  // The access token made in NetSuite; the account ID is connection configuration, the consumer is the Integration's.
  TBA: { flow: 'form', fields: [plain('tokenId'), secret('tokenSecret')] },
  // The secrets the per-request signature is computed from.
  SIGNATURE: { flow: 'form', fields: [plain('username'), secret('password')] },
  // TWO_STEP, BILL, APP_STORE: exchanged or minted when the form is sent (src/connections/exchanged-credentials.ts).
  TWO_STEP: { flow: 'form', fields: twoStepFields },
  BILL: { flow: 'form', fields: [plain('username'), secret('password'), plain('organization_id'), secret('dev_key')] },
  APP_STORE: { flow: 'form', fields: [plain('issuer_id'), plain('key_id'), secret('private_key')] },
  // Configuration fields only (or none at all): nothing to authorize.
  NONE: { flow: 'form', fields: [] },
};

/** The credential fields the end user fills in for this provider (none for a redirect flow). */
export function credentialFields(provider: ProviderResource): CredentialField[] {
  const mode = CONNECT_MODES[provider.spec.authMode];
  if (mode.flow !== 'form') return [];
  return typeof mode.fields === 'function' ? mode.fields(provider.spec) : [...mode.fields];
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
