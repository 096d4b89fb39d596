#!/usr/bin/env node
/**
 * `kubectl latchkey`: the kubectl plugin (kubectl runs `kubectl-latchkey` from PATH). It acts as the
 * person running it, with their kubeconfig and RBAC; docs/kubectl-plugin.md.
 */
import { parseArgs, USAGE } from '../kubectl/args.js';
import { runCommand } from '../kubectl/commands.js';
import { PluginClient } from '../k8s/plugin-client.js';

async function main(argv: string[]): Promise<number> {
  const parsed = parseArgs(argv, process.env);
  if (!parsed.ok) {
    process.stderr.write(`kubectl latchkey: ${parsed.error}\n\n${USAGE}`);
    return 2;
  }
  if ('help' in parsed) {
    process.stdout.write(parsed.help);
    return 0;
  }
  const { args } = parsed;
  const client = PluginClient.load({ kubeconfig: args.kubeconfig, context: args.context, namespace: args.namespace });
  return runCommand(args, client, {
    out: (text) => process.stdout.write(text),
    err: (text) => process.stderr.write(text),
    now: () => Date.now(),
    sleep: (ms) => new Promise((r) => setTimeout(r, ms)),
    fetch: globalThis.fetch,
  });
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    // LatchkeyErrors (refusals, the API server's own words) and every other error alike: the message.
    process.stderr.write(`kubectl latchkey: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 1;
  },
);
