/**
 * The connection configuration values a provider returns (`connectionConfiguration[].from`): taken from
 * the callback's query, the token answer, and the Provider's `postConnection` steps (requests made with
 * the new access token). Every value is checked by its key's rule before it is used in a URL or stored;
 * a refused value or a failed step is a clear error and nothing is stored. Each step goes through the
 * context's guarded fetch (egress rules, bounded answer), has a time limit, and is one operation log
 * entry (without the token). A step whose list holds several accounts refuses them, takes the first, or
 * (`several: choose`) throws {@link AccountChoiceNeeded} for the caller to ask whoever can choose.
 */
import type { AppContext } from '../context/app-context.js';
import {
  checkConnectionConfig,
  configFields,
  configValueProblem,
  fillProviderUrl,
  providerUrlTemplate,
} from '../catalog/connection-config.js';
import { fillTemplate, MissingTemplateValueError } from '../catalog/template.js';
import { LatchkeyError, findAnswerTooLarge, isTimeout } from '../domain/errors.js';
import { readAnswerText } from '../egress/bounded-body.js';
import type { ConnectionConfigField, PostConnectionStep, ProviderResource, ProviderSpec } from '../k8s/resources.js';
import type { Operation } from '../oplog/entry.js';
import { providerText } from '../oplog/redact.js';
import { isRetryableStatus } from '../domain/retry.js';
import { configValue, valueAt, valuesFromAnswers } from './provider-answers.js';
import { RefreshError } from './refresh/errors.js';

const DEFAULT_TIMEOUT_SECONDS = 10;

/** Where each step's operation log entry goes. */
export interface StepLog {
  namespace: string;
  operation: Extract<Operation, 'authorization' | 'import' | 'refresh'>;
  integration: string;
  endUserId?: string;
  connectionId?: string;
  connection?: { name: string; uid?: string };
}

/** A value the provider returned broke its key's rule, or was missing: the provider's answer is at fault (502). */
function refusedValue(spec: ProviderSpec, message: string): LatchkeyError {
  return new LatchkeyError(
    'upstream',
    'provider_value_refused',
    `${spec.displayName} returned a connection value Latchkey cannot use: ${message}.`,
  );
}

/**
 * A step failed: the end user reads what to do (never the step's name: the operation log has the
 * details, `errors` too for an application's import).
 */
function stepFailed(spec: ProviderSpec, step: string, message: string, shown?: string, status?: number): LatchkeyError {
  return new LatchkeyError(
    'upstream',
    'post_connection_failed',
    `${spec.displayName} did not give the details of the account just authorized${shown ? ` (${shown})` : ''}. Please try again; if it happens again, contact the application's support.`,
    // The status the step was answered (a refresh's login classifies its failure by it).
    { errors: [{ path: `postConnection.steps.${step}`, message }], ...(status !== undefined ? { cause: { status } } : {}) },
  );
}

/** Several accounts where the Provider connects one (`several: refuse`): the end user can authorize one. */
function severalRefused(spec: ProviderSpec, step: string, count: number): LatchkeyError {
  return new LatchkeyError(
    'upstream',
    'several_accounts',
    `This ${spec.displayName} authorization gives access to ${count} accounts, and only one can be connected at a time. Start again and give access to the one account you want to connect.`,
    { errors: [{ path: `postConnection.steps.${step}`, message: `${count} accounts, several: refuse` }] },
  );
}

/** The most accounts a `several: choose` step offers (a longer list fails the step: the choice is held server-side, bounded). */
export const MAX_ACCOUNT_CHOICES = 100;
const MAX_LABEL = 120;
const MAX_URL = 300;

/** One account a `several: choose` step found: what the end user sees, and the configuration values it gives. */
export interface AccountOption {
  /** The value of the step's first configuration key (the account's ID): what the end user's choice names. */
  value: string;
  /** The item's `accountLabel` as the provider returns it (else the value). */
  label: string;
  /** The item's `accountUrl` as the provider returns it, when it is an https URL. */
  url?: string;
  /** The configuration values this account gives, each checked by its key's rule. */
  values: Record<string, string>;
}

/**
 * A `several: choose` step found several accounts: the caller asks the end user (the Connect UI) or
 * the application (an import: 400 naming the key). Carries the accounts and the configuration so far;
 * the flow resumes with {@link withProviderValues} given the chosen account's values.
 */
export class AccountChoiceNeeded extends LatchkeyError {
  constructor(
    readonly step: string,
    readonly key: string,
    readonly accounts: AccountOption[],
    readonly config: Record<string, string>,
    displayName: string,
  ) {
    super(
      'invalid_input',
      'account_choice_needed',
      `This ${displayName} authorization gives access to ${accounts.length} accounts: say which one to connect in connection_config.${key}.`,
      {
        errors: [
          {
            path: `connection_config.${key}`,
            message: `one of ${accounts.map((a) => `"${a.value}" (${a.label})`).join(', ')}`,
          },
        ],
      },
    );
  }
}

/** Checks values taken from the provider by their keys' rules; returns them trimmed. */
function checked(spec: ProviderSpec, values: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(values)) {
    const problem = configValueProblem(spec, name, value);
    if (problem) throw refusedValue(spec, problem);
    out[name] = value.trim();
  }
  return out;
}

/**
 * The callback's values (`from: { callback }`), checked; they come before the token request (a token
 * URL may use them). Keys the configuration has already keep their values.
 */
export function callbackValues(spec: ProviderSpec, query: URLSearchParams, given: Record<string, unknown>): Record<string, string> {
  const values = checked(
    spec,
    valuesFromAnswers({ connectionConfiguration: spec.connectionConfiguration }, { callbackQuery: query }, given),
  );
  // A required one the callback lacks (or that its `match` refuses) is the provider's answer at fault, before the token request.
  for (const f of spec.connectionConfiguration ?? []) {
    if (typeof f === 'string' || !f.from?.callback || f.required === false || f.default !== undefined || !isEmpty(given[f.name])) continue;
    if (values[f.name] === undefined) throw refusedValue(spec, `"${f.name}" is missing or not in the expected form`);
  }
  return values;
}

export interface ProviderValuesInput {
  provider: ProviderResource;
  accessToken: string;
  /** The token answer as the provider sent it (the credentials' `raw`). */
  tokenAnswer?: Record<string, unknown>;
  /** The configuration so far (typed or given by the caller, and the callback's values): these keep their values. */
  connectionConfig: Record<string, unknown>;
  log: StepLog;
  /** false: the caller checks the whole configuration itself (an import: a key the caller left out is its 400). */
  checkAll?: boolean;
  /** Given the session token of a `sessionToken` step's answer (it goes in the credentials, never in configuration). */
  onSessionToken?: (token: string) => void;
}

/** The Provider's step whose answer holds a session token (Bullhorn's login), if it has one. */
export function sessionStep(spec: ProviderSpec): PostConnectionStep | undefined {
  return spec.postConnection?.steps.find((s) => s.sessionToken !== undefined);
}

/**
 * The whole configuration of a new connection: the given values, then the token answer's, then the
 * post-connection steps' (run when a value they give is missing), each checked by its key's rule, and
 * the result checked as a whole (required keys, URL hosts). Throws an `upstream` LatchkeyError naming
 * the key or the step; never includes a value or the token.
 */
export async function withProviderValues(
  ctx: Pick<AppContext, 'fetch' | 'oplog' | 'clock'>,
  input: ProviderValuesInput,
): Promise<Record<string, string>> {
  const spec = input.provider.spec;
  const config: Record<string, unknown> = { ...input.connectionConfig };
  Object.assign(config, checked(spec, valuesFromAnswers(spec, { tokenAnswer: input.tokenAnswer }, config)));
  const stepKeys = (spec.connectionConfiguration ?? []).flatMap((f) => (typeof f !== 'string' && f.from?.step ? [f] : []));
  // A step's URL may use a key the end user left at its default (Bullhorn's data centre).
  for (const f of configFields(spec)) if (f.default !== undefined && isEmpty(config[f.name])) config[f.name] = f.default;
  const session = sessionStep(spec);
  if (spec.postConnection && (session || stepKeys.some((f) => isEmpty(config[f.name])))) {
    for (const step of spec.postConnection.steps) {
      const wanted = stepKeys.filter((f) => f.from!.step === step.name && isEmpty(config[f.name]));
      // A session step runs every time: each new access token logs in again.
      if (!wanted.length && step !== session) continue;
      const found = await runStep(ctx, input, step, config);
      if ('choices' in found) {
        const accounts = accountOptions(spec, step, wanted, found.choices);
        throw new AccountChoiceNeeded(step.name, wanted[0]!.name, accounts, stringValues(config), spec.displayName);
      }
      if (step === session) {
        const token = sessionTokenOf(spec, step, found.picked);
        input.onSessionToken?.(token);
      }
      Object.assign(config, itemValues(spec, step.name, wanted, found.picked));
    }
  }
  if (input.checkAll === false) return stringValues(config);
  try {
    return stringValues(checkConnectionConfig(spec, config, { path: 'connection_config' }));
  } catch (err) {
    // A required key the provider did not return, or a URL its values point elsewhere: the provider's answer.
    if (err instanceof LatchkeyError && err.code === 'invalid_connection_config') {
      const e = refusedValue(spec, (err.errors ?? []).map((d) => d.message).join('; ') || err.message);
      throw err.errors ? new LatchkeyError(e.kind, e.code, e.message, { errors: err.errors }) : e;
    }
    throw err;
  }
}

/** The session token of a `sessionToken` step's answer: a non-empty string, else the step failed. */
function sessionTokenOf(spec: ProviderSpec, step: PostConnectionStep, answer: unknown): string {
  const token = valueAt(answer, step.sessionToken!);
  if (typeof token !== 'string' || token === '') throw stepFailed(spec, step.name, `its answer has no "${step.sessionToken}"`);
  return token;
}

export interface SessionRenewalInput {
  provider: ProviderResource;
  accessToken: string;
  /** The connection's stored configuration (the step's URL may use it). */
  connectionConfig: Record<string, unknown>;
  log: StepLog;
}

/** A session step run again: the new session token, and the configuration values its answer gives (each passing its key's rule). */
export interface RenewedSession {
  token: string;
  values: Record<string, string>;
}

/**
 * The session step run again with a new access token (after a refresh): the new session token, and the
 * values its answer gives again (Bullhorn's `restUrl`: the caller stores those that changed; one the answer
 * lacks or that breaks its key's rule is left out, the stored one kept). A failure is a classified
 * {@link RefreshError}: an answer a retry may change (none, a 5xx, 408, 429, an unusable body) transient,
 * any other refusal permanent (the end user authorizes again); its message never holds the token.
 */
export async function renewSession(
  ctx: Pick<AppContext, 'fetch' | 'oplog' | 'clock'>,
  input: SessionRenewalInput,
): Promise<RenewedSession> {
  const spec = input.provider.spec;
  const step = sessionStep(spec);
  if (!step) throw new Error(`provider ${input.provider.metadata.name} has no session step`);
  try {
    const found = await runStep(ctx, { ...input, checkAll: false }, step, { ...input.connectionConfig });
    if (!('picked' in found)) throw stepFailed(spec, step.name, 'a session step reads one object');
    const wanted = (spec.connectionConfiguration ?? []).flatMap((f) => (typeof f !== 'string' && f.from?.step === step.name ? [f] : []));
    return { token: sessionTokenOf(spec, step, found.picked), values: givenValues(spec, wanted, found.picked) };
  } catch (err) {
    throw renewalFailure(spec, step, err);
  }
}

/** What a failed session step after a refresh is, for the refresher. */
function renewalFailure(spec: ProviderSpec, step: PostConnectionStep, err: unknown): RefreshError {
  const detail = err instanceof LatchkeyError ? (err.errors?.[0]?.message ?? err.message) : 'it failed';
  const status = ((err as { cause?: { status?: unknown } }).cause ?? {}).status;
  const answered = typeof status === 'number' ? status : undefined;
  const permanent = answered !== undefined && answered < 500 && !isRetryableStatus(answered);
  const message = `${spec.displayName}'s session login after the token refresh failed (${spec.postConnection!.name}, step ${step.name}): ${detail}`;
  return new RefreshError(message, {
    permanent,
    code: permanent ? 'reauthorization_required' : 'provider_unavailable',
    ...(answered !== undefined ? { providerError: { status: answered } } : {}),
  });
}

/** The values an answer gives for the keys taken from its step; one missing or breaking its key's rule is left out. */
function givenValues(spec: ProviderSpec, wanted: ConnectionConfigField[], item: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  for (const f of wanted) {
    const value = configValue(valueAt(item, f.from!.path ?? ''), f.from!.as, f.from!.match);
    if (value !== undefined && configValueProblem(spec, f.name, value) === undefined) out[f.name] = value.trim();
  }
  return out;
}

/** The configuration values one account (a step's picked item) gives, each checked by its key's rule. */
function itemValues(spec: ProviderSpec, step: string, wanted: ConnectionConfigField[], item: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  for (const f of wanted) {
    const value = configValue(valueAt(item, f.from!.path ?? ''), f.from!.as, f.from!.match);
    if (value === undefined) throw stepFailed(spec, step, `its answer has no "${f.from!.path}" for "${f.name}"`);
    const problem = configValueProblem(spec, f.name, value);
    if (problem) throw refusedValue(spec, problem);
    out[f.name] = value.trim();
  }
  return out;
}

/** The accounts of a `several: choose` step, each with its values (an account the first one's ID repeats is left out). */
function accountOptions(spec: ProviderSpec, step: PostConnectionStep, wanted: ConnectionConfigField[], items: unknown[]): AccountOption[] {
  const out: AccountOption[] = [];
  const seen = new Set<string>();
  for (const item of items) {
    const values = itemValues(spec, step.name, wanted, item);
    const value = values[wanted[0]!.name]!;
    if (seen.has(value)) continue;
    seen.add(value);
    const label = step.accountLabel ? valueAt(item, step.accountLabel) : undefined;
    const url = step.accountUrl ? valueAt(item, step.accountUrl) : undefined;
    out.push({
      value,
      label: typeof label === 'string' && label.trim() ? label.trim().slice(0, MAX_LABEL) : value,
      ...(typeof url === 'string' && /^https:\/\/[^\s]+$/.test(url) && url.length <= MAX_URL ? { url } : {}),
      values,
    });
  }
  return out;
}

const ACCESS_TOKEN = '${accessToken}';

/** `${accessToken}` in a step URL's query, filled (encoded); anywhere else it is refused (it could move the host or path). */
function withAccessToken(url: string, token: string): string {
  const at = url.indexOf(ACCESS_TOKEN);
  if (at < 0) return url;
  const query = url.indexOf('?');
  if (query < 0 || at < query)
    throw new LatchkeyError('internal', 'integration_misconfigured', 'a step URL takes ${accessToken} in its query only');
  return url.replaceAll(ACCESS_TOKEN, encodeURIComponent(token));
}

function isEmpty(v: unknown): boolean {
  return v === undefined || v === null || v === '';
}

function stringValues(config: Record<string, unknown>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(config).flatMap(([k, v]) => (typeof v === 'string' || typeof v === 'number' ? [[k, String(v)]] : [])),
  );
}

/** One step: the request, its answer read bounded, and the account it picks (logged either way). */
async function runStep(
  ctx: Pick<AppContext, 'fetch' | 'oplog' | 'clock'>,
  input: ProviderValuesInput,
  step: PostConnectionStep,
  config: Record<string, unknown>,
): Promise<{ picked: unknown } | { choices: unknown[] }> {
  const spec = input.provider.spec;
  const started = ctx.clock.now();
  const method = step.method ?? 'GET';
  let where = `${method} ${step.url}`;
  const log = (outcome: 'success' | 'failure', message: string) =>
    ctx.oplog?.record({
      namespace: input.log.namespace,
      operation: input.log.operation,
      step: `post_connection ${step.name}`,
      outcome,
      integration: input.log.integration,
      endUserId: input.log.endUserId,
      connectionId: input.log.connectionId,
      connection: input.log.connection,
      durationMs: ctx.clock.now() - started,
      messages: [`${spec.postConnection!.name}: ${where}: ${message}`],
      secrets: [input.accessToken],
    });
  const fail = (message: string, error = stepFailed(spec, step.name, message)): never => {
    log('failure', message);
    throw error;
  };
  const template = providerUrlTemplate(spec, step.url);
  if (!template) return fail("a relative URL needs the provider's proxy.baseUrl");
  let url: string;
  let headers: Headers;
  try {
    url = withAccessToken(fillProviderUrl(spec, template, config), input.accessToken);
    const given = step.headers ?? { Authorization: 'Bearer ${accessToken}' };
    headers = new Headers({ accept: 'application/json', ...(step.body !== undefined ? { 'content-type': 'application/json' } : {}) });
    for (const [name, value] of Object.entries(given)) {
      headers.set(name, fillTemplate(value.replaceAll('${accessToken}', input.accessToken), config, { encode: false }));
    }
  } catch (err) {
    if (err instanceof MissingTemplateValueError)
      return fail(`it needs ${err.keys.map((k) => `"${k}"`).join(', ')}, which no earlier answer gave`);
    if (err instanceof LatchkeyError) return fail(err.message);
    return fail('its headers are not valid');
  }
  const target = new URL(url);
  where = `${method} ${target.origin}${target.pathname}`;
  let status: number;
  let text: string;
  try {
    const res = await ctx.fetch(url, {
      method,
      headers,
      ...(step.body !== undefined ? { body: step.body } : {}),
      redirect: 'manual',
      signal: AbortSignal.timeout((step.timeoutSeconds ?? DEFAULT_TIMEOUT_SECONDS) * 1000),
    });
    status = res.status;
    text = await readAnswerText(res);
  } catch (err) {
    const tooLarge = findAnswerTooLarge(err);
    if (tooLarge) return fail(tooLarge.message, stepFailed(spec, step.name, tooLarge.message, tooLarge.message.replace(/\.$/, '')));
    return fail(
      isTimeout(err)
        ? 'no answer in time'
        : `the provider could not be reached (${providerText((err as Error)?.message ?? String(err), [input.accessToken], 200)})`,
    );
  }
  if (status < 200 || status > 299) {
    const message = `answered ${status}${text ? ` (${providerText(text, [input.accessToken], 200)})` : ''}`;
    return fail(message, stepFailed(spec, step.name, message, undefined, status));
  }
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return fail(`answered ${status} with a body that is not JSON`);
  }
  let picked: unknown = body;
  let note = '';
  if (step.items !== undefined) {
    const list = valueAt(body, step.items);
    if (!Array.isArray(list)) return fail(`its answer has no list at "${step.items}"`);
    if (list.length === 0) return fail('the authorization gives access to no account');
    if (step.pick) {
      const { path, equals } = step.pick;
      const index = list.findIndex((item) => valueAt(item, path) === equals);
      if (index < 0) return fail(`none of its ${list.length} accounts has ${path} = ${JSON.stringify(equals)}`);
      picked = list[index];
      note = ` (${list.length} accounts, took the one with ${path} = ${JSON.stringify(equals)})`;
    } else {
      const several = step.several ?? 'refuse';
      if (list.length > 1 && several === 'refuse') {
        return fail(
          `the authorization gives access to ${list.length} accounts, and this provider connects one at a time`,
          severalRefused(spec, step.name, list.length),
        );
      }
      if (list.length > 1 && several === 'choose') {
        if (list.length > MAX_ACCOUNT_CHOICES)
          return fail(
            `the authorization gives access to ${list.length} accounts, more than the ${MAX_ACCOUNT_CHOICES} offered to choose from`,
          );
        log('success', `answered ${status} (${list.length} accounts, to choose from)`);
        return { choices: list };
      }
      picked = list[0];
      note = list.length > 1 ? ` (${list.length} accounts, took the first)` : ' (one account)';
    }
  }
  log('success', `answered ${status}${note}`);
  return { picked };
}
