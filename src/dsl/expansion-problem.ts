/** Most values (mappings, lists, scalars; every repeat counted) a playbook document may expand to. */
export const MAX_DOCUMENT_NODES = 100_000;

/**
 * Most characters of text (keys and string values, every repeat counted) a document may expand to.
 * Twice the HTTP body limit: a document without aliases always fits, a string aliased
 * many times (which the node budget alone would let through) does not.
 */
export const MAX_DOCUMENT_TEXT_CHARS = 16 * 1024 * 1024;

export type ExpansionLimits = { maxNodes: number; maxTextChars: number };

const DEFAULT_LIMITS: ExpansionLimits = { maxNodes: MAX_DOCUMENT_NODES, maxTextChars: MAX_DOCUMENT_TEXT_CHARS };

/**
 * A YAML loader hands back aliases as shared references, so a few hundred bytes can stand for
 * millions of values that only materialise when something walks or serialises the document
 * (validation, JSON for storage). This walks it once, counting repeats, and stops at the first
 * budget exceeded; it returns the problem, or undefined when the document fits.
 */
export function expansionProblem(document: unknown, limits: ExpansionLimits = DEFAULT_LIMITS): string | undefined {
  let nodes = 0;
  let textChars = 0;
  // Iterative: a deep document must not overflow the call stack here either.
  const pending: unknown[] = [document];
  while (pending.length > 0) {
    const value = pending.pop();
    nodes += 1;
    if (typeof value === 'string') {
      textChars += value.length;
    } else if (Array.isArray(value)) {
      if (nodes + pending.length + value.length > limits.maxNodes) return tooManyNodes(limits);
      for (const item of value) pending.push(item);
    } else if (value !== null && typeof value === 'object') {
      for (const [key, item] of Object.entries(value)) {
        textChars += key.length;
        pending.push(item);
      }
    }
    // Everything pending will be counted too, so a budget it already exceeds fails now.
    if (nodes + pending.length > limits.maxNodes) return tooManyNodes(limits);
    if (textChars > limits.maxTextChars) return `document expands to more than ${limits.maxTextChars} characters of text (YAML aliases?)`;
  }
  return undefined;
}

const tooManyNodes = (limits: ExpansionLimits): string => `document expands to more than ${limits.maxNodes} nodes (YAML aliases?)`;
