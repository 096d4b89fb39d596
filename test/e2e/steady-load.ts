/**
 * Steady REST traffic through the Service for the e2e suite: at a fixed rate, alternately a fetch
 * of a known connection (its credentials must come back) and an import of a new one; with OAuth
 * connections given, every fourth request fetches one of them instead (a server pod refreshes a
 * token about to expire, beside the controllers' own refreshes); with proxied connections given,
 * every eighth request is a proxied call instead of an import (the upstream decides whether the
 * credential it got is live: anything but a 200 fails). Every request
 * is recorded; a failed one keeps what failed (status and error code, or the socket error), never a
 * credential.
 */
export interface LoadOutcome {
  what: string;
  ok: boolean;
  detail: string;
  at: number;
  /** From sending to the answer (or the error), for the benchmark row; never asserted. */
  ms: number;
}

export interface SteadyLoad {
  outcomes: LoadOutcome[];
  /** Stops sending and waits for the requests in flight; returns every outcome. */
  stop(): Promise<LoadOutcome[]>;
}

export interface LoadTarget {
  url: string;
  secretKey: string;
  integration: string;
  /** A connection that exists: fetched on every other tick. */
  fetchConnectionId: string;
  /** Its credential, compared with what the fetch answers. */
  expectedApiKey: string;
  /** Prefix of the connections imported by the load (each tick's is unique). */
  importPrefix: string;
  /** OAuth connections fetched in turn on every fourth tick (an access token must come back). */
  oauth?: { integration: string; connectionIds: string[] };
  /** Connections called through the proxy in turn, at `path`, on every eighth tick (in place of an import). */
  proxy?: { integration: string; connectionIds: string[]; path: string };
}

const REQUEST_BOUND_MS = 10_000;

export function startSteadyLoad(target: LoadTarget, intervalMs: number): SteadyLoad {
  const outcomes: LoadOutcome[] = [];
  const inFlight = new Set<Promise<void>>();
  let tick = 0;
  const headers = { authorization: `Bearer ${target.secretKey}`, 'content-type': 'application/json' };
  const send = async (n: number) => {
    const oauthId =
      target.oauth?.connectionIds.length && n % 4 === 3
        ? target.oauth.connectionIds[(n >> 2) % target.oauth.connectionIds.length]
        : undefined;
    const proxyId =
      target.proxy?.connectionIds.length && n % 8 === 1
        ? target.proxy.connectionIds[(n >> 3) % target.proxy.connectionIds.length]
        : undefined;
    const fetching = n % 2 === 0;
    const what = oauthId
      ? `fetch ${oauthId}`
      : proxyId
        ? `proxy ${proxyId}`
        : fetching
          ? `fetch ${target.fetchConnectionId}`
          : `import ${target.importPrefix}-${n}`;
    const sent = Date.now();
    try {
      const res = proxyId
        ? await fetch(`${target.url}/proxy${target.proxy!.path}`, {
            headers: { authorization: headers.authorization, 'connection-id': proxyId, 'provider-config-key': target.proxy!.integration },
            signal: AbortSignal.timeout(REQUEST_BOUND_MS),
          })
        : oauthId
          ? await fetch(`${target.url}/connections/${oauthId}?provider_config_key=${target.oauth!.integration}`, {
              headers,
              signal: AbortSignal.timeout(REQUEST_BOUND_MS),
            })
          : fetching
            ? await fetch(`${target.url}/connections/${target.fetchConnectionId}?provider_config_key=${target.integration}`, {
                headers,
                signal: AbortSignal.timeout(REQUEST_BOUND_MS),
              })
            : await fetch(`${target.url}/connections`, {
                method: 'POST',
                headers,
                body: JSON.stringify({
                  provider_config_key: target.integration,
                  connection_id: `${target.importPrefix}-${n}`,
                  credentials: { type: 'API_KEY', apiKey: `key-${target.importPrefix}-${n}` },
                }),
                signal: AbortSignal.timeout(REQUEST_BOUND_MS),
              });
      const body = (await res.json().catch(() => undefined)) as
        { credentials?: { apiKey?: string; access_token?: string }; error?: { code?: string } } | undefined;
      const ok = proxyId
        ? res.status === 200
        : oauthId
          ? res.status === 200 && typeof body?.credentials?.access_token === 'string'
          : fetching
            ? res.status === 200 && body?.credentials?.apiKey === target.expectedApiKey
            : res.status === 201 || res.status === 200;
      outcomes.push({
        what,
        ok,
        detail: `${res.status}${body?.error?.code ? ` ${body.error.code}` : ''}`,
        at: Date.now(),
        ms: Date.now() - sent,
      });
    } catch (err) {
      const cause = (err as { cause?: { code?: string } }).cause?.code;
      outcomes.push({ what, ok: false, detail: cause ?? (err as Error).name, at: Date.now(), ms: Date.now() - sent });
    }
  };
  const timer = setInterval(() => {
    const p = send(tick++).finally(() => inFlight.delete(p));
    inFlight.add(p);
  }, intervalMs);
  return {
    outcomes,
    async stop() {
      clearInterval(timer);
      await Promise.all([...inFlight]);
      return outcomes;
    },
  };
}

/** The load both upgrade files run: fetches of the API key `first` of `keys`, imports under `prefix`, and fetches of the OAuth connections `oauthIds` of `oidc`. */
export function keysAndOidcLoad(url: string, secretKey: string, prefix: string, oauthIds: string[]): LoadTarget {
  return {
    url,
    secretKey,
    integration: 'keys',
    fetchConnectionId: 'first',
    expectedApiKey: 'key-first',
    importPrefix: prefix,
    oauth: { integration: 'oidc', connectionIds: oauthIds },
  };
}

/** Waits `settleMs` under the load, runs `change`, waits `settleMs` again; `finish` runs in any case. When the change began and ended. */
export async function timedChange(
  settleMs: number,
  change: () => Promise<unknown>,
  finish: () => Promise<unknown>,
): Promise<{ started: number; ended: number }> {
  try {
    await new Promise((r) => setTimeout(r, settleMs));
    const started = Date.now();
    await change();
    const ended = Date.now();
    await new Promise((r) => setTimeout(r, settleMs));
    return { started, ended };
  } finally {
    await finish();
  }
}
