/** Waits for `p` to settle, or `ms`, whichever comes first (the timer does not keep the process alive). */
export function settleWithin(p: Promise<unknown>, ms: number): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    timer.unref?.();
    void p.then(
      () => (clearTimeout(timer), resolve()),
      () => (clearTimeout(timer), resolve()),
    );
  });
}

/** The message of an error, for a log line (an API error's message carries no credential). */
export function errMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
