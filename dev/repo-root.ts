import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
/** Repository root, from either dev/ (ts) or dist/dev/ (js). */
export const REPO_ROOT = existsSync(join(here, '../package.json')) ? resolve(here, '..') : resolve(here, '../..');
