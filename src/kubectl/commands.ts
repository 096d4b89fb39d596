/**
 * The commands of `kubectl latchkey`, each given the client (the person's kubeconfig and RBAC) and
 * where to write. Nothing here holds or asks for an Environment's secret key.
 */
import type { PluginClient } from '../k8s/plugin-client.js';
import { LatchkeyError } from '../domain/errors.js';
import { ANNOTATIONS } from '../k8s/resources.js';
import { parseRefreshRequestRecord, type RefreshRequestRecord } from '../domain/refresh-request.js';
import type { PluginArgs } from './args.js';
import { renderStatus, statusReport } from './status.js';
import { BINDINGS_NOT_INSTALLED, renderBindings, renderLog } from './views.js';

export interface PluginIo {
  out: (text: string) => void;
  err: (text: string) => void;
  now: () => number;
  sleep: (ms: number) => Promise<void>;
  fetch: typeof fetch;
}

type Client = Pick<
  PluginClient,
  'namespace' | 'listConnections' | 'getConnection' | 'requestRefresh' | 'connectionLog' | 'listBindings' | 'bearerToken'
>;

/** A refusal the person can act on: printed as it is, exit code 1. */
const refusal = (message: string) => new LatchkeyError('invalid_input', 'kubectl_latchkey', message);

const json = (value: unknown) => `${JSON.stringify(value, null, 2)}\n`;

/** Runs one command; the exit code. */
export async function runCommand(args: PluginArgs, client: Client, io: PluginIo): Promise<number> {
  switch (args.command) {
    case 'status':
      return status(args, client, io);
    case 'refresh':
      return refresh(args, client, io);
    case 'logs':
      return logs(args, client, io);
    case 'bindings':
      return bindings(args, client, io);
    case 'connect-link':
      return connectLink(args, client, io);
  }
}

async function status(args: PluginArgs, client: Client, io: PluginIo): Promise<number> {
  const namespace = args.allNamespaces ? undefined : client.namespace;
  const report = statusReport(await client.listConnections(namespace), io.now(), args.expiringWithinMs);
  io.out(
    args.output === 'json'
      ? json({ namespace: namespace ?? null, ...report })
      : renderStatus(report, { now: io.now(), allNamespaces: args.allNamespaces, expiringWithinMs: args.expiringWithinMs }),
  );
  return 0;
}

async function connectionNamed(client: Client, name: string) {
  const connection = await client.getConnection(client.namespace, name);
  if (!connection)
    throw refusal(
      `connection "${name}" not found in namespace "${client.namespace}" (the Connection's object name, as \`kubectl get connections\` shows it)`,
    );
  return connection;
}

/** Outcomes that mean the connection's token is as fresh as the request asked. */
const SUCCEEDED = new Set(['Refreshed', 'AlreadyRefreshed']);

async function refresh(args: PluginArgs, client: Client, io: PluginIo): Promise<number> {
  const name = args.target!;
  await connectionNamed(client, name);
  const requestedAt = new Date(io.now()).toISOString();
  await client.requestRefresh(client.namespace, name, requestedAt);
  if (!args.wait) {
    io.out(
      args.output === 'json'
        ? json({ connection: name, namespace: client.namespace, requestedAt })
        : `connection/${name} refresh requested at ${requestedAt}\n`,
    );
    return 0;
  }
  const deadline = io.now() + args.timeoutMs;
  let record: RefreshRequestRecord | undefined;
  for (;;) {
    const current = await client.getConnection(client.namespace, name);
    if (!current) throw refusal(`connection "${name}" was deleted while its refresh was requested`);
    const r = parseRefreshRequestRecord(current.metadata.annotations?.[ANNOTATIONS.refreshRequest]);
    // Ours, or a later request (someone asked again meanwhile) whose refresh covers ours.
    if (r && r.outcome !== 'InProgress' && (r.requestedAt === requestedAt || Date.parse(r.requestedAt) >= Date.parse(requestedAt))) {
      record = r;
      break;
    }
    if (io.now() >= deadline) break;
    await io.sleep(Math.min(500, Math.max(0, deadline - io.now())));
  }
  if (!record) {
    const message =
      `no answer from the controller within ${Math.round(args.timeoutMs / 1000)}s (is the Latchkey controller running?); ` +
      'the request stays on the Connection and is answered when the controller sees it';
    if (args.output === 'json') io.out(json({ connection: name, namespace: client.namespace, requestedAt, outcome: 'Pending', message }));
    else io.err(`kubectl latchkey: ${message}\n`);
    return 1;
  }
  const ok = SUCCEEDED.has(record.outcome);
  if (args.output === 'json') io.out(json({ connection: name, namespace: client.namespace, ...record }));
  else (ok ? io.out : io.err)(`connection/${name} ${record.outcome}: ${record.message ?? ''}\n`);
  return ok ? 0 : 1;
}

async function logs(args: PluginArgs, client: Client, io: PluginIo): Promise<number> {
  const connection = await connectionNamed(client, args.target!);
  const entries = await client.connectionLog(connection);
  io.out(
    args.output === 'json' ? json({ connection: connection.metadata.name, namespace: client.namespace, entries }) : renderLog(entries),
  );
  return 0;
}

async function bindings(args: PluginArgs, client: Client, io: PluginIo): Promise<number> {
  const namespace = args.allNamespaces ? undefined : client.namespace;
  const found = await client.listBindings(namespace);
  if (!found.installed) {
    io.err(`kubectl latchkey: ${BINDINGS_NOT_INSTALLED}\n`);
    return 1;
  }
  io.out(
    args.output === 'json'
      ? json({ namespace: namespace ?? null, items: found.items })
      : renderBindings(found.items, io.now(), args.allNamespaces),
  );
  return 0;
}

/**
 * Asks the Latchkey server for a Connect session, authenticated by the person's own Kubernetes
 * bearer token (the REST API's ServiceAccount/TokenReview authentication decides; docs/kubectl-plugin.md).
 * The answer's link carries a session token: it is printed, never written anywhere else.
 */
async function connectLink(args: PluginArgs, client: Client, io: PluginIo): Promise<number> {
  const token = await client.bearerToken();
  if (!token)
    throw refusal(
      "the kubeconfig's user presents no bearer token (a client certificate cannot be shown to Latchkey's server): " +
        'use a context that signs in with a token (OIDC, or a ServiceAccount token from `kubectl create token`)',
    );
  const body = {
    end_user: {
      id: args.endUser!,
      ...(args.endUserEmail ? { email: args.endUserEmail } : {}),
      ...(args.endUserName ? { display_name: args.endUserName } : {}),
    },
    allowed_integrations: [args.target!],
  };
  let res: Response;
  try {
    res = await io.fetch(`${args.server}/connect/sessions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', [NAMESPACE_HEADER]: client.namespace },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(args.timeoutMs),
    });
  } catch (err) {
    throw refusal(`could not reach the Latchkey server at ${args.server}: ${err instanceof Error ? err.message : String(err)}`);
  }
  const answer = (await res.json().catch(() => undefined)) as
    { data?: { connect_link?: unknown; expires_at?: unknown }; error?: { code?: unknown; message?: unknown } } | undefined;
  if (!res.ok) {
    const e = answer?.error;
    const detail = e ? `${String(e.code)}: ${String(e.message)}` : `HTTP ${res.status}`;
    throw refusal(`the Latchkey server refused the Connect session (HTTP ${res.status}, ${detail})`);
  }
  const link = answer?.data?.connect_link;
  if (typeof link !== 'string') throw refusal('the Latchkey server answered without a connect_link');
  const expiresAt = typeof answer?.data?.expires_at === 'string' ? answer.data.expires_at : undefined;
  io.out(
    args.output === 'json'
      ? json({ integration: args.target, endUser: args.endUser, connect_link: link, expires_at: expiresAt })
      : `${link}\n`,
  );
  return 0;
}

/** Which Environment (its namespace) the Connect session is for: a Kubernetes identity, unlike a secret key, does not say. */
export const NAMESPACE_HEADER = 'latchkey-namespace';
