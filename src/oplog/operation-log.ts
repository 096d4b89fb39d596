import type { Clock } from '../domain/clock.js';
import type { Logger } from '../platform/log.js';
import { ENVIRONMENT_PREFIX, UNVERIFIED_PREFIX, newEntryId, type Operation, type OplogEntry, type Outcome } from './entry.js';
import { redactMessage } from './redact.js';

/**
 * Where entries are stored: one object per connection, one ring per environment, and one ring per
 * environment for senders nobody authenticated. `created`: the connection was created by the operation
 * logged, so its log object cannot exist yet.
 */
export type OplogTarget =
  { kind: 'connection'; name: string; uid?: string; created?: boolean } | { kind: 'environment' } | { kind: 'unverified' };

/** The storage behind the log (src/k8s/oplog-store.ts); one call writes a batch to one object. */
export interface OplogSink {
  append(namespace: string, target: OplogTarget, entries: OplogEntry[]): Promise<void>;
}

export interface RecordInput {
  namespace: string;
  operation: Operation;
  outcome: Outcome;
  step?: string;
  integration?: string;
  connectionId?: string;
  /** The Connection object the entry belongs to; without it the entry goes to the environment's ring. */
  connection?: { name: string; uid?: string; created?: boolean };
  endUserId?: string;
  durationMs?: number;
  messages: string[];
  /** Recorded for a request nobody authenticated (a refused provider webhook): stored in its own ring. */
  unverifiedSender?: boolean;
  /** Values known to be secret (tokens sent, client secret): removed from the messages wherever they appear. */
  secrets?: ReadonlyArray<string | undefined>;
}

export interface OperationLogOptions {
  sink: OplogSink;
  clock: Clock;
  logger: Logger;
  /** Entries waiting to be written at most; beyond it the oldest are dropped (and counted). */
  maxQueue?: number;
  /** How long entries wait to be written together (ms). */
  flushIntervalMs?: number;
  /** Called with the number of entries dropped (queue full, or the write failed). */
  onDropped?: (n: number, why: 'queue_full' | 'write_failed') => void;
}

const MAX_MESSAGES = 20;
const WRITE_CONCURRENCY = 8;

/**
 * The durable operation log. `record` redacts, assigns the ID, logs the entry to stdout and queues
 * it; it never blocks and never throws, so the operation it records cannot fail because of it.
 * Queued entries are written in batches, one write per object.
 */
export class OperationLog {
  private queue: Array<{ target: OplogTarget; entry: OplogEntry }> = [];
  private timer?: NodeJS.Timeout;
  private flushing?: Promise<void>;
  /** IDs of the batch being written, and who waits for a queued entry (see `whenStored`). */
  private writing = new Set<string>();
  private waiters?: Array<() => void>;
  private readonly logger: Logger;
  private readonly maxQueue: number;
  private readonly interval: number;
  private stopped = false;

  constructor(private readonly opts: OperationLogOptions) {
    this.logger = opts.logger.child({ component: 'oplog' });
    this.maxQueue = opts.maxQueue ?? 10_000;
    this.interval = opts.flushIntervalMs ?? 250;
  }

  /** Where entries go (the readers use the same store). */
  get sink(): OplogSink {
    return this.opts.sink;
  }

  /** Records an entry and returns its ID (the `log_id` to show). */
  record(input: RecordInput): string {
    const now = this.opts.clock.now();
    const target: OplogTarget = input.connection
      ? { kind: 'connection', ...input.connection }
      : input.unverifiedSender
        ? { kind: 'unverified' }
        : { kind: 'environment' };
    const id = newEntryId(
      target.kind === 'connection' ? target.name : target.kind === 'unverified' ? UNVERIFIED_PREFIX : ENVIRONMENT_PREFIX,
      now,
    );
    try {
      const entry: OplogEntry = {
        id,
        time: new Date(now).toISOString(),
        namespace: input.namespace,
        ...(input.integration ? { integration: input.integration } : {}),
        ...(input.connectionId ? { connectionId: input.connectionId } : {}),
        ...(input.endUserId ? { endUserId: input.endUserId } : {}),
        operation: input.operation,
        ...(input.step ? { step: input.step } : {}),
        outcome: input.outcome,
        ...(input.durationMs !== undefined ? { durationMs: Math.max(0, Math.round(input.durationMs)) } : {}),
        messages: input.messages.slice(0, MAX_MESSAGES).map((m) => redactMessage(String(m), input.secrets)),
      };
      // The same entry, same ID, for the cluster's log pipeline.
      this.logger[entry.outcome === 'failure' ? 'warn' : 'info']({ logId: id, ...withoutId(entry) }, `operation ${entry.operation}`);
      if (this.stopped) return id;
      this.queue.push({ target, entry });
      if (this.queue.length > this.maxQueue) {
        const dropped = this.queue.length - this.maxQueue;
        this.queue.splice(0, dropped);
        this.opts.onDropped?.(dropped, 'queue_full');
      }
      this.timer ??= setTimeout(() => {
        this.timer = undefined;
        void this.flush();
      }, this.interval);
      this.timer.unref?.();
    } catch (err) {
      this.logger.warn({ err: String(err) }, 'could not record an operation log entry');
    }
    return id;
  }

  /**
   * Resolves once the entry `id` is stored (or given up on); at once if it is not waiting. Whoever
   * publishes a `log_id` (a connection's `errors[]`, an error answer) waits for it first, so a client
   * that follows it at once, on any replica, finds the entry. Never rejects.
   */
  async whenStored(id: string): Promise<void> {
    if (this.queue.some((q) => q.entry.id === id)) {
      // Written with the batch it is in, at the next flush (no earlier: batching is the point).
      await new Promise<void>((resolve) => (this.waiters ??= []).push(resolve));
      return this.whenStored(id);
    }
    if (this.writing.has(id)) await this.flushing;
  }

  /** Writes everything queued so far; resolves when it is stored (or given up on). Never rejects. */
  async flush(): Promise<void> {
    while (this.flushing) await this.flushing;
    if (!this.queue.length) return;
    const batch = this.queue;
    this.queue = [];
    this.writing = new Set(batch.map((b) => b.entry.id));
    const waiters = this.waiters ?? [];
    this.waiters = undefined;
    this.flushing = this.write(batch).finally(() => {
      this.flushing = undefined;
      this.writing = new Set();
    });
    // Waiters look again: their entry is in the batch being written now.
    for (const w of waiters) w();
    await this.flushing;
  }

  /** Flushes and stops accepting entries for storage (they are still logged). */
  async stop(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    await this.flush();
    this.stopped = true;
  }

  private async write(batch: Array<{ target: OplogTarget; entry: OplogEntry }>): Promise<void> {
    const groups = new Map<string, { namespace: string; target: OplogTarget; entries: OplogEntry[] }>();
    for (const { target, entry } of batch) {
      const key = `${entry.namespace}/${target.kind === 'connection' ? target.name : `(${target.kind})`}`;
      const group = groups.get(key) ?? { namespace: entry.namespace, target, entries: [] };
      if (target.kind === 'connection' && group.target.kind === 'connection') {
        if (target.uid) group.target.uid ??= target.uid;
        if (target.created) group.target.created = true;
      }
      group.entries.push(entry);
      groups.set(key, group);
    }
    // A few objects at a time: each is its own compare-and-swap write, and they do not contend.
    const pending = [...groups.values()];
    const worker = async () => {
      for (let g = pending.shift(); g; g = pending.shift()) {
        try {
          await this.opts.sink.append(g.namespace, g.target, g.entries);
        } catch (err) {
          this.opts.onDropped?.(g.entries.length, 'write_failed');
          this.logger.warn(
            { namespace: g.namespace, entries: g.entries.map((e) => e.id), err: String(err) },
            'could not store operation log entries (they are in this log only)',
          );
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(WRITE_CONCURRENCY, pending.length) }, worker));
  }
}

/** The entry for pino: its ID is `logId`, its time `at` (pino writes its own `time`). */
function withoutId(e: OplogEntry): Omit<OplogEntry, 'id' | 'time'> & { at: string } {
  const { id: _id, time, ...rest } = e;
  return { at: time, ...rest };
}
