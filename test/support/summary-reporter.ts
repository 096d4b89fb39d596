/** Prints one plain closing line, "tests: N passed, N failed[, N skipped]", for CI to read. */
export default class SummaryReporter {
  onRunComplete(
    _contexts: unknown,
    results: {
      numPassedTests: number;
      numFailedTests: number;
      numPendingTests: number;
      numTodoTests: number;
      numRuntimeErrorTestSuites: number;
    },
  ): void {
    const skipped = results.numPendingTests + results.numTodoTests;
    // A test file that fails to load counts as a failure, not as zero tests.
    const failed = results.numFailedTests + results.numRuntimeErrorTestSuites;
    const line = `tests: ${results.numPassedTests} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}`;
    // Printed when the process exits, so it comes after Jest's own summary: the closing line CI reads.
    process.once('exit', () => {
      process.stdout.write(`\n${line}\n`);
    });
  }
}
