import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';

// A process's environment is readable by its own user through /proc/<pid>/environ for as long as
// it lives, whatever the process later deletes from `process.env` (the kernel shows the block it
// was started with). So the secrets must not be in the block at all: the CLI re-executes itself
// (same pid, process.execve) with an environment without them, and hands them over in a file
// only this user can read, which the new image reads and removes before anything else runs.

/** Variables that hold secrets: never left in the environment of a running `svc` process. */
export const SECRET_VARIABLES = [
  'SVC_WORKER_TOKEN',
  'SVC_GATEWAY_SECRET',
  'SVC_API_TOKEN',
  'SVC_DATABASE_URL',
  // May carry the bus's login (nats://user:password@host).
  'SVC_NATS_URL',
  'SVC_ENCRYPTION_KEY',
  'SVC_ENCRYPTION_KEYS_OLD',
  'SVC_OIDC_CLIENT_SECRET',
  'GOOGLE_OAUTH_ACCESS_TOKEN',
  // The OTLP exporter's headers: a collector's API key (`authorization=Bearer …`) as a rule.
  'OTEL_EXPORTER_OTLP_HEADERS',
  'OTEL_EXPORTER_OTLP_TRACES_HEADERS',
  // May carry the collector's login (http://user:password@host, sent as Basic auth).
  'OTEL_EXPORTER_OTLP_ENDPOINT',
  'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT',
  // libpq's password variable: pg reads it from process.env for any connection given none, so a
  // postgres task whose credential has no password would send it to the credential's host.
  'PGPASSWORD',
] as const;

const HANDOFF_VARIABLE = 'SVC_SECRETS_HANDOFF';
// Memory-backed where the machine has it, so the handed-over file never reaches a disk.
const HANDOFF_PARENT = existsSync('/dev/shm') ? '/dev/shm' : tmpdir();

let handedOver: Readonly<Record<string, string>> = Object.freeze({});

/**
 * Called once at the CLI's entry, before any other work: takes over secrets handed from the image
 * before, or, when SECRET_VARIABLES are set in the environment, re-executes this process without
 * them (Node 24's process.execve keeps the pid). Returns in the process whose environment holds none.
 */
export function moveSecretsOutOfEnvironment(): void {
  const handoff = process.env[HANDOFF_VARIABLE];
  if (handoff !== undefined) {
    delete process.env[HANDOFF_VARIABLE];
    handedOver = Object.freeze(readHandoff(handoff));
    return;
  }
  const secrets: Record<string, string> = {};
  for (const name of SECRET_VARIABLES) {
    const value = process.env[name];
    if (value !== undefined && value !== '') secrets[name] = value;
  }
  if (Object.keys(secrets).length === 0 || typeof process.execve !== 'function') return;

  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (value !== undefined && !(SECRET_VARIABLES as readonly string[]).includes(name)) env[name] = value;
  }
  const dir = mkdtempSync(join(HANDOFF_PARENT, 'svc-secrets-')); // mode 0700
  const file = join(dir, 'environment.json');
  writeFileSync(file, JSON.stringify(secrets), { mode: 0o600, flag: 'wx' });
  env[HANDOFF_VARIABLE] = file;
  try {
    process.execve(process.execPath, [process.execPath, ...process.execArgv, ...process.argv.slice(1)], env);
  } catch (err) {
    // Not replaced: go on as we are (the secrets stay in this environment) rather than not at all.
    rmSync(dir, { recursive: true, force: true });
    process.stderr.write(`svc: could not restart without secrets in the environment (${err instanceof Error ? err.message : String(err)})\n`);
  }
}

/** The environment the service reads its settings from: `process.env` plus the secrets handed over in memory. */
export function processEnvironment(): Readonly<Record<string, string | undefined>> {
  return { ...process.env, ...handedOver };
}

// Only a file this module wrote is read, and only its own directory removed: the variable is
// ordinary environment, and a path set by hand must not make `svc` delete anything else.
const HANDOFF_FILE = /^svc-secrets-[A-Za-z0-9]{6}\/environment\.json$/;

function readHandoff(file: string): Record<string, string> {
  const inside = relative(HANDOFF_PARENT, file);
  if (!HANDOFF_FILE.test(inside)) return {};
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } finally {
    rmSync(join(file, '..'), { recursive: true, force: true });
  }
  const parsed: unknown = JSON.parse(text);
  const out: Record<string, string> = {};
  if (parsed && typeof parsed === 'object') {
    for (const name of SECRET_VARIABLES) {
      const value: unknown = Reflect.get(parsed, name);
      if (typeof value === 'string') out[name] = value;
    }
  }
  return out;
}
