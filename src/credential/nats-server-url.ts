/**
 * The server a `nats` credential names: its `url`, else the first of `servers` (DESIGN.md's name:
 * one URL, a comma-separated list of them, or a list), trimmed; undefined when it names none. One
 * server is enough to reach a NATS cluster: it tells its clients of the others.
 */
export function natsServerUrl(data: Record<string, unknown>): string | undefined {
  if (typeof data.url === 'string' && data.url.trim() !== '') return data.url.trim();
  const listed = typeof data.servers === 'string' ? data.servers.split(',') : Array.isArray(data.servers) ? data.servers : [];
  for (const entry of listed) if (typeof entry === 'string' && entry.trim() !== '') return entry.trim();
  return undefined;
}
