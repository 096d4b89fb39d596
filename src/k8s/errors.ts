import { ApiException } from '@kubernetes/client-node';

/** HTTP status of a failed Kubernetes API call, or undefined for network and other errors. */
export function statusOf(err: unknown): number | undefined {
  if (err instanceof ApiException) return err.code;
  const code = (err as { code?: unknown; statusCode?: unknown } | null)?.statusCode ?? (err as { code?: unknown } | null)?.code;
  return typeof code === 'number' ? code : undefined;
}

export const isNotFound = (err: unknown): boolean => statusOf(err) === 404;
export const isConflict = (err: unknown): boolean => statusOf(err) === 409;

/** Message the API server gave (for example a CEL rule's message), without the request details. */
export function apiMessage(err: unknown): string {
  if (err instanceof ApiException) {
    const body = typeof err.body === 'string' ? safeJson(err.body) : err.body;
    const message = (body as { message?: unknown } | undefined)?.message;
    if (typeof message === 'string') return message;
    return `Kubernetes API error ${err.code}`;
  }
  return err instanceof Error ? err.message : String(err);
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** A compare-and-swap write kept losing to other writers. */
export class ConflictRetriesExhausted extends Error {
  constructor(what: string) {
    super(`${what}: too many concurrent updates; try again`);
    this.name = 'ConflictRetriesExhausted';
  }
}
