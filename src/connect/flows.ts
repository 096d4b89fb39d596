/**
 * The end-user authorization flows behind the Connect UI, without HTTP: what a session offers, the
 * start of a redirect flow and its callback (the steps at the provider are the mode's `RedirectFlow`,
 * src/modes/<mode>/; here the session, single use, the browser binding and the log), the forms (API key,
 * basic, client credentials, JWT signing key), and saving the result as a new connection or a
 * re-authorization of an existing one.
 */
import { z } from 'zod';
import type { AppContext } from '../context/app-context.js';
import { browserBindingHash, browserBindingMatches, flowStateNamespace, newFlowId, openFlowState } from '../auth/flow-state.js';
import { resolveClient } from '../auth/oauth2-client.js';
import { AccountChoiceNeeded, withProviderValues } from '../auth/post-connection.js';
import { providerValueKeys } from '../auth/provider-answers.js';
import { checkConnectionConfig, configFields } from '../catalog/connection-config.js';
import { integrationConfigProblems, withIntegrationConfig } from '../catalog/integration-config.js';
import { LatchkeyError, findAnswerTooLarge } from '../domain/errors.js';
import { findCondition, IntegrationCondition, IntegrationReason } from '../domain/conditions.js';
import type { ClientRegistrationStore } from '../k8s/client-registrations.js';
import type { FlowRecords } from '../k8s/flow-records.js';
import { connectionObjectName } from '../k8s/names.js';
import type { EnvironmentResource, IntegrationResource, ProviderResource } from '../k8s/resources.js';
import type { StoredCredentials } from '../k8s/store.js';
import { enqueueAuthWebhook } from '../webhooks/auth-webhooks.js';
import { createConnection, reauthorize } from '../connections/service.js';
import { authModeModule } from '../modes/registry.js';
import type { Authorized } from '../modes/auth-mode.js';
import { failedAtProvider, isProviderFailure, TokenExchangeFailed } from '../modes/shared/provider-failure.js';
import { connectFlowOf, credentialFields, fieldLabel, flowSuppliedKeys, redirectFlow } from './connect-modes.js';
import { checkSessionQuota, SESSION_LABEL, sessionLabelValue } from './session-quota.js';
import { claimSession, completeOnce, refuseUsedSession, releaseSession, type SessionUse } from './session-use.js';
import { logAttempt, logFailedAttempt } from './flow-log.js';
import { providerAnswer, providerText } from '../oplog/redact.js';
import { environmentWithKey, type OpenSession } from './session.js';
import { refuseMissingIntegrationValues } from '../catalog/integration-values.js';
import { choiceNamespace, offerChoiceFrom, takeAccountChoice, type ChoiceFlow, type PendingChoice } from './account-choice.js';
import type { AccountChoiceView, ConnectResult, IntegrationView, SessionView } from './wire.js';

export type { AccountChoiceView, ConnectResult, FormField, IntegrationView, SessionView } from './wire.js';

export interface ConnectDeps extends AppContext {
  flows: FlowRecords;
  /** Clients registered at discovered authorization servers (MCP_OAUTH2). */
  registrations?: ClientRegistrationStore;
}

function lookup(
  deps: ConnectDeps,
  session: OpenSession,
  integrationId: string,
): { integration: IntegrationResource; provider: ProviderResource } {
  if (!session.claims.allowedIntegrations.includes(integrationId)) {
    throw new LatchkeyError('forbidden', 'integration_not_allowed', 'This integration is not offered in this session.');
  }
  const integration = deps.catalog.getIntegration(session.namespace, integrationId);
  const provider = integration && deps.catalog.getProvider(integration.spec.provider);
  if (!integration || !provider)
    throw new LatchkeyError('not_found', 'integration_not_found', `The integration "${integrationId}" is not available.`);
  return { integration, provider };
}

/** The application's name a provider's consent page shows: the Environment's `connectUI.appName`, else the Integration's display name. */
export function consentAppName(environment: EnvironmentResource, integrationName: string): string {
  return environment.spec.connectUI?.appName || integrationName;
}

function view(integration: IntegrationResource, provider: ProviderResource): IntegrationView {
  const mode = provider.spec.authMode;
  const supplied = flowSuppliedKeys(provider.spec);
  return {
    id: integration.metadata.name,
    name: integration.spec.displayName ?? provider.spec.displayName,
    provider: provider.metadata.name,
    providerDisplayName: provider.spec.displayName,
    authMode: mode,
    flow: connectFlowOf(mode),
    fields: credentialFields(provider).map((f) => ({
      name: f.name,
      label: fieldLabel(provider, f.name, f.label),
      secret: f.secret,
      required: f.required,
    })),
    // What the flow fills itself (APP / CUSTOM: the app slug and installation ID; INSTALL_PLUGIN: the callback's fields),
    // and what the Integration sets (setBy: integration), is never asked.
    configFields: configFields(provider.spec)
      .filter((f) => !supplied.has(f.name) && f.setBy !== 'integration')
      .map((f) => ({
        name: f.name,
        label: f.label ?? fieldLabel(provider, f.name),
        secret: false,
        required: f.required && f.default === undefined,
      })),
  };
}

export function describeSession(deps: ConnectDeps, session: OpenSession): SessionView {
  const integrations: IntegrationView[] = [];
  for (const id of session.claims.allowedIntegrations) {
    const integration = deps.catalog.getIntegration(session.namespace, id);
    const provider = integration && deps.catalog.getProvider(integration.spec.provider);
    if (!integration || !provider) continue;
    const unavailable = unavailableReason(deps, session.namespace, integration, provider);
    integrations.push({
      ...view(integration, provider),
      ...(provider.spec.logoUrl ? { logoUrl: provider.spec.logoUrl } : {}),
      ...(unavailable ? { unavailable } : {}),
    });
  }
  return { reconnect: Boolean(session.claims.reconnect), integrations };
}

/** What the end user reads for each reason an Integration is not Ready (condition messages are for operators). */
const NOT_READY_TEXT: Record<string, string> = {
  [IntegrationReason.ProviderNotFound]: 'This service is not set up yet.',
  [IntegrationReason.ProviderNotReady]: 'This service is not set up correctly yet.',
  [IntegrationReason.ConnectionConfigMissing]: 'This service is not set up yet.',
  [IntegrationReason.InvalidConnectionConfig]: 'This service is not set up correctly yet.',
};
const NOT_CONFIGURED = 'This service is not fully configured yet (its client credentials are missing).';

/**
 * Why an integration cannot work now: its Ready condition is False (the controller's verdict), or,
 * before the controller has looked, a redirect flow without client credentials. Shown to the end user.
 */
function unavailableReason(
  deps: ConnectDeps,
  namespace: string,
  integration: IntegrationResource,
  provider: ProviderResource,
): string | undefined {
  const ready = findCondition(integration.status?.conditions, IntegrationCondition.Ready);
  if (ready?.status === 'False') return NOT_READY_TEXT[ready.reason] ?? NOT_CONFIGURED;
  // Before the controller has looked: a value the platform team sets on the Integration is missing or wrong.
  if (integrationConfigProblems(provider.spec, integration.spec).length) return NOT_READY_TEXT[IntegrationReason.ConnectionConfigMissing];
  // OAuth 2 and OAuth 1 redirect with the Integration's client; TBA signs with its consumer key and secret.
  if (authModeModule(provider.spec.authMode).integration.clientBeforeConnect && !resolveClient(deps.catalog, namespace, integration))
    return NOT_CONFIGURED;
  return undefined;
}

/**
 * The configuration a flow uses, checked against the Provider's rules before any request leaves. A
 * reconnect uses the stored configuration: it may not point the connection at another tenant or host.
 */
async function flowConfig(
  deps: ConnectDeps,
  session: OpenSession,
  { integration, provider }: { integration: IntegrationResource; provider: ProviderResource },
  rawConfig: unknown,
): Promise<Record<string, string>> {
  const r = session.claims.reconnect;
  if (r) {
    const stored =
      (await deps.connections.findConnection(session.namespace, r.integration, r.connectionId))?.resource.spec.connectionConfig ?? {};
    const sent = rawConfig && typeof rawConfig === 'object' ? (rawConfig as Record<string, unknown>) : {};
    const changed = Object.keys(sent).filter((k) => {
      const value = typeof sent[k] === 'string' ? sent[k].trim() : sent[k];
      return value !== '' && value !== undefined && value !== String(stored[k] ?? '');
    });
    if (changed.length) {
      throw new LatchkeyError('invalid_input', 'invalid_connection_config', 'A reconnect keeps the connection configuration.', {
        errors: changed.map((k) => ({ path: `connectionConfig.${k}`, message: `"${k}" cannot be changed by a reconnect` })),
      });
    }
    return stringValues(checkConnectionConfig(provider.spec, stored, { path: 'connectionConfig' }));
  }
  const later = providerValueKeys(provider.spec).all;
  // The Integration's values (setBy: integration) in place; another one sent is refused.
  const given = withIntegrationConfig(provider.spec, integration.spec, (rawConfig ?? {}) as Record<string, unknown>, 'connectionConfig');
  const fromProvider = Object.keys(given).filter((k) => later.has(k) && given[k] !== undefined && given[k] !== '');
  if (fromProvider.length) {
    throw new LatchkeyError('invalid_input', 'invalid_connection_config', `${provider.spec.displayName} gives these values itself.`, {
      errors: fromProvider.map((k) => ({ path: `connectionConfig.${k}`, message: `"${k}" is given by the provider, not typed` })),
    });
  }
  return stringValues(checkConnectionConfig(provider.spec, given, { path: 'connectionConfig', strict: true, later }));
}

function stringValues(config: Record<string, unknown>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(config).flatMap(([k, v]) => (typeof v === 'string' || typeof v === 'number' ? [[k, String(v)]] : [])),
  );
}

function formSchema(v: IntegrationView) {
  return z.strictObject(
    Object.fromEntries(
      v.fields.map((f) => [
        f.name,
        f.required ? z.string().trim().min(1, `${f.label} is required`).max(4096) : z.string().max(4096).default(''),
      ]),
    ),
  );
}

function validate<S extends z.ZodType>(schema: S, value: unknown, where: string): z.infer<S> {
  const result = schema.safeParse(value ?? {});
  if (result.success) return result.data;
  const fieldErrors = result.error.issues.map((i) => ({
    path: [where, ...i.path.map(String)].join('.'),
    message: i.code === 'unrecognized_keys' ? `unknown field(s): ${(i as { keys?: string[] }).keys?.join(', ')}` : i.message,
  }));
  throw new LatchkeyError('invalid_input', 'invalid_input', fieldErrors[0]?.message ?? 'Invalid input', { errors: fieldErrors });
}

async function checkReconnect(deps: ConnectDeps, session: OpenSession, integrationId: string): Promise<void> {
  const r = session.claims.reconnect;
  if (!r) return;
  if (r.integration !== integrationId || !(await deps.connections.findConnection(session.namespace, r.integration, r.connectionId))) {
    throw new LatchkeyError('not_found', 'connection_not_found', 'The connection to re-authorize no longer exists.');
  }
}

function sessionUse(session: OpenSession, integrationId: string): SessionUse {
  return {
    namespace: session.namespace,
    sid: session.claims.sid,
    integration: integrationId,
    reconnect: Boolean(session.claims.reconnect),
    expiresAtMs: session.claims.exp * 1000,
  };
}

export function callbackUrlOf(deps: ConnectDeps, session: { environment: { spec: { callbackUrl?: string } } }): string {
  return session.environment.spec.callbackUrl ?? `${deps.config.publicBaseUrl}/oauth/callback`;
}

/**
 * Starts the mode's redirect flow (OAuth 2, OAuth 1.0a, an app or plugin install): returns the provider URL to send the browser to.
 * `browserBinding`: the value of the cookie that binds the flow to the starting browser (its hash is sealed in the state).
 */
export async function startOAuthFlow(
  deps: ConnectDeps,
  session: OpenSession,
  integrationId: string,
  rawConfig: unknown,
  browserBinding: string,
): Promise<string> {
  const { integration, provider } = lookup(deps, session, integrationId);
  const v = view(integration, provider);
  const redirect = redirectFlow(provider.spec.authMode);
  if (!redirect) throw new LatchkeyError('invalid_input', 'wrong_flow', `${v.name} does not use a redirect flow.`);
  // A value the Provider needs of the Integration (eBay's RuName, Amazon's application_id): nothing starts without it.
  refuseMissingIntegrationValues(provider.spec, integration.spec);
  await checkReconnect(deps, session, integrationId);
  if (!session.claims.reconnect)
    await checkSessionQuota(deps.connectionScans, session.namespace, session.claims.sid, deps.config.connectMaxConnectionsPerSession);
  // Starting again before completing is fine; once completed, the session would be refused at the callback.
  await refuseUsedSession(deps.flows, sessionUse(session, integrationId));
  const base = {
    namespace: session.namespace,
    sid: session.claims.sid,
    fid: newFlowId(),
    integration: integrationId,
    endUser: session.claims.endUser,
    reconnect: session.claims.reconnect,
    redirectUri: callbackUrlOf(deps, session),
    bh: browserBindingHash(browserBinding),
    exp: session.claims.exp,
    ...session.claims.configDefaults?.[integrationId],
  };
  const attempt = {
    namespace: session.namespace,
    integration: integrationId,
    endUserId: session.claims.endUser?.id,
    reconnect: session.claims.reconnect,
    step: 'start' as const,
  };
  // What a failed start must not log: the flow adds the client secret it uses.
  const secrets: Array<string | undefined> = [];
  try {
    const started = await redirect.start(deps, {
      integration,
      provider,
      base,
      secretKey: session.secretKey,
      rawConfig,
      checkedConfig: () => flowConfig(deps, session, { integration, provider }, rawConfig),
      appName: consentAppName(session.environment, v.name),
      secrets,
    });
    const to = new URL(started.url);
    logAttempt(deps, {
      ...attempt,
      outcome: 'success',
      messages: [`Redirecting the end user to ${started.to} at ${to.origin}${to.pathname}`],
    });
    return started.url;
  } catch (err) {
    // The flow's steps before the provider's (configuration, client) throw as they are.
    if (!failedAtProvider(err)) throw err;
    const tooLarge = findAnswerTooLarge(err);
    if (tooLarge) {
      // The provider's fault, recorded like any failed start; nothing was kept of its answer.
      logAttempt(deps, { ...attempt, outcome: 'failure', messages: [`Could not start the authorization: ${tooLarge.message}`] });
      throw tooLarge;
    }
    if (err instanceof LatchkeyError && !isProviderFailure(err)) throw err;
    logAttempt(deps, {
      ...attempt,
      outcome: 'failure',
      messages: [`Could not start the authorization: ${(err as Error).message}`],
      secrets,
    });
    deps.logger.warn(
      { namespace: session.namespace, integration: integrationId, err: providerAnswer(err, secrets) },
      'could not start the authorization flow',
    );
    throw new LatchkeyError(
      'upstream',
      'provider_unavailable',
      `${v.providerDisplayName} could not be reached to start the authorization. Please try again.`,
    );
  }
}

/** Saves a form flow (API key, basic, client credentials) after validating it. */
export async function submitForm(
  deps: ConnectDeps,
  session: OpenSession,
  integrationId: string,
  rawValues: unknown,
  rawConfig: unknown,
): Promise<ConnectResult> {
  const { integration, provider } = lookup(deps, session, integrationId);
  const v = view(integration, provider);
  if (v.flow !== 'form') throw new LatchkeyError('invalid_input', 'wrong_flow', `${v.name} does not use a form.`);
  await checkReconnect(deps, session, integrationId);
  if (!session.claims.reconnect)
    await checkSessionQuota(deps.connectionScans, session.namespace, session.claims.sid, deps.config.connectMaxConnectionsPerSession);
  const values = validate(formSchema(v), rawValues, 'values') as Record<string, string>;
  const connectionConfig = await flowConfig(deps, session, { integration, provider }, rawConfig);
  // Once per session and integration: a used session sends the provider nothing and changes nothing.
  return completeOnce(deps, sessionUse(session, integrationId), () =>
    saveForm(deps, session, { integration, provider, v, values, connectionConfig }),
  );
}

/** Checks a validated form's credentials (with the provider where the mode needs it) and saves them. */
async function saveForm(
  deps: ConnectDeps,
  session: OpenSession,
  form: {
    integration: IntegrationResource;
    provider: ProviderResource;
    v: IntegrationView;
    values: Record<string, string>;
    connectionConfig: Record<string, string>;
  },
): Promise<ConnectResult> {
  const { integration, provider, v, values, connectionConfig } = form;
  const integrationId = integration.metadata.name;
  // The provider refused what was typed: logged, and on a reconnect also an error of the connection.
  const formFailed = (error: LatchkeyError, detail?: string) =>
    logFailedAttempt(deps, {
      namespace: session.namespace,
      integration: integrationId,
      endUserId: session.claims.endUser?.id,
      reconnect: session.claims.reconnect,
      step: 'form',
      error,
      detail,
      secrets: v.fields.filter((f) => f.secret).map((f) => values[f.name]),
    });
  const connect = authModeModule(provider.spec.authMode).connect;
  if (connect.flow !== 'form') throw new LatchkeyError('invalid_input', 'wrong_flow', `${v.name} does not use a form.`);
  const outcome = await connect.credentials(deps, {
    namespace: session.namespace,
    integration,
    provider,
    values,
    connectionConfig,
    label: (name) => v.fields.find((f) => f.name === name)?.label ?? fieldLabel(provider, name),
  });
  if ('refused' in outcome) {
    if (outcome.answer)
      deps.logger.info({ namespace: session.namespace, integration: integrationId, err: outcome.answer }, 'form credentials rejected');
    await formFailed(outcome.refused, outcome.detail);
    throw outcome.refused;
  }
  const { credentials } = outcome;
  return saveAuthorization(deps, {
    namespace: session.namespace,
    integration,
    provider,
    credentials,
    connectionConfig,
    endUser: session.claims.endUser,
    reconnect: session.claims.reconnect,
    sid: session.claims.sid,
  });
}

export interface CallbackOutcome {
  namespace?: string;
  providerConfigKey?: string;
  result?: ConnectResult;
  error?: LatchkeyError;
  /** The grant covers several accounts and the end user chooses one (`several: choose`): nothing is saved yet. */
  choice?: AccountChoiceView;
}

/**
 * The OAuth callback: checks the sealed state, that this browser started the flow (`browserBinding`,
 * the cookie), and that the state is unused; then exchanges the code or verifier and saves. A
 * callback from another browser is refused before anything is consumed or sent to the provider.
 */
export async function completeCallback(deps: ConnectDeps, url: URL, browserBinding: string | undefined): Promise<CallbackOutcome> {
  const q = url.searchParams;
  const stateValue = q.get('state') ?? '';
  const namespace = flowStateNamespace(stateValue);
  const env = namespace ? environmentWithKey(deps.catalog, namespace) : undefined;
  if (!env)
    return {
      error: new LatchkeyError(
        'invalid_input',
        'invalid_state',
        'This authorization response is not valid. Please start again from the application.',
      ),
    };
  const opened = openFlowState(stateValue, env.secretKey, deps.clock.now());
  if (!opened.ok) {
    return {
      namespace,
      error:
        opened.reason === 'expired'
          ? new LatchkeyError(
              'invalid_input',
              'session_expired',
              'The connect session has expired. Go back to the application and start again.',
            )
          : new LatchkeyError(
              'invalid_input',
              'invalid_state',
              'This authorization response is not valid. Please start again from the application.',
            ),
    };
  }
  const state = opened.state;
  // The redirect flow the state was sealed for (its mode's).
  const redirect = redirectFlow(state.mode);
  const outcome: CallbackOutcome = { namespace, providerConfigKey: state.integration };
  if (!browserBindingMatches(state, browserBinding)) {
    deps.logger.warn({ namespace, integration: state.integration }, 'OAuth callback from a browser that did not start the flow');
    outcome.error = new LatchkeyError(
      'forbidden',
      'browser_mismatch',
      'This authorization was started in another browser. Please start again from the application, in this browser.',
    );
    return outcome;
  }
  const startedAt = deps.clock.now();
  let detail: string | undefined;
  let step: 'callback' | 'token_exchange' | 'post_connection' = 'callback';
  // What the callback and the token request carry: never in a log line, even when a provider quotes it back.
  const sent: Array<string | undefined> = [
    q.get('code') ?? undefined,
    q.get('oauth_verifier') ?? undefined,
    stateValue,
    state.codeVerifier,
  ];
  // Once per session and integration: another flow of this session that completed it first wins.
  const use: SessionUse = {
    namespace: state.namespace,
    sid: state.sid,
    integration: state.integration,
    reconnect: Boolean(state.reconnect),
    expiresAtMs: state.exp * 1000,
  };
  let claimed = false;
  try {
    if (!(await deps.flows.markUsed(state.namespace, state.fid, state.exp * 1000))) {
      throw new LatchkeyError(
        'invalid_input',
        'state_used',
        'This authorization was already completed. Please start again from the application if needed.',
      );
    }
    const integration = deps.catalog.getIntegration(state.namespace, state.integration);
    const provider = integration && deps.catalog.getProvider(integration.spec.provider);
    if (!integration || !provider) throw new LatchkeyError('not_found', 'integration_not_found', 'The integration is no longer available.');
    // A code under the provider's own name (Amazon Selling Partner's `spapi_oauth_code`) is as secret as `code`.
    if (provider.spec.callbackCodeParam) sent.push(q.get(provider.spec.callbackCodeParam) ?? undefined);
    const name = integration.spec.displayName ?? provider.spec.displayName;
    const providerError = q.get('error') ?? (q.has('denied') ? 'access_denied' : undefined);
    if (providerError) {
      await redirect?.abandon?.(deps, state);
      // The provider's words reach the page, the operation log and (for a reconnect) the connection's status.
      const error = providerText(providerError, sent, 100);
      const description = q.get('error_description') ? providerText(q.get('error_description'), sent) : undefined;
      const uri = q.get('error_uri') ? providerText(q.get('error_uri'), sent) : undefined;
      detail = `The provider answered error=${error}${description ? ` (${description})` : ''}${uri ? ` see ${uri}` : ''}`;
      throw providerError === 'access_denied'
        ? new LatchkeyError('invalid_input', 'access_denied', `Access to ${name} was not granted.`)
        : new LatchkeyError(
            'invalid_input',
            'provider_error',
            `${name} reported an error: ${error}${description ? ` (${description})` : ''}.`,
          );
    }
    await claimSession(deps.flows, use);
    claimed = true;
    const returned = providerValueKeys(provider.spec).all;
    // A reconnect takes the provider's values afresh, to check they are the stored ones (the same account).
    const exchangeConfig: Record<string, string> = state.reconnect
      ? Object.fromEntries(Object.entries(state.connectionConfig).filter(([k]) => !returned.has(k)))
      : state.connectionConfig;
    step = 'token_exchange';
    if (!redirect)
      throw new LatchkeyError(
        'invalid_input',
        'invalid_state',
        'This authorization response is not valid. Please start again from the application.',
      );
    let authorized: Authorized;
    try {
      authorized = await redirect.complete(deps, { state, stateValue, url, integration, provider, name, exchangeConfig, secrets: sent });
    } catch (err) {
      if (!(err instanceof TokenExchangeFailed)) throw err;
      // The provider's answer (error code and description) is in the message: what a support engineer needs.
      detail = `Token exchange failed: ${err.answer}`;
      deps.logger.warn({ namespace: state.namespace, integration: state.integration, err: err.answer }, 'token exchange failed');
      throw new LatchkeyError('upstream', 'token_exchange_failed', `${name} did not complete the authorization. Please try again.`);
    }
    const { credentials } = authorized;
    let { connectionConfig } = authorized;
    if (authorized.providerValuesFrom) {
      step = 'post_connection';
      sent.push(credentials.access_token as string | undefined);
      try {
        connectionConfig = await providerValuesOf(deps, {
          state,
          provider,
          credentials,
          connectionConfig: authorized.providerValuesFrom,
          name,
        });
      } catch (err) {
        if (!(err instanceof AccountChoiceNeeded)) throw err;
        // The end user chooses (POST /connect/api/oauth/choose); the session may complete it then, or another flow first.
        outcome.choice = await offerChoiceFrom(deps.flows, err, {
          flow: state,
          credentials,
          name,
          secretKey: env.secretKey,
          nowMs: deps.clock.now(),
        });
        await releaseSession(deps, use);
        return outcome;
      }
      step = 'token_exchange'; // each step has its own entry; the attempt's is the exchange's, as without steps
    }
    outcome.result = await saveAuthorization(deps, {
      namespace: state.namespace,
      integration,
      provider,
      credentials,
      connectionConfig,
      endUser: state.endUser,
      reconnect: state.reconnect,
      sid: state.sid,
    });
  } catch (err) {
    // Nothing was saved: the session may complete this integration with another flow.
    if (claimed) await releaseSession(deps, use);
    if (!(err instanceof LatchkeyError)) throw err;
    outcome.error = err;
    detail ??= stepDetail(err);
  }
  const attempt = {
    namespace: state.namespace,
    integration: state.integration,
    endUserId: state.endUser?.id,
    reconnect: state.reconnect,
    step,
    durationMs: deps.clock.now() - startedAt,
    // INSTALL_PLUGIN: the callback carries the credential itself; it never reaches a log line.
    secrets: [...sent, ...(redirect?.callbackSecrets?.(deps, state, q) ?? [])],
  };
  // A used session's refusal says nothing about the connection (just authorized): not put on it.
  if (outcome.error)
    await logFailedAttempt(deps, { ...attempt, error: outcome.error, detail, onConnection: outcome.error.code !== 'session_already_used' });
  else logAttempt(deps, { ...attempt, outcome: 'success', messages: [`Authorized (${outcome.result?.operation ?? 'saved'})`] });
  return outcome;
}

/**
 * The configuration values the provider returns (token answer, post-connection steps), checked. A
 * reconnect keeps the stored configuration, and refuses an authorization of another account (a value
 * the provider returns that differs from the stored one): the old credentials stay.
 */
async function providerValuesOf(
  deps: ConnectDeps,
  input: {
    state: ChoiceFlow;
    provider: ProviderResource;
    credentials: StoredCredentials;
    connectionConfig: Record<string, string>;
    name: string;
  },
): Promise<Record<string, string>> {
  const { state, provider, credentials } = input;
  const r = state.reconnect;
  const values = await withProviderValues(deps, {
    provider,
    accessToken: String(credentials.access_token ?? ''),
    // A session step's token (Bullhorn's BhRestToken) is a credential: stored with the tokens.
    onSessionToken: (token) => {
      credentials.session_token = token;
    },
    tokenAnswer: credentials.raw && typeof credentials.raw === 'object' ? (credentials.raw as Record<string, unknown>) : undefined,
    connectionConfig: input.connectionConfig,
    log: {
      namespace: state.namespace,
      operation: 'authorization',
      integration: state.integration,
      endUserId: state.endUser?.id,
      ...(r ? { connectionId: r.connectionId, connection: { name: connectionObjectName(r.integration, r.connectionId) } } : {}),
    },
  });
  if (!r) return values;
  refuseDifferentAccount(provider, state, values, input.name);
  return state.connectionConfig;
}

/** What a failed post-connection step said (the end user's message does not name it): for the operation log. */
function stepDetail(err: LatchkeyError): string | undefined {
  const steps = (err.errors ?? []).filter((e) => e.path?.startsWith('postConnection.steps.'));
  return steps.length ? steps.map((e) => `${e.path}: ${e.message}`).join('; ') : undefined;
}

/**
 * A reconnect refuses an authorization of another account: a value the provider returns that differs from
 * the stored one. `partial`: `values` are one step's (an account choice's), the others are not compared.
 */
function refuseDifferentAccount(
  provider: ProviderResource,
  state: ChoiceFlow,
  values: Record<string, string>,
  name: string,
  partial = false,
): void {
  const returned = [...providerValueKeys(provider.spec).all].filter((k) => !partial || k in values);
  const other = returned.filter((k) => state.connectionConfig[k] !== undefined && values[k] !== state.connectionConfig[k]);
  if (other.length) {
    throw new LatchkeyError(
      'invalid_input',
      'different_account',
      `This authorization is for another ${name} account than the connection's. The connection keeps its credentials; connect the other account as a new connection.`,
      { errors: other.map((k) => ({ path: `connectionConfig.${k}`, message: `"${k}" differs from the connection's` })) },
    );
  }
}

const ChoiceBody = z.strictObject({ choice: z.string().min(1).max(4096), account: z.string().min(1).max(1024) });

/**
 * The end user's choice among the accounts a `several: choose` step found (the callback's choice
 * page): checked against the accounts found, from the browser that started the flow, once; then the
 * flow goes on as after the callback (later steps, a reconnect's same-account rule, saving). A
 * reconnect's choice of another account is refused before the choice is taken (the end user may
 * choose again).
 */
export async function completeAccountChoice(
  deps: ConnectDeps,
  rawBody: unknown,
  browserBinding: string | undefined,
): Promise<CallbackOutcome> {
  const body = validate(ChoiceBody, rawBody, 'body');
  const namespace = choiceNamespace(body.choice);
  const env = namespace ? environmentWithKey(deps.catalog, namespace) : undefined;
  if (!env)
    throw new LatchkeyError('invalid_input', 'invalid_account_choice', 'This choice is not valid. Start again from the application.');
  const startedAt = deps.clock.now();
  let seen: PendingChoice | undefined;
  const outcome: CallbackOutcome = { namespace };
  const lookupFlow = (flow: ChoiceFlow) => {
    const integration = deps.catalog.getIntegration(flow.namespace, flow.integration);
    const provider = integration && deps.catalog.getProvider(integration.spec.provider);
    if (!integration || !provider) throw new LatchkeyError('not_found', 'integration_not_found', 'The integration is no longer available.');
    return { integration, provider, name: integration.spec.displayName ?? provider.spec.displayName };
  };
  try {
    const { pending, chosen } = await takeAccountChoice(deps.flows, {
      handle: body.choice,
      account: body.account,
      browserBinding,
      secretKey: env.secretKey,
      nowMs: deps.clock.now(),
      check: (p, account) => {
        seen = p;
        const { provider, name } = lookupFlow(p.flow);
        if (p.flow.reconnect) refuseDifferentAccount(provider, p.flow, account.values, name, true);
      },
    });
    const flow = pending.flow;
    outcome.providerConfigKey = flow.integration;
    const { integration, provider, name } = lookupFlow(flow);
    const use: SessionUse = {
      namespace: flow.namespace,
      sid: flow.sid,
      integration: flow.integration,
      reconnect: Boolean(flow.reconnect),
      expiresAtMs: flow.exp * 1000,
    };
    const result = await completeOnce(deps, use, async () => {
      const connectionConfig = await providerValuesOf(deps, {
        state: flow,
        provider,
        credentials: pending.credentials,
        connectionConfig: { ...pending.config, ...chosen.values },
        name,
      });
      return saveAuthorization(deps, {
        namespace: flow.namespace,
        integration,
        provider,
        credentials: pending.credentials,
        connectionConfig,
        endUser: flow.endUser,
        reconnect: flow.reconnect,
        sid: flow.sid,
      });
    }).catch(async (err: unknown) => {
      // A later `several: choose` step: one more choice, from the same tokens.
      if (!(err instanceof AccountChoiceNeeded)) throw err;
      outcome.choice = await offerChoiceFrom(deps.flows, err, {
        flow,
        credentials: pending.credentials,
        name,
        secretKey: env.secretKey,
        nowMs: deps.clock.now(),
      });
      return undefined;
    });
    if (result) {
      outcome.result = result;
      logAttempt(deps, {
        namespace: flow.namespace,
        integration: flow.integration,
        endUserId: flow.endUser?.id,
        reconnect: flow.reconnect,
        step: 'account_choice',
        outcome: 'success',
        durationMs: deps.clock.now() - startedAt,
        messages: [`Authorized (${result.operation}) with the account the end user chose among ${pending.accounts.length}`],
        secrets: [String(pending.credentials.access_token ?? '')],
      });
    }
    return outcome;
  } catch (err) {
    if (!(err instanceof LatchkeyError)) throw err;
    if (seen && err.code !== 'account_choice_expired') {
      const flow = seen.flow;
      await logFailedAttempt(deps, {
        namespace: flow.namespace,
        integration: flow.integration,
        endUserId: flow.endUser?.id,
        reconnect: flow.reconnect,
        step: 'account_choice',
        error: err,
        durationMs: deps.clock.now() - startedAt,
        secrets: [String(seen.credentials.access_token ?? '')],
        onConnection: err.code !== 'session_already_used' && err.code !== 'invalid_account_choice',
      });
    }
    throw err;
  }
}

interface SaveInput {
  namespace: string;
  integration: IntegrationResource;
  provider: ProviderResource;
  credentials: StoredCredentials;
  connectionConfig: Record<string, string>;
  endUser: OpenSession['claims']['endUser'];
  reconnect?: OpenSession['claims']['reconnect'];
  /** The Connect session that asked (its connections are counted against its cap). */
  sid?: string;
}

/**
 * A new connection (fresh connection ID, end user from the session), or for a reconnect session new
 * credentials on the existing one (the connection service's re-authorization: same ID, metadata,
 * configuration, end user; the old refresh token kept when the provider sends none). Then the auth
 * webhook is queued.
 */
export async function saveAuthorization(deps: ConnectDeps, input: SaveInput): Promise<ConnectResult> {
  const { namespace, integration, provider, credentials } = input;
  let connectionId: string;
  let operation: 'creation' | 'override';
  let endUser: SaveInput['endUser'] | undefined = input.endUser;
  if (input.reconnect) {
    connectionId = input.reconnect.connectionId;
    operation = 'override';
    const saved = await reauthorize(deps, namespace, input.reconnect.integration, connectionId, credentials);
    if (!saved) throw new LatchkeyError('not_found', 'connection_not_found', 'The connection to re-authorize no longer exists.');
    endUser = { ...(saved.resource.spec.endUser ?? {}), ...input.endUser } as SaveInput['endUser'];
  } else {
    operation = 'creation';
    if (input.sid) await checkSessionQuota(deps.connectionScans, namespace, input.sid, deps.config.connectMaxConnectionsPerSession);
    const created = await createConnection(deps, {
      namespace,
      integration,
      provider,
      credentials,
      endUser: input.endUser,
      connectionConfig: input.connectionConfig,
      ...(input.sid ? { labels: { [SESSION_LABEL]: sessionLabelValue(input.sid) } } : {}),
    });
    connectionId = created.resource.spec.connectionId;
  }
  deps.logger.info({ namespace, integration: integration.metadata.name, operation }, 'end user authorized a connection');
  try {
    await enqueueAuthWebhook(deps, {
      namespace,
      operation,
      success: true,
      connectionId,
      providerConfigKey: integration.metadata.name,
      provider: provider.metadata.name,
      endUser,
    });
  } catch (err) {
    // Does not throw (a failed enqueue is retried in the background); kept as a last guard: the connection is saved.
    deps.logger.error({ namespace, err: (err as Error).message }, 'auth webhook could not be queued');
  }
  const env = environmentWithKey(deps.catalog, namespace)?.environment;
  return {
    providerConfigKey: integration.metadata.name,
    operation,
    ...(env?.spec.mode === 'development' ? { connectionId } : {}),
  };
}
