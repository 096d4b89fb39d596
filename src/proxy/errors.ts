/**
 * A request the proxy refuses or cannot complete, before or instead of a provider response. The
 * HTTP layer turns it into the API's JSON error body; the proxy core has no HTTP framework types.
 */
export class ProxyError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = 'ProxyError';
  }
}

export const rejectPath = (message: string) => new ProxyError(400, 'invalid_proxy_path', message);
