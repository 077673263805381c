// Text PostgreSQL refuses: NUL in text and jsonb, and lone surrogates (not Unicode: jsonb refuses
// their escapes, text columns would get U+FFFD instead). Shared by the request guard
// (src/api/input-guard.ts) and the playbook parser, whose YAML escapes ("\0") make such strings too.

export const NUL_PROBLEM = 'contains NUL (\\u0000), which cannot be stored';
export const SURROGATE_PROBLEM = 'contains a lone surrogate (\\ud800-\\udfff), which is not Unicode and cannot be stored';

/** Why a string cannot be stored, if it cannot. */
export function unstorableText(s: string): string | undefined {
  if (s.includes('\0')) return NUL_PROBLEM;
  if (!s.isWellFormed()) return SURROGATE_PROBLEM;
  return undefined;
}

// Long keys are cut, so a detail stays readable.
const MAX_KEY_CHARS = 64;

/** A path segment: `[3]`, `.name` for identifier-like keys (`name` first), `["…"]` (JSON-escaped: NUL shows as \u0000) for the rest. */
export function pathSegment(key: string | number, first: boolean): string {
  if (typeof key === 'number') return `[${key}]`;
  if (/^[A-Za-z_$][\w$]*$/.test(key) && key.length <= MAX_KEY_CHARS) return first ? key : `.${key}`;
  const shown = key.length > MAX_KEY_CHARS ? `${JSON.stringify(key.slice(0, MAX_KEY_CHARS)).slice(0, -1)}…"` : JSON.stringify(key);
  return `[${shown}]`;
}

/**
 * The first string or key in a parsed value that cannot be stored, with its path ('' for the
 * value itself). Walks with its own stack: no depth overflows it.
 */
export function findUnstorable(value: unknown): { path: string; message: string } | undefined {
  const stack: { value: unknown; path: string }[] = [{ value, path: '' }];
  for (let item = stack.pop(); item; item = stack.pop()) {
    const { value: v, path } = item;
    if (typeof v === 'string') {
      const message = unstorableText(v);
      if (message) return { path, message };
    } else if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) stack.push({ value: v[i], path: path + pathSegment(i, path === '') });
    } else if (v !== null && typeof v === 'object') {
      const entries = Object.entries(v);
      for (let i = entries.length - 1; i >= 0; i--) {
        const [key, child] = entries[i];
        const here = path + pathSegment(key, path === '');
        const message = unstorableText(key);
        if (message) return { path: here, message };
        stack.push({ value: child, path: here });
      }
    }
  }
  return undefined;
}
