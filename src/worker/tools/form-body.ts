import { isObject } from '../../objects.ts';

/** Whether a content type says the body is a form (application/x-www-form-urlencoded, any parameters). */
export function isFormType(contentType: string | null): boolean {
  return contentType !== null && /^\s*application\/x-www-form-urlencoded\s*(?:;|$)/i.test(contentType);
}

/**
 * A mapping as form fields (`a=1&b=x+y`): text, numbers and booleans as text, a list's items as
 * the field repeated, none (null) left out, a nested list or mapping as its JSON text; undefined
 * when `body` is not a mapping (a form has no other shape).
 */
export function formBody(body: unknown): string | undefined {
  if (!isObject(body)) return undefined;
  const form = new URLSearchParams();
  for (const [name, value] of Object.entries(body)) {
    for (const item of Array.isArray(value) ? value : [value]) {
      if (item === null || item === undefined) continue;
      form.append(name, typeof item === 'object' ? JSON.stringify(item) : String(item));
    }
  }
  return form.toString();
}
