const utf8 = new TextEncoder();
const ELLIPSIS_BYTES = Buffer.byteLength('…');

/**
 * A task attempt's output as kept in its event (SVC_TASK_OUTPUT_BYTES): the value itself when its
 * JSON fits in `maxBytes` UTF-8 bytes, else `{truncated: true, bytes, preview}` with as much of
 * that JSON as fits, whole characters only (half a surrogate pair cannot be stored, and a report
 * holding one is refused), so a chatty task cannot fill the log. Masking is done before (the mask
 * must see it whole).
 */
export function capOutput(value: unknown, maxBytes: number): unknown {
  const text = JSON.stringify(value ?? null);
  // Every UTF-16 unit is at most 3 bytes: short text fits without being measured.
  if (text.length * 3 <= maxBytes) return value ?? null;
  const bytes = Buffer.byteLength(text);
  if (bytes <= maxBytes) return value ?? null;
  // encodeInto writes whole code points only: `read` ends between characters.
  const { read } = utf8.encodeInto(text, new Uint8Array(maxBytes));
  return { truncated: true, bytes, preview: text.slice(0, read) };
}

/**
 * `text` in at most `maxBytes` UTF-8 bytes: itself when it fits, else its first whole characters
 * and `…` (a task's error message, kept beside its capped output). Masking is done before.
 */
export function capText(text: string, maxBytes: number): string {
  if (text.length * 3 <= maxBytes || Buffer.byteLength(text) <= maxBytes) return text;
  const { read } = utf8.encodeInto(text, new Uint8Array(Math.max(0, maxBytes - ELLIPSIS_BYTES)));
  return `${text.slice(0, read)}…`;
}
