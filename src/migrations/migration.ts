import type { ConnectionResource } from '../k8s/resources.js';

/** What a migration decides for one Connection. */
export type Plan =
  /** The new spec, and what changes, in words for the operation log (no secret: specs hold none). */
  | { spec: ConnectionResource['spec']; change: string }
  /** Left as it is, and a person must act (reconnect, say): listed in the report. */
  | { attention: string }
  /** Nothing to do. */
  | undefined;

/**
 * A stored-format migration shipped in the image (`latchkey migrate <name>`). `plan` is pure: the
 * runner reads each Connection, plans, and writes by compare-and-swap, planning again on a
 * conflict, so a run is idempotent and a concurrent write is never undone.
 */
export interface ConnectionMigration {
  name: string;
  /** One line for `latchkey migrate --list`. */
  summary: string;
  /** The release whose upgrade notes ask for it (CHANGELOG.md). */
  since: string;
  /** Positional arguments the migration takes, and what they mean (usage text). */
  args?: string;
  plan(c: ConnectionResource, args: string[]): Plan;
}
