import { z } from 'zod';
import { OPERATIONS, OUTCOMES } from '../../../oplog/entry.js';
import { ConnectionId, IntegrationId, IsoTimestamp } from './common.js';

export const LogEntry = z.object({
  id: z.string().describe('Stable ID: what `errors[].log_id` of a connection refers to'),
  time: IsoTimestamp,
  integration: z.string().nullable().describe('Integration ID (provider_config_key)'),
  connection_id: z.string().nullable(),
  end_user_id: z.string().nullable(),
  operation: z.enum(OPERATIONS),
  step: z.string().nullable().describe('Step within the operation, e.g. start, callback, token_exchange, attempt 2'),
  outcome: z.enum(OUTCOMES),
  duration_ms: z.number().int().nullable(),
  messages: z
    .array(z.string())
    .describe("What happened, including the provider's error answer; tokens, keys, passwords and codes are redacted"),
});

export const LogList = z.object({
  logs: z.array(LogEntry),
  next_cursor: z.string().nullable().describe('Pass as `cursor` for the next (older) page; null on the last page'),
});

const isoQuery = z.iso.datetime({ offset: true });

export const ListLogsQuery = z.strictObject({
  integration: IntegrationId.optional(),
  provider_config_key: IntegrationId.optional().describe('Same as integration'),
  connection_id: ConnectionId.optional(),
  end_user_id: z.string().min(1).max(255).optional(),
  operation: z.enum(OPERATIONS).optional(),
  outcome: z.enum(OUTCOMES).optional(),
  from: isoQuery.optional().describe('Entries at or after this time'),
  to: isoQuery.optional().describe('Entries at or before this time'),
  limit: z.coerce.number().int().min(1).max(500).optional(),
  cursor: z.string().max(1024).optional(),
});

export const LogParams = z.strictObject({ logId: z.string().min(1).max(128) });
