import { z } from 'zod';

/** The connection a dashboard call names. */
export const ConnectionRef = z.strictObject({ integration: z.string().min(1).max(63), connection_id: z.string().min(1).max(255) });
