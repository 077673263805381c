import { MAX_RENDERED_CHARS, RenderFault, toText } from './template-values.ts';

// Python's str methods that templates call (`s.strip()`, `s.title()`) and the filters that share
// them (`| trim`, `| replace`, `| capitalize`, `| title`): one reading of each, for both.

/** Python's strip/lstrip/rstrip: whitespace, or any of `chars`, removed from the ends. */
export function stripText(value: string, chars: unknown, side: 'both' | 'left' | 'right'): string {
  if (chars === undefined || chars === null) return side === 'left' ? value.trimStart() : side === 'right' ? value.trimEnd() : value.trim();
  const set = new Set(toText(chars));
  let start = 0;
  let end = value.length;
  if (side !== 'right') while (start < end && set.has(value[start])) start++;
  if (side !== 'left') while (end > start && set.has(value[end - 1])) end--;
  return value.slice(start, end);
}

/** `s` with `old` replaced by `replacement` (all, or the first `limit`), refused before it grows past the limit. */
export function replaceText(s: string, old: string, replacement: string, limit: number | undefined): string {
  const max = limit === undefined || limit < 0 ? Infinity : limit;
  const parts = old === '' ? ['', ...Array.from(s), ''] : s.split(old);
  const used = Math.min(parts.length - 1, max);
  if (s.length + used * (replacement.length - old.length) > MAX_RENDERED_CHARS) throw new RenderFault(`a rendered string would exceed ${MAX_RENDERED_CHARS} characters`);
  if (old === '') {
    let out = '';
    for (let i = 0; i < parts.length; i++) out += (i > 0 && i <= used ? replacement : '') + parts[i];
    return out;
  }
  return parts.slice(0, used + 1).join(replacement) + (used + 1 < parts.length ? old + parts.slice(used + 1).join(old) : '');
}

/** Python's str.capitalize: the first character upper case, the rest lower. */
export const capitalizeText = (value: string): string => value.charAt(0).toUpperCase() + value.slice(1).toLowerCase();

/** Python's str.title: each run of letters capitalized. */
export function titleText(value: string): string {
  let out = '';
  let previousLetter = false;
  for (const c of value) {
    const letter = /\p{L}/u.test(c);
    out += letter ? (previousLetter ? c.toLowerCase() : c.toUpperCase()) : c;
    previousLetter = letter;
  }
  return out;
}

/**
 * Jinja's `title` filter, which is not str.title: words begin after spaces, hyphens and opening
 * brackets only, so an apostrophe is inside a word (`it's` → `It's`, where str.title gives `It'S`).
 */
export function titleFilterText(value: string): string {
  return value
    .split(/([-\s({[<]+)/u)
    .map((part, i) => (i % 2 === 1 ? part : capitalizeText(part)))
    .join('');
}
