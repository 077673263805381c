// Why a keychain entry resolved to nothing. The spec has an entry the worker could not read, make
// or renew resolve to an empty object, so the template reading it fails; the worker knows why (the
// token endpoint's answer, a renewal refused, an entry expired) and the task's error says so, where
// it said only that a field was missing. The reason is kept beside the empty object, not in it, so
// templates still see an entry without fields. Reasons never quote a token answer or request body.
const reasons = new WeakMap<object, string>();

/** An empty entry that says why it is empty (`it could not be made: …`). */
export function unresolvedKeychainEntry(reason: string): Record<string, unknown> {
  const entry = {};
  reasons.set(entry, reason);
  return entry;
}

/** Why this entry object is empty, when the worker said. */
export function unresolvedReason(entry: object): string | undefined {
  return reasons.get(entry);
}
