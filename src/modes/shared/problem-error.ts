/**
 * A mode's classified failure: the problem in the mode's own words (an exchange's `rejected`, a
 * minting's `invalid_key`), answered with the kind and code the mode's table gives it, so the table
 * is the one place that says how each problem is answered.
 */
import { LatchkeyError, type ErrorKind } from '../../domain/errors.js';

/** Each problem's kind and code (`invalid_input`/`invalid_credentials`: a 400, …). */
export type ProblemAnswers<P extends string> = Readonly<Record<P, { kind: ErrorKind; code: string }>>;

export class ProblemError<P extends string> extends LatchkeyError {
  constructor(
    readonly problem: P,
    answers: ProblemAnswers<P>,
    message: string,
    opts: { retryAfterMs?: number } = {},
  ) {
    super(answers[problem].kind, answers[problem].code, message, opts);
  }
}
