import { createHash } from 'node:crypto';

const MAX_NAME = 63;
const HASH_LEN = 10;

/**
 * The Kubernetes object name of a connection. A connection ID is any string and is unique only
 * within its integration, so the name is a readable slug of both plus a hash of the exact pair:
 * deterministic (the API server's uniqueness check stops two concurrent imports of the same
 * connection) and always a valid DNS label (so it can also be a label value).
 */
export function connectionObjectName(integration: string, connectionId: string): string {
  // Every fetch and proxied request looks its connection up by name: the hash and slugs are kept for
  // the names asked recently (a bounded memo, emptied when full).
  const key = `${integration.length}:${integration}${connectionId}`;
  const known = recentNames.get(key);
  if (known !== undefined) return known;
  const name = computeName(integration, connectionId);
  if (recentNames.size >= RECENT_NAMES_MAX) recentNames.clear();
  recentNames.set(key, name);
  return name;
}

const RECENT_NAMES_MAX = 10_000;
const recentNames = new Map<string, string>();

function computeName(integration: string, connectionId: string): string {
  const hash = createHash('sha256').update(integration).update('\0').update(connectionId).digest('hex').slice(0, HASH_LEN);
  const readable = `${slug(integration)}-${slug(connectionId)}`.replace(/-+/g, '-');
  const trimmed = readable.slice(0, MAX_NAME - HASH_LEN - 1).replace(/^-+|-+$/g, '');
  return `${trimmed || 'c'}-${hash}`;
}

function slug(s: string): string {
  return s
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, '-')
    .replace(/^-+|-+$/g, '');
}
