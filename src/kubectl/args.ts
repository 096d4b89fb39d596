/**
 * `kubectl latchkey` arguments, parsed as kubectl parses its own: a command, its positional
 * arguments, and flags anywhere (`--flag value`, `--flag=value`, `-n value`, `-nvalue`).
 */

export const COMMANDS = ['status', 'refresh', 'connect-link', 'logs', 'bindings'] as const;
export type Command = (typeof COMMANDS)[number];

export interface PluginArgs {
  command: Command;
  /** The command's operand: the Connection (refresh, logs) or the integration (connect-link). */
  target?: string;
  namespace?: string;
  allNamespaces: boolean;
  kubeconfig?: string;
  context?: string;
  output: 'table' | 'json';
  /** connect-link: the end user's ID (required), e-mail and display name. */
  endUser?: string;
  endUserEmail?: string;
  endUserName?: string;
  /** connect-link: the Latchkey server's base URL (default $LATCHKEY_SERVER). */
  server?: string;
  /** refresh: wait for the controller's answer. */
  wait: boolean;
  timeoutMs: number;
  /** status: how far ahead "expiring soon" looks. */
  expiringWithinMs: number;
}

export type ParseResult = { ok: true; args: PluginArgs } | { ok: true; help: string } | { ok: false; error: string };

export const USAGE = `kubectl latchkey: Latchkey's connections, as your kubeconfig and RBAC allow

Usage:
  kubectl latchkey status [-A] [--expiring-within 24h]     connections by state, expiring soon, failing
  kubectl latchkey refresh <connection> [--no-wait]        ask the owning controller to refresh a Connection now
  kubectl latchkey connect-link <integration> --end-user <id> [--end-user-email <e>] [--server <url>]
                                                           a Connect link for an end user
  kubectl latchkey logs <connection>                       the connection's operation log
  kubectl latchkey bindings [-A]                           CredentialBindings

Flags:
  -n, --namespace <ns>      the namespace (default: the context's)
  -A, --all-namespaces      every namespace (status, bindings)
      --kubeconfig <path>   the kubeconfig file (default: $KUBECONFIG, ~/.kube/config)
      --context <name>      the kubeconfig context
  -o, --output table|json   the output format (default table)
      --timeout <duration>  refresh: how long to wait for the answer (default 60s)
`;

/** The operand each command takes (undefined: none). */
const OPERAND: Record<Command, string | undefined> = {
  status: undefined,
  refresh: 'connection',
  'connect-link': 'integration',
  logs: 'connection',
  bindings: undefined,
};

/** Flags that take a value, and the name it is kept under. */
const VALUE_FLAGS: Record<string, string> = {
  '-n': 'namespace',
  '--namespace': 'namespace',
  '--kubeconfig': 'kubeconfig',
  '--context': 'context',
  '-o': 'output',
  '--output': 'output',
  '--end-user': 'endUser',
  '--end-user-email': 'endUserEmail',
  '--end-user-name': 'endUserName',
  '--server': 'server',
  '--timeout': 'timeout',
  '--expiring-within': 'expiringWithin',
};

/** `90s`, `5m`, `24h`, `2d` (or bare seconds) in milliseconds; undefined when not one. */
export function parseDuration(text: string): number | undefined {
  const m = /^(\d+)(ms|s|m|h|d)?$/.exec(text.trim());
  if (!m) return undefined;
  const unit = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }[(m[2] ?? 's') as 'ms' | 's' | 'm' | 'h' | 'd'];
  return Number(m[1]) * unit;
}

export function parseArgs(argv: readonly string[], env: Readonly<Record<string, string | undefined>> = {}): ParseResult {
  const positional: string[] = [];
  const values: Partial<Record<string, string>> = {};
  let allNamespaces = false;
  let wait = true;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '-h' || arg === '--help') return { ok: true, help: USAGE };
    if (arg === '-A' || arg === '--all-namespaces') {
      allNamespaces = true;
      continue;
    }
    if (arg === '--no-wait' || arg === '--wait=false') {
      wait = false;
      continue;
    }
    if (arg === '--wait' || arg === '--wait=true') {
      wait = true;
      continue;
    }
    if (arg === '--') {
      positional.push(...argv.slice(i + 1));
      break;
    }
    if (arg.startsWith('-') && arg !== '-') {
      const eq = arg.indexOf('=');
      let flag = eq > 0 ? arg.slice(0, eq) : arg;
      let value = eq > 0 ? arg.slice(eq + 1) : undefined;
      // -nvalue, -ojson: a short flag with its value attached.
      if (!(flag in VALUE_FLAGS) && /^-[no]./.test(arg) && !arg.startsWith('--')) {
        flag = arg.slice(0, 2);
        value = arg.slice(2);
      }
      const key = VALUE_FLAGS[flag];
      if (!key) return { ok: false, error: `unknown flag: ${flag}` };
      if (value === undefined) {
        value = argv[i + 1];
        if (value === undefined) return { ok: false, error: `flag needs an argument: ${flag}` };
        i++;
      }
      values[key] = value;
      continue;
    }
    positional.push(arg);
  }
  const [command, ...operands] = positional;
  if (!command) return { ok: true, help: USAGE };
  if (!(COMMANDS as readonly string[]).includes(command))
    return { ok: false, error: `unknown command "${command}" (one of: ${COMMANDS.join(', ')})` };
  const cmd = command as Command;
  const operand = OPERAND[cmd];
  if (operand && operands.length !== 1) return { ok: false, error: `${cmd} takes one ${operand}: kubectl latchkey ${cmd} <${operand}>` };
  if (!operand && operands.length > 0) return { ok: false, error: `${cmd} takes no arguments (got "${operands.join(' ')}")` };

  const output = values.output ?? 'table';
  if (output !== 'table' && output !== 'json') return { ok: false, error: `unknown output format "${output}" (table or json)` };
  const timeoutMs = values.timeout === undefined ? 60_000 : parseDuration(values.timeout);
  if (timeoutMs === undefined) return { ok: false, error: `--timeout: not a duration: "${values.timeout}" (e.g. 30s, 2m)` };
  const expiringWithinMs = values.expiringWithin === undefined ? 86_400_000 : parseDuration(values.expiringWithin);
  if (expiringWithinMs === undefined)
    return { ok: false, error: `--expiring-within: not a duration: "${values.expiringWithin}" (e.g. 1h, 7d)` };
  if (allNamespaces && cmd !== 'status' && cmd !== 'bindings') return { ok: false, error: `${cmd} works in one namespace: use -n, not -A` };
  if (allNamespaces && values.namespace) return { ok: false, error: 'use either -n or -A' };
  const server = values.server ?? env.LATCHKEY_SERVER;
  if (cmd === 'connect-link') {
    if (!values.endUser) return { ok: false, error: 'connect-link needs --end-user <id>' };
    if (!server) return { ok: false, error: "connect-link needs the Latchkey server's URL: --server <url> or LATCHKEY_SERVER" };
    if (!/^https?:\/\/[^/]/.test(server)) return { ok: false, error: `--server: not an http(s) URL: "${server}"` };
  }
  return {
    ok: true,
    args: {
      command: cmd,
      ...(operand ? { target: operands[0] } : {}),
      ...(values.namespace ? { namespace: values.namespace } : {}),
      allNamespaces,
      ...(values.kubeconfig ? { kubeconfig: values.kubeconfig } : {}),
      ...(values.context ? { context: values.context } : {}),
      output,
      ...(values.endUser ? { endUser: values.endUser } : {}),
      ...(values.endUserEmail ? { endUserEmail: values.endUserEmail } : {}),
      ...(values.endUserName ? { endUserName: values.endUserName } : {}),
      ...(cmd === 'connect-link' && server ? { server: server.replace(/\/+$/, '') } : {}),
      wait,
      timeoutMs,
      expiringWithinMs,
    },
  };
}
