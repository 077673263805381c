import { useEffect, useState } from 'react';

/** Where the console is: the URL's hash (`#/executions/12?x=y`), so one set of files works at any base. */
export type Route = { parts: string[]; query: URLSearchParams };

/**
 * A part of the hash as it means, or as written when its escapes are malformed (`%E0%A4%A`): the
 * URIError was thrown while rendering, and the console went blank, for every page after it too,
 * until reloaded. Read as written, the page says nothing is there.
 */
function decodePart(part: string): string {
  try {
    return decodeURIComponent(part);
  } catch {
    return part;
  }
}

function parse(hash: string): Route {
  const raw = hash.replace(/^#\/?/, '');
  const [path, search = ''] = raw.split('?', 2);
  return { parts: path.split('/').filter(Boolean).map(decodePart), query: new URLSearchParams(search) };
}

/** The current route, updated on navigation. */
export function useRoute(): Route {
  const [hash, setHash] = useState(location.hash);
  useEffect(() => {
    const changed = () => setHash(location.hash);
    addEventListener('hashchange', changed);
    return () => removeEventListener('hashchange', changed);
  }, []);
  return parse(hash);
}

/** A link target for the parts (each encoded) and query (a list: the name repeated, as `label` is). */
export function href(parts: (string | number)[], query?: Record<string, string | string[] | undefined>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(query ?? {})) for (const one of typeof v === 'string' ? [v] : (v ?? [])) if (one !== '') q.append(k, one);
  const search = q.toString();
  return `#/${parts.map((p) => encodeURIComponent(String(p))).join('/')}${search ? `?${search}` : ''}`;
}

/** Goes to a route (adds a history entry). */
export function navigate(target: string): void {
  location.hash = target.replace(/^#/, '');
}
