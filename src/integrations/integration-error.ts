/** A refused integrations API call: the HTTP layer answers it with this status and code. */
export class IntegrationError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = 'IntegrationError';
  }
}
