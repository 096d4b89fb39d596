/** A header value Node would refuse to send (CR, LF, NUL and other control characters). */
export function isUnsafeHeaderValue(value: string): boolean {
  return /[\x00-\x08\x0a-\x1f\x7f]/.test(value);
}
