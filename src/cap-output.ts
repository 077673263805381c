/**
 * A task attempt's output as kept in its event (SVC_TASK_OUTPUT_BYTES): the value itself when its
 * JSON fits, else `{truncated: true, bytes, preview}` with the first `maxBytes` characters of that
 * JSON, so a chatty task cannot fill the log. Masking is done before (the mask must see it whole).
 */
export function capOutput(value: unknown, maxBytes: number): unknown {
  const text = JSON.stringify(value ?? null);
  if (text.length <= maxBytes) return value ?? null;
  return { truncated: true, bytes: Buffer.byteLength(text), preview: text.slice(0, maxBytes) };
}
