/**
 * Webhook handshake windows and the secrets handshakes hand over (Asana's `X-Hook-Secret`), kept in
 * the Integration's client Secret so every server replica sees the same ones. A handshake is an
 * unauthenticated request: its secret is taken only while a webhook creation for that Integration
 * is in flight through Latchkey's proxy (a window), and kept only if that creation succeeded.
 * Every change is a compare-and-swap on the Secret (docs/provider-webhooks.md, "Asana").
 */
import { createHash, randomUUID } from 'node:crypto';
import { compareAndSwap } from './cas.js';
import { isNotFound } from './errors.js';
import type { V1Secret } from './kubernetes-client.js';
import type { StoreCaches } from './store-caches.js';

/** The key of the open window (one per Integration: the handshake names no creation, so one at a time). */
export const WINDOW_KEY = 'webhookHandshakeWindow';
/** Keys of the kept secrets: `handshakeSecret.<first 16 hex of the secret's SHA-256>`. */
export const HANDSHAKE_SECRET_PREFIX = 'handshakeSecret.';
/** Kept secrets per Integration; the oldest goes when a new one comes past it (its webhook is likely gone). */
export const MAX_HANDSHAKE_SECRETS = 20;

interface Window {
  id: string;
  connectionId: string;
  expiresAt: number;
  /** The secret the handshake handed over, kept if the creation succeeds. */
  secret?: string;
}

/** A kept handshake secret and the connection whose proxied call created its webhook. */
export interface HandshakeSecret {
  secret: string;
  connectionId: string;
  createdAt: number;
}

type SecretStore = Pick<StoreCaches, 'core' | 'referencedSecrets'>;

export class HandshakeWindows {
  constructor(private readonly store: SecretStore) {}

  /**
   * Opens the Integration's window for a creation by `connectionId`, until `expiresAt` at the latest.
   * Undefined when another creation's window is open (the caller answers 409), or the Secret is missing.
   */
  async open(namespace: string, secretName: string, connectionId: string, now: number, ttlMs: number): Promise<string | undefined> {
    const id = randomUUID();
    let opened = false;
    await this.update(namespace, secretName, (data) => {
      const current = windowOf(data);
      opened = !(current && current.expiresAt > now);
      if (!opened) return undefined;
      return { ...data, [WINDOW_KEY]: encode(JSON.stringify({ id, connectionId, expiresAt: now + ttlMs } satisfies Window)) };
    });
    return opened ? id : undefined;
  }

  /** Takes a handshake's secret if a window is open and has none yet; false otherwise (nothing stored). */
  async accept(namespace: string, secretName: string, secret: string, now: number): Promise<boolean> {
    let accepted = false;
    await this.update(namespace, secretName, (data) => {
      const current = windowOf(data);
      accepted = false;
      if (!current || current.expiresAt <= now || current.secret !== undefined) return undefined;
      accepted = true;
      return { ...data, [WINDOW_KEY]: encode(JSON.stringify({ ...current, secret })) };
    });
    return accepted;
  }

  /**
   * Closes the window `id` (not another creation's): keeps its secret if the creation succeeded,
   * drops it otherwise (a handshake that was not the provider's then leaves nothing behind).
   */
  async close(namespace: string, secretName: string, id: string, succeeded: boolean, now: number): Promise<boolean> {
    let kept = false;
    await this.update(namespace, secretName, (data) => {
      const current = windowOf(data);
      kept = false;
      if (!current || current.id !== id) return undefined;
      const next = { ...data };
      delete next[WINDOW_KEY];
      kept = succeeded && current.secret !== undefined;
      if (kept) {
        const key = `${HANDSHAKE_SECRET_PREFIX}${createHash('sha256').update(current.secret!).digest('hex').slice(0, 16)}`;
        next[key] = encode(
          JSON.stringify({ secret: current.secret!, connectionId: current.connectionId, createdAt: now } satisfies HandshakeSecret),
        );
        const stored = Object.keys(next)
          .filter((k) => k.startsWith(HANDSHAKE_SECRET_PREFIX))
          .map((k) => ({ k, createdAt: parseSecret(next[k])?.createdAt ?? 0 }))
          .sort((a, b) => a.createdAt - b.createdAt);
        for (const old of stored.slice(0, Math.max(0, stored.length - MAX_HANDSHAKE_SECRETS))) delete next[old.k];
      }
      return next;
    });
    return kept;
  }

  private async update(namespace: string, name: string, change: (data: Record<string, string>) => Record<string, string> | undefined) {
    const core = this.store.core;
    try {
      const written = await compareAndSwap<V1Secret>({
        // The authoritative read every time: a window another replica opened a moment ago counts.
        readFresh: () => core.readNamespacedSecret({ namespace, name }),
        mutate: (secret) => {
          const data = change(secret.data ?? {});
          return data ? { ...secret, data } : undefined;
        },
        write: (next) => core.replaceNamespacedSecret({ namespace, name, body: next }),
        what: `webhook handshake window of Secret ${namespace}/${name}`,
      });
      this.store.referencedSecrets.remember(written);
    } catch (err) {
      if (!isNotFound(err)) throw err;
      change({}); // a missing Secret: nothing opened, nothing accepted
    }
  }
}

/** The handshake secrets a (cached) Secret keeps, newest first. */
export function handshakeSecrets(secret: V1Secret | undefined): HandshakeSecret[] {
  return Object.entries(secret?.data ?? {})
    .filter(([k]) => k.startsWith(HANDSHAKE_SECRET_PREFIX))
    .map(([, v]) => parseSecret(v))
    .filter((s): s is HandshakeSecret => s !== undefined)
    .sort((a, b) => b.createdAt - a.createdAt)
    .slice(0, MAX_HANDSHAKE_SECRETS);
}

function windowOf(data: Record<string, string>): Window | undefined {
  const parsed = parse(data[WINDOW_KEY]) as Partial<Window> | undefined;
  return parsed && typeof parsed.id === 'string' && typeof parsed.connectionId === 'string' && typeof parsed.expiresAt === 'number'
    ? (parsed as Window)
    : undefined;
}

function parseSecret(value: string | undefined): HandshakeSecret | undefined {
  const parsed = parse(value) as Partial<HandshakeSecret> | undefined;
  return parsed && typeof parsed.secret === 'string' && typeof parsed.connectionId === 'string' ? (parsed as HandshakeSecret) : undefined;
}

function parse(value: string | undefined): unknown {
  if (!value) return undefined;
  try {
    return JSON.parse(Buffer.from(value, 'base64').toString('utf8')) as unknown;
  } catch {
    return undefined;
  }
}

const encode = (text: string) => Buffer.from(text).toString('base64');
