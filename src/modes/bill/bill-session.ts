/**
 * Auth mode BILL: Bill.com's v3 API signs in with a user name, password, organization ID and
 * developer key (`POST {tokenUrl}`, JSON `{username, password, organizationId, devKey}`) and answers
 * a `sessionId`. Every API call then sends the headers `devKey` and `sessionId`. A session ends after
 * 35 minutes without an API call; Latchkey cannot see every call made with it, so it counts the
 * session as ending 35 minutes after sign-in and signs in again before that (the refresher's margin).
 */
import { z } from 'zod';
import { fillProviderUrl } from '../../catalog/connection-config.js';
import type { BillCredentials } from '../../domain/credentials.js';
import { LatchkeyError } from '../../domain/errors.js';
import type { StoredCredentials } from '../../k8s/store.js';
import { CredentialExchangeError, postForJson, renewByExchange, type ExchangeCall } from '../shared/credential-exchange.js';
import type { RefreshStrategy } from '../../auth/refresh/strategies.js';

/** Bill.com: "If your API session is inactive for 35 minutes, the session expires." */
export const BILL_SESSION_IDLE_SECONDS = 35 * 60;

/** The sign-in the end user gives (import and Connect UI form). */
export const BillSignIn = z.strictObject({
  username: z.string().min(1).max(320),
  password: z.string().min(1).max(1024),
  organization_id: z.string().min(1).max(64),
  dev_key: z.string().min(1).max(256),
});
export type BillSignIn = z.infer<typeof BillSignIn>;

export interface BillLoginInput extends ExchangeCall {
  signIn: BillSignIn;
}

/** Signs in; returns the credentials to store (sign-in, session, its end). Throws {@link CredentialExchangeError}. */
export async function billLogin(input: BillLoginInput): Promise<BillCredentials> {
  const spec = input.provider.spec;
  if (!spec.tokenUrl)
    throw new CredentialExchangeError('misconfigured', `provider ${input.provider.metadata.name} has no tokenUrl (the login URL)`);
  const url = fillProviderUrl(spec, spec.tokenUrl, input.connectionConfig);
  const s = input.signIn;
  const answer = await postForJson({
    url,
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ username: s.username, password: s.password, organizationId: s.organization_id, devKey: s.dev_key }),
    fetch: input.fetch,
    timeoutSeconds: input.timeoutSeconds,
    now: input.now,
    what: `${spec.displayName}'s login`,
  });
  const sessionId = answer.sessionId;
  if (typeof sessionId !== 'string' || sessionId.length === 0) {
    throw new CredentialExchangeError('misconfigured', `${spec.displayName}'s login answered without a sessionId`);
  }
  return {
    type: 'BILL',
    ...s,
    session_id: sessionId,
    ...(typeof answer.userId === 'string' ? { user_id: answer.userId } : {}),
    expires_at: new Date(input.now + BILL_SESSION_IDLE_SECONDS * 1000).toISOString(),
  };
}

/** The sign-in part of stored BILL credentials. */
export function billSignInOf(credentials: Record<string, unknown>): BillSignIn | undefined {
  const parsed = BillSignIn.safeParse({
    username: credentials.username,
    password: credentials.password,
    organization_id: credentials.organization_id,
    dev_key: credentials.dev_key,
  });
  return parsed.success ? parsed.data : undefined;
}

/** A sign-in given at import or in a form, checked: a 400 naming the fields. */
export function checkBillSignIn(given: Record<string, unknown>, pathPrefix: string): BillSignIn {
  const { type: _type, ...rest } = given;
  const parsed = BillSignIn.safeParse(rest);
  if (parsed.success) return parsed.data;
  const errors = parsed.error.issues.map((i) => ({
    path: [pathPrefix, ...i.path.map(String), ...((i as { keys?: string[] }).keys ?? [])].join('.'),
    message: i.code === 'unrecognized_keys' ? 'not a Bill.com sign-in field' : 'required',
    code: i.code === 'unrecognized_keys' ? 'credentials_type_mismatch' : 'missing_credentials',
  }));
  throw new LatchkeyError(
    'invalid_input',
    errors[0]!.code,
    `Bill.com connections take username, password, organization_id and dev_key: ${errors.map((e) => `${e.path.split('.').pop()} ${e.message}`).join('; ')}`,
    { errors },
  );
}

/** The headers Bill.com wants on every API call (BILL credentials). */
export function billProxyHeaders(credentials: StoredCredentials): Record<string, string> {
  const { dev_key, session_id } = credentials;
  if (typeof dev_key !== 'string' || typeof session_id !== 'string' || !session_id) {
    throw new LatchkeyError('invalid_input', 'missing_credentials', 'The connection has no Bill.com session');
  }
  return { devkey: dev_key, sessionid: session_id };
}

/** BILL: sign in again with the stored sign-in, before the session lapses (renewed ahead by the controller). */
export const billSessionStrategy: RefreshStrategy = {
  canRefresh: (c) => billSignInOf(c) !== undefined,
  refresh: (input) => renewByExchange(input, (call) => billLogin({ ...call, signIn: billSignInOf(input.connection.credentials)! })),
};
