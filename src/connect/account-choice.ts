/**
 * An account choice the end user has yet to make: a `several: choose` post-connection step found
 * several accounts for one grant (Atlassian sites, Xero organisations). The new tokens and the accounts
 * found are held in the cluster (src/k8s/flow-records.ts: one Secret per session and integration, a new
 * one replacing the old, expiring with the session or after CHOICE_TTL_MS), never in the browser; the
 * browser gets a sealed handle and the accounts' names and URLs. The choice is checked against the
 * accounts found and must come from the browser that started the flow; it is taken once.
 */
import { randomBytes } from 'node:crypto';
import { browserBindingMatches, type FlowState } from '../auth/flow-state.js';
import type { AccountChoiceNeeded, AccountOption } from '../auth/post-connection.js';
import { seal, sealedNamespace, unseal } from '../auth/sealed-values.js';
import { LatchkeyError } from '../domain/errors.js';
import type { FlowRecords } from '../k8s/flow-records.js';
import type { StoredCredentials } from '../k8s/store.js';
import type { AccountChoiceView } from './wire.js';

/** How long a choice waits at most (the session's expiry may come sooner). */
export const CHOICE_TTL_MS = 10 * 60 * 1000;
const PREFIX = 'lkc1';
const PURPOSE = 'account-choice';

/** The flow a pending choice continues: the callback's sealed state, less what is of no use after it. */
export type ChoiceFlow = Pick<
  FlowState,
  'namespace' | 'sid' | 'fid' | 'mode' | 'integration' | 'endUser' | 'reconnect' | 'connectionConfig' | 'bh' | 'exp'
>;

/** What the cluster keeps until the end user chooses. */
export interface PendingChoice {
  cid: string;
  flow: ChoiceFlow;
  credentials: StoredCredentials;
  /** The configuration the steps before the choice gave. */
  config: Record<string, string>;
  /** The configuration key whose value names an account. */
  key: string;
  accounts: AccountOption[];
}

/** The handle the browser holds: sealed (no token in it), naming the session, the integration and this choice. */
interface ChoiceHandle {
  namespace: string;
  sid: string;
  integration: string;
  cid: string;
  exp: number;
}

const keyOf = (sid: string, integration: string) => `choice/${sid}/${integration}`;

export interface OfferInput {
  flow: ChoiceFlow;
  credentials: StoredCredentials;
  config: Record<string, string>;
  key: string;
  accounts: AccountOption[];
  /** The integration's name as the end user knows it. */
  name: string;
  secretKey: string;
  nowMs: number;
}

/** {@link offerAccountChoice} for the accounts, key and values a step's refusal to pick one names. */
export function offerChoiceFrom(
  flows: FlowRecords,
  needed: AccountChoiceNeeded,
  input: Omit<OfferInput, 'config' | 'key' | 'accounts'>,
): Promise<AccountChoiceView> {
  return offerAccountChoice(flows, { ...input, config: needed.config, key: needed.key, accounts: needed.accounts });
}

/**
 * Keeps the choice in the cluster and returns what the choice page shows. A reconnect preselects the
 * connection's current account (the one whose value is the stored one).
 */
export async function offerAccountChoice(flows: FlowRecords, input: OfferInput): Promise<AccountChoiceView> {
  const { flow } = input;
  const cid = randomBytes(16).toString('base64url');
  const expiresAtMs = Math.min(flow.exp * 1000, input.nowMs + CHOICE_TTL_MS);
  const pending: PendingChoice = {
    cid,
    flow: {
      namespace: flow.namespace,
      sid: flow.sid,
      fid: flow.fid,
      mode: flow.mode,
      integration: flow.integration,
      endUser: flow.endUser,
      ...(flow.reconnect ? { reconnect: flow.reconnect } : {}),
      connectionConfig: flow.connectionConfig,
      bh: flow.bh,
      exp: flow.exp,
    },
    credentials: input.credentials,
    config: input.config,
    key: input.key,
    accounts: input.accounts,
  };
  await flows.putPendingChoice(flow.namespace, keyOf(flow.sid, flow.integration), JSON.stringify(pending), expiresAtMs);
  const handle: ChoiceHandle = {
    namespace: flow.namespace,
    sid: flow.sid,
    integration: flow.integration,
    cid,
    exp: Math.floor(expiresAtMs / 1000),
  };
  const current = flow.reconnect ? flow.connectionConfig[input.key] : undefined;
  return {
    choice: seal(handle, input.secretKey, PURPOSE, PREFIX),
    providerConfigKey: flow.integration,
    name: input.name,
    accounts: input.accounts.map((a) => ({ value: a.value, label: a.label, ...(a.url ? { url: a.url } : {}) })),
    ...(current !== undefined && input.accounts.some((a) => a.value === current) ? { selected: current } : {}),
  };
}

/** The namespace a handle claims (unverified: it selects the Environment key that verifies it). */
export function choiceNamespace(handle: string): string | undefined {
  return sealedNamespace(handle, PREFIX);
}

const expired = () =>
  new LatchkeyError(
    'invalid_input',
    'account_choice_expired',
    'This choice is no longer available: it was made already, or it waited too long. Start again from the application.',
  );

/**
 * The pending choice `handle` names, its choice `account` checked against the accounts found and the
 * browser against the one that started the flow; then taken (deleted), so it is made once. A refused
 * account leaves the choice pending (the end user may choose again).
 */
export async function takeAccountChoice(
  flows: FlowRecords,
  input: {
    handle: string;
    account: string;
    browserBinding: string | undefined;
    secretKey: string;
    nowMs: number;
    /** What else refuses the choice before it is taken (a reconnect's other account): throws. */
    check?: (pending: PendingChoice, chosen: AccountOption) => void;
  },
): Promise<{ pending: PendingChoice; chosen: AccountOption }> {
  const opened = unseal<ChoiceHandle>(input.handle, input.secretKey, PURPOSE, PREFIX, input.nowMs);
  if (!opened.ok) {
    if (opened.reason === 'expired') throw expired();
    throw new LatchkeyError('invalid_input', 'invalid_account_choice', 'This choice is not valid. Start again from the application.');
  }
  const h = opened.value;
  const key = keyOf(h.sid, h.integration);
  const stored = await flows.readPendingChoice(h.namespace, key);
  if (!stored || stored.expiresAtMs <= input.nowMs) throw expired();
  let pending: PendingChoice;
  try {
    pending = JSON.parse(stored.json) as PendingChoice;
  } catch {
    throw expired();
  }
  // A newer choice of the same session and integration replaced the one this handle names.
  if (pending.cid !== h.cid) throw expired();
  if (!browserBindingMatches(pending.flow as FlowState, input.browserBinding)) {
    throw new LatchkeyError(
      'forbidden',
      'browser_mismatch',
      'This authorization was started in another browser. Please start again from the application, in this browser.',
    );
  }
  const chosen = pending.accounts.find((a) => a.value === input.account);
  if (!chosen) {
    throw new LatchkeyError('invalid_input', 'invalid_account_choice', 'Choose one of the accounts listed.', {
      errors: [{ path: 'account', message: 'not one of the accounts offered' }],
    });
  }
  input.check?.(pending, chosen);
  if (!(await flows.takePendingChoice(h.namespace, key, stored.uid))) throw expired();
  return { pending, chosen };
}
