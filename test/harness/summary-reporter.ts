/** Prints one plain closing line, "tests: N passed, N failed[, N skipped]", for CI to read. */
export default class SummaryReporter {
  onRunComplete(_contexts: unknown, results: { numPassedTests: number; numFailedTests: number; numPendingTests: number; numTodoTests: number; numRuntimeErrorTestSuites: number }): void {
    const skipped = results.numPendingTests + results.numTodoTests;
    // A test file that fails to load counts as a failure, not as zero tests.
    const failed = results.numFailedTests + results.numRuntimeErrorTestSuites;
    const line = `tests: ${results.numPassedTests} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}`;
    // Jest's own summary goes to stderr; print there (after it) and on stdout, so the line is last in either.
    process.stderr.write(`\n${line}\n`);
    process.stdout.write(`${line}\n`);
  }
}
