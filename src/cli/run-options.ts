import { parseArgs } from 'node:util';
import * as v from 'valibot';
import { ConfigError, loadClientConfig } from '../config.ts';
import { LABEL_KEY, LABEL_KEY_RULE } from '../label-key.ts';
import { optionErrorMessage, SERVER_FLAG_USERINFO, UsageError } from './usage-error.ts';
import { jsonObjectOption } from './json-option.ts';
import { holdsUserinfo } from '../url-userinfo.ts';

export type RunOptions = {
  /** A playbook file or a catalog path, as typed. */
  target: string;
  payload: Record<string, unknown>;
  /** `--set key=value`, in order: read per the playbook's declared input type (run-workload.ts). */
  sets: [string, string][];
  /** `--label key=value`: labels of the execution (GET /api/executions?label=key:value finds it). */
  labels: Record<string, string>;
  /** `--priority N` (0..9): this start's priority over the playbook's (flow control). */
  priority?: number;
  wait: boolean;
  json: boolean;
  serverUrl: string;
  /** SVC_API_TOKEN: sent as `Authorization: Bearer` when the server checks callers. */
  apiToken?: string;
};

export type ParsedRunOptions = { ok: true; options: RunOptions } | { ok: false; message: string; exitCode: number };

const serverUrl = v.pipe(v.string(), v.trim(), v.url(), v.regex(/^https?:\/\//i));

/** Parses `svc run` arguments; a usage problem comes back as a message with exit code 2 (78 for a bad SVC_SERVER_URL). */
export function parseRunOptions(argv: string[], env: Readonly<Record<string, string | undefined>>): ParsedRunOptions {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      options: { payload: { type: 'string' }, set: { type: 'string', multiple: true }, label: { type: 'string', multiple: true }, priority: { type: 'string' }, wait: { type: 'boolean' }, server: { type: 'string' }, json: { type: 'boolean' } },
      strict: true,
      allowPositionals: true,
    });
  } catch (err) {
    return { ok: false, message: optionErrorMessage(err, argv), exitCode: 2 };
  }
  const { values, positionals } = parsed;
  if (positionals.length !== 1) {
    return {
      ok: false,
      message: positionals.length ? `expects one playbook file or catalog path, got ${positionals.length}: ${positionals.join(' ')}` : 'expects a playbook file or a catalog path',
      exitCode: 2,
    };
  }

  let payload: Record<string, unknown> = {};
  try {
    if (values.payload !== undefined) payload = jsonObjectOption('--payload', values.payload, '{"limit": 5}');
  } catch (err) {
    if (err instanceof UsageError) return { ok: false, message: err.message, exitCode: err.exitCode };
    throw err;
  }

  const sets: [string, string][] = [];
  for (const item of values.set ?? []) {
    const eq = item.indexOf('=');
    const key = eq < 0 ? '' : item.slice(0, eq);
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(key)) return { ok: false, message: `--set expects key=value with key a name (letters, digits, _), got ${JSON.stringify(item)}`, exitCode: 2 };
    sets.push([key, item.slice(eq + 1)]);
  }

  const labels: Record<string, string> = {};
  for (const item of values.label ?? []) {
    const eq = item.indexOf('=');
    const key = eq < 0 ? '' : item.slice(0, eq);
    if (!LABEL_KEY.test(key)) return { ok: false, message: `--label expects key=value with key of ${LABEL_KEY_RULE}, got ${JSON.stringify(item)}`, exitCode: 2 };
    labels[key] = item.slice(eq + 1);
  }

  let priority: number | undefined;
  if (values.priority !== undefined) {
    if (!/^[0-9]$/.test(values.priority)) return { ok: false, message: `--priority expects an integer from 0 (lowest) to 9 (highest), got ${JSON.stringify(values.priority)}`, exitCode: 2 };
    priority = Number(values.priority);
  }

  let client;
  try {
    // Only the variables the client needs (a bad server-side setting must not stop `svc run`);
    // SVC_SERVER_URL only when --server does not replace it.
    client = loadClientConfig(values.server, env);
  } catch (err) {
    if (err instanceof ConfigError) return { ok: false, message: err.message, exitCode: 78 };
    throw err;
  }
  let url = client.SVC_SERVER_URL;
  if (values.server !== undefined) {
    const r = v.safeParse(serverUrl, values.server);
    if (!r.success) return { ok: false, message: `--server expects an http(s) URL, got ${JSON.stringify(values.server)}`, exitCode: 2 };
    if (holdsUserinfo(r.output)) return { ok: false, message: SERVER_FLAG_USERINFO, exitCode: 2 };
    url = r.output;
  }

  return {
    ok: true,
    options: { target: positionals[0], payload, sets, labels, ...(priority === undefined ? {} : { priority }), wait: values.wait ?? false, json: values.json ?? false, serverUrl: url, apiToken: client.SVC_API_TOKEN },
  };
}
