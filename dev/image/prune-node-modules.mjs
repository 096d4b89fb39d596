// Deletes from a production node_modules what Node never loads at run time: type declarations,
// source maps, TypeScript sources and Markdown (about 40 MB, most of it @kubernetes/client-node's
// generated API). Licences stay. Run by the Dockerfile's prod-deps stage: node prune-node-modules.mjs <dir>
import { readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';

const DROP = /(\.d\.[cm]?ts|\.[cm]?js\.map|\.ts|\.md)$/;

function prune(dir) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      // @types packages are declarations only.
      if (dir.endsWith('@types')) rmSync(path, { recursive: true });
      else prune(path);
    } else if (DROP.test(entry.name) && !/^licen[cs]e/i.test(entry.name)) {
      rmSync(path);
    }
  }
}

prune(process.argv[2] ?? 'node_modules');
