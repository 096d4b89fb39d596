/** An authorization flow failure the end user sees (page or JSON) and the frontend gets as an error event. */
export class FlowError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly fieldErrors?: Array<{ path: string; message: string }>,
  ) {
    super(message);
    this.name = 'FlowError';
  }
}
