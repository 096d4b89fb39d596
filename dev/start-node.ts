/**
 * `npm run node`: a local control plane and a local node (dev/local-node.ts) until Ctrl-C, which
 * stops both and puts the host back. Prints the kubeconfig to use (kubectl, helm). Needs root.
 *   npm run node -- --image localhost/latchkey:dev   also imports that podman image into the node
 */
import { startLocalNode } from './local-node.js';

const log = (line: string) => process.stderr.write(`[node] ${line}\n`);
const imageAt = process.argv.indexOf('--image');
const images = imageAt > 0 && process.argv[imageAt + 1] ? [process.argv[imageAt + 1]!] : [];

const started = Date.now();
const node = await startLocalNode({ log }).catch((err: unknown) => {
  log(`cannot start: ${(err as Error).message}`);
  process.exit(1);
});
for (const image of images) await node.importImage(image);
log(`ready in ${Date.now() - started} ms; Ctrl-C stops it`);
process.stdout.write(`export KUBECONFIG=${node.kubeconfigPath}\n`);

let stopping = false;
const stop = async () => {
  if (stopping) return;
  stopping = true;
  log('stopping');
  const restored = await node.stop();
  log(`stopped${restored.length ? `; restored ${restored.join(', ')}` : ''}`);
  process.exit(0);
};
process.on('SIGINT', () => void stop());
process.on('SIGTERM', () => void stop());
