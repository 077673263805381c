/**
 * A key that makes a repeat of the same request (a double click, Enter pressed twice, a send again
 * after a lost answer) the same start or signal: the server answers it as the first
 * (`Idempotency-Key`). A form makes a new one when what it would send changes and after an answer.
 */
export function newIdempotencyKey(): string {
  // getRandomValues, not randomUUID: the latter needs a secure context, and a gateway may be plain http.
  return [...crypto.getRandomValues(new Uint8Array(16))].map((b) => b.toString(16).padStart(2, '0')).join('');
}
