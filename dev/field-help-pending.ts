/**
 * Rewrites config/providers/field-help-pending.txt from the manifests: the shipped providers whose
 * typed fields do not all have their help yet (dev/field-help.ts). Run after adding help:
 * `npm run build && node dist/dev/field-help-pending.js`.
 */
import { writeFileSync } from 'node:fs';
import { PENDING_FILE, parsePending, pendingList, readManifests } from './field-help.js';

const list = pendingList(readManifests());
writeFileSync(PENDING_FILE, list);
process.stdout.write(`${parsePending(list).length} manifests pending in ${PENDING_FILE}\n`);
