/**
 * The INSTALL_PLUGIN flow of the Connect UI: the end user installs the provider's plugin or app at the
 * Provider's `pluginInstall.installUrl` (with our sealed, browser-bound flow state as `state` and the
 * callback as `redirect_uri`); when the install is done the provider sends the browser back to the
 * OAuth callback with the credential it issued (`credentialParam`), account fields (`configParams`),
 * a Unix `timestamp` and an HMAC-SHA256 over all of it.
 *
 * Proof of the callback (flows.ts has checked the state, the browser binding and single use first):
 * - the HMAC-SHA256 (hex) keyed with the Integration's client secret over every other callback
 *   parameter, sorted by name and form-encoded (`a=1&b=2`), compared in constant time: only the
 *   provider, which shares the secret, can make it; the state is among the signed parameters, so a
 *   signed callback of one flow cannot complete another (a foreign callback);
 * - the timestamp within `maxAgeSeconds` (default 300): an old signed callback is refused;
 * - the state is single use (flows.ts), so a replay of the same callback changes nothing.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { sealFlowState } from '../../auth/flow-state.js';
import { resolveClient } from '../../auth/oauth2-client.js';
import { checkConnectionConfig, fillProviderUrl } from '../../catalog/connection-config.js';
import { LatchkeyError } from '../../domain/errors.js';
import type { IntegrationResource, PluginInstallSpec, ProviderSpec } from '../../k8s/resources.js';
import type { CatalogStore, StoredCredentials } from '../../k8s/store.js';
import type { RedirectCallback, RedirectDeps, RedirectFlow, RedirectStart, RedirectStarted } from '../auth-mode.js';
import { installUserConfig, userFacingSpec } from '../shared/install-config.js';

/** Connection configuration keys the callback fills: never asked from the end user. */
export function pluginSuppliedKeys(spec: ProviderSpec): ReadonlySet<string> {
  return new Set(spec.pluginInstall?.configParams ?? []);
}

const DEFAULT_MAX_AGE_S = 300;
/** A provider's clock may run a little ahead of ours. */
const FUTURE_SKEW_S = 60;
const MAX_CREDENTIAL_LENGTH = 4096;

function notConfigured(what: string): LatchkeyError {
  return new LatchkeyError('unavailable', 'integration_not_configured', `This integration is not fully configured yet (${what}).`);
}
const refused = (code: string, message: string) => new LatchkeyError('invalid_input', code, message);

/** The Integration's signing secret (its client secret): without it no callback can be verified. */
function signingSecretOf(store: CatalogStore, namespace: string, integration: IntegrationResource): string {
  const secret = resolveClient(store, namespace, integration)?.clientSecret;
  if (!secret) throw notConfigured('the plugin signing secret is missing');
  return secret;
}

/** The string the provider signs: every parameter but the signature, sorted by name, form-encoded. */
export function pluginCallbackSigningString(query: URLSearchParams, signatureParam = 'signature'): string {
  return [...query.entries()]
    .filter(([k]) => k !== signatureParam)
    .sort(([a, av], [b, bv]) => (a < b ? -1 : a > b ? 1 : av < bv ? -1 : av > bv ? 1 : 0))
    .map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`)
    .join('&');
}

/** The hex HMAC-SHA256 of the callback (what the provider, and a test's fake provider, puts in `signature`). */
export function signPluginCallback(query: URLSearchParams, secret: string, signatureParam = 'signature'): string {
  return createHmac('sha256', secret).update(pluginCallbackSigningString(query, signatureParam)).digest('hex');
}

/** Starts the flow: the install page URL with the sealed state and the callback. */
async function startPluginInstall(deps: RedirectDeps, input: RedirectStart): Promise<RedirectStarted> {
  const { integration, provider, base } = input;
  const plugin = provider.spec.pluginInstall;
  if (!plugin) throw notConfigured('the Provider has no install page');
  signingSecretOf(deps.catalog, base.namespace, integration);
  const supplied = pluginSuppliedKeys(provider.spec);
  const userConfig = await installUserConfig(deps, input, provider.spec, supplied);
  const state = sealFlowState(
    { ...base, mode: provider.spec.authMode, connectionConfig: userConfig, startedAt: deps.clock.now() },
    input.secretKey,
  );
  const url = new URL(fillProviderUrl(userFacingSpec(provider.spec, supplied), plugin.installUrl, userConfig));
  url.searchParams.set('state', state);
  url.searchParams.set('redirect_uri', base.redirectUri);
  return { url: url.href, to: 'install the plugin' };
}

function verifySignature(q: URLSearchParams, plugin: PluginInstallSpec, secret: string, name: string): void {
  const param = plugin.signatureParam ?? 'signature';
  const sent = q.getAll(param);
  const invalid = () => refused('invalid_signature', `This callback from ${name} is not signed correctly. Please start again.`);
  if (sent.length !== 1 || !/^[0-9a-fA-F]{64}$/.test(sent[0]!)) throw invalid();
  const expected = Buffer.from(signPluginCallback(q, secret, param), 'hex');
  if (!timingSafeEqual(expected, Buffer.from(sent[0]!, 'hex'))) throw invalid();
}

function verifyTimestamp(q: URLSearchParams, plugin: PluginInstallSpec, nowMs: number, name: string): void {
  const values = q.getAll(plugin.timestampParam ?? 'timestamp');
  const ts = values.length === 1 && /^[0-9]{1,12}$/.test(values[0]!) ? Number(values[0]) : NaN;
  const now = nowMs / 1000;
  if (!Number.isFinite(ts) || ts < now - (plugin.maxAgeSeconds ?? DEFAULT_MAX_AGE_S) || ts > now + FUTURE_SKEW_S)
    throw refused('callback_expired', `This callback from ${name} is too old or not dated. Please start again.`);
}

/**
 * The callback of an INSTALL_PLUGIN flow whose state, browser binding and single use flows.ts has
 * checked: verifies the signature and its age, then returns the credential and the configuration to
 * store. Throws a 4xx LatchkeyError for anything forged, foreign or stale; nothing is stored then.
 */
async function completePluginInstall(
  deps: RedirectDeps,
  input: RedirectCallback,
): Promise<{ credentials: StoredCredentials; connectionConfig: Record<string, string> }> {
  const { state, integration, provider, name } = input;
  const q = input.url.searchParams;
  const plugin = provider.spec.pluginInstall;
  if (!plugin) throw notConfigured('the Provider has no install page');
  verifySignature(q, plugin, signingSecretOf(deps.catalog, state.namespace, integration), name);
  verifyTimestamp(q, plugin, deps.clock.now(), name);
  const credential = q.getAll(plugin.credentialParam);
  if (credential.length !== 1 || !credential[0] || credential[0].length > MAX_CREDENTIAL_LENGTH)
    throw refused('invalid_callback', `${name} did not send a credential. Please start again.`);
  const fromCallback: Record<string, string> = {};
  for (const key of plugin.configParams ?? []) {
    const v = q.getAll(key);
    if (v.length > 1) throw refused('invalid_callback', `${name} sent ${key} more than once.`);
    if (v[0] !== undefined) fromCallback[key] = v[0];
  }
  const r = state.reconnect;
  if (r) {
    const kept =
      (await deps.connections.findConnection(state.namespace, r.integration, r.connectionId))?.resource.spec.connectionConfig ?? {};
    const moved = Object.keys(fromCallback).filter((k) => kept[k] !== undefined && String(kept[k]) !== fromCallback[k]);
    if (moved.length)
      throw refused(
        'installation_changed',
        `A reconnect keeps the account (${moved.join(', ')}); connect the other one as a new connection.`,
      );
  }
  const connectionConfig = Object.fromEntries(
    Object.entries(checkConnectionConfig(provider.spec, { ...state.connectionConfig, ...fromCallback }, { path: 'connectionConfig' }))
      .filter(([, v]) => typeof v === 'string')
      .map(([k, v]) => [k, v as string]),
  );
  const raw = Object.fromEntries(
    [...q.entries()].filter(([k]) => k !== 'state' && k !== plugin.credentialParam && k !== (plugin.signatureParam ?? 'signature')),
  );
  const credentials = { type: 'INSTALL_PLUGIN', apiKey: credential[0], raw };
  return { credentials: credentials as unknown as StoredCredentials, connectionConfig };
}

/** The callback values a log line must not show (the credential and the signature). */
function pluginCallbackSecrets(store: CatalogStore, namespace: string, integrationId: string, q: URLSearchParams): string[] {
  const integration = store.getIntegration(namespace, integrationId);
  const plugin = integration && store.getProvider(integration.spec.provider)?.spec.pluginInstall;
  if (!plugin) return [];
  return [...q.getAll(plugin.credentialParam), ...q.getAll(plugin.signatureParam ?? 'signature')];
}

export const pluginInstallFlow: RedirectFlow = {
  start: startPluginInstall,
  complete: completePluginInstall,
  callbackSecrets: (deps, state, query) => pluginCallbackSecrets(deps.catalog, state.namespace, state.integration, query),
  suppliedKeys: pluginSuppliedKeys,
};
