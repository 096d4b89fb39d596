import { randomBytes } from 'node:crypto';

/** What a log entry records; one entry per step a person may have to explain later (`access`: a ServiceAccount's request RBAC refused; `migration`: a stored object rewritten by `latchkey migrate`). */
export const OPERATIONS = ['authorization', 'refresh', 'import', 'deletion', 'webhook', 'proxy', 'migration', 'access'] as const;
export type Operation = (typeof OPERATIONS)[number];

export const OUTCOMES = ['success', 'failure'] as const;
export type Outcome = (typeof OUTCOMES)[number];

/** One durable operation log entry, as stored and as the REST API returns it. Messages are redacted before they get here. */
export interface OplogEntry {
  /** `<object>.<suffix>`: the object part says where the entry is stored, so a lookup by ID reads one object. */
  id: string;
  /** ISO 8601. */
  time: string;
  namespace: string;
  integration?: string;
  connectionId?: string;
  endUserId?: string;
  operation: Operation;
  /** The step within the operation, e.g. `start`, `callback`, `token_exchange`, `attempt 3`. */
  step?: string;
  outcome: Outcome;
  durationMs?: number;
  messages: string[];
}

/** Entries of attempts that have no connection (yet) live in the environment's ring under this prefix. */
export const ENVIRONMENT_PREFIX = 'environment';

/**
 * Entries of requests nobody authenticated (provider webhooks refused, unsigned handshakes) live in a
 * ring of their own under this prefix: however many such senders send, the environment's ring keeps
 * what the tenants' own actions wrote.
 */
export const UNVERIFIED_PREFIX = 'unverified';

/**
 * A new entry ID. The prefix is the connection's object name (a DNS label, no dots) or
 * {@link ENVIRONMENT_PREFIX}; the suffix starts with the time so IDs of one object sort by time.
 */
export function newEntryId(prefix: string, now: number): string {
  return `${prefix}.${now.toString(36).padStart(9, '0')}${randomBytes(6).toString('hex')}`;
}

const ID_PATTERN = /^([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)\.([a-z0-9]{9}[0-9a-f]{12})$/;

/** The storage prefix of an entry ID, or undefined when the ID is not one of ours. */
export function prefixOfId(id: string): string | undefined {
  return ID_PATTERN.exec(id)?.[1];
}

export function isEntryId(id: string): boolean {
  return ID_PATTERN.test(id);
}

/** Newest first; ties broken by ID so paging is stable. */
export function newestFirst(a: OplogEntry, b: OplogEntry): number {
  if (a.time !== b.time) return a.time < b.time ? 1 : -1;
  return a.id < b.id ? 1 : a.id > b.id ? -1 : 0;
}
