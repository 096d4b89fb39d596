#!/usr/bin/env node
/**
 * Latchkey's single entry point: `latchkey server` (REST API, Connect UI, OAuth callback,
 * webhooks, proxy) or `latchkey controller` (reconcilers, refresh before expiry), or `all` for both
 * in one process (local runs); `latchkey migrate` runs a shipped stored-format migration and exits.
 */
import { loadConfig } from '../platform/config.js';
import { loadKubeConfig } from '../k8s/client.js';
import { createLogger } from '../platform/log.js';
import { migrateCommand } from './migrate.js';
import { runLatchkey, type Component } from './run.js';

const USAGE = 'usage: latchkey <server|controller|all|migrate>';

async function main(argv: string[]): Promise<void> {
  const command = argv[0];
  if (command === 'migrate') {
    const config = loadConfig();
    const out = (s: string) => process.stdout.write(s);
    process.exitCode = await migrateCommand(argv.slice(1), {
      config,
      logger: createLogger(config.logLevel),
      kc: loadKubeConfig(config.kubeconfig),
      out,
    });
    return;
  }
  if (command !== 'server' && command !== 'controller' && command !== 'all') {
    process.stderr.write(`${USAGE}\n`);
    process.exit(2);
  }
  const config = loadConfig();
  const logger = createLogger(config.logLevel);
  const components: Component[] = command === 'all' ? ['server', 'controller'] : [command];
  const running = await runLatchkey({ config, logger, kc: loadKubeConfig(config.kubeconfig), components });
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'stopping');
    await running.stop();
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
}

main(process.argv.slice(2)).catch((err: unknown) => {
  process.stderr.write(`latchkey: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
