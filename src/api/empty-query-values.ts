import type { FastifyRequest } from 'fastify';
import { isObject } from '../objects.ts';

/**
 * A list route's preValidation hook: a query parameter sent empty (`?status=&path=&limit=`, as a
 * form or a URL template leaves an unset filter) is taken as not sent, so its default applies and
 * no filter matches nothing; an empty one of several (`?label=&label=a:b`) is dropped.
 */
export async function emptyQueryValuesAbsent(req: FastifyRequest): Promise<void> {
  const query = req.query;
  if (!isObject(query)) return;
  for (const [name, value] of Object.entries(query)) {
    const kept = Array.isArray(value) ? value.filter((v) => v !== '') : value;
    if (kept === '' || (Array.isArray(kept) && kept.length === 0)) delete query[name];
    else if (Array.isArray(kept) && kept.length === 1) query[name] = kept[0];
    else query[name] = kept;
  }
}
