// Replaces the compiled src/k8s/kubernetes-client.js with one file holding only what Latchkey uses
// of @kubernetes/client-node. The package's index loads every generated API group (about 15 MB of
// module source, which V8 keeps on the heap of every process for lazy compilation); the bundle keeps
// the few clients imported, with the package's own dependencies left as imports. Measured: heap
// after import 28.5 -> 15.2 MiB, RSS 122.9 -> 94.4 MiB (bench/memory-notes.md).
// Run by `npm run build:src` (and so by the image's build) and last by `npm run build` (the test compile emits
// src again): node dev/build/bundle-kubernetes-client.mjs
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { build } from 'esbuild';

const target = 'dist/src/k8s/kubernetes-client.js';
const require = createRequire(import.meta.url);
const pkg = JSON.parse(readFileSync(require.resolve('@kubernetes/client-node/package.json'), 'utf8'));

await build({
  entryPoints: [target],
  outfile: target,
  allowOverwrite: true,
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node24',
  external: Object.keys(pkg.dependencies ?? {}),
  logLevel: 'warning',
});
