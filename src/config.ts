import { isIP } from 'node:net';
import { readFileSync } from 'node:fs';
import * as v from 'valibot';
import { processEnvironment, SECRET_VARIABLES } from './secret-environment.ts';
import { isNatsBusSetting } from './bus/nats-target.ts';
import { isTrueText } from './true-text.ts';
import { isProxyRange } from './is-proxy-range.ts';
import { holdsUserinfo } from './url-userinfo.ts';

/** SVC_MCP_TOKEN_HOSTS's default: Google's APIs, where a Google token is for (workers read it from their environment). */
export const MCP_TOKEN_HOSTS_DEFAULT = 'googleapis.com';

// Every environment variable the service reads, parsed once at start, validated, frozen.
// Defaults live here and nowhere else.

const bool = (fallback: boolean) =>
  v.pipe(
    v.optional(v.string(), String(fallback)),
    v.trim(),
    v.toLowerCase(),
    v.picklist(['true', 'false', '1', '0', 'yes', 'no', 'on', 'off'], 'expects true or false'),
    v.transform((s) => isTrueText(s)),
  );

/**
 * What postgres tasks without `auth` may do on the service database (SVC_ALLOW_SERVICE_DB_TASKS):
 * nothing (`off`), read as its reader role (`read_only`: `read_only` tasks, what `svc doctor detect`
 * needs), or that and write as the service's own user (`on`, also true/1/yes: whoever registers
 * playbooks then has the service user's powers over the service database).
 */
export type ServiceDbTasks = 'off' | 'read_only' | 'on';
const serviceDbTasks = v.pipe(
  v.optional(v.string(), 'off'),
  v.trim(),
  v.toLowerCase(),
  v.picklist(['read_only', 'true', 'false', '1', '0', 'yes', 'no', 'on', 'off'], 'expects read_only, true or false'),
  v.transform((s): ServiceDbTasks => (s === 'read_only' ? 'read_only' : ['true', '1', 'yes', 'on'].includes(s) ? 'on' : 'off')),
);

/** A shell task's network (SVC_SHELL_NETWORK): the host's, none, or the outside only (docs/operations.md). */
export type ShellNetwork = 'host' | 'none' | 'external';

const int = (fallback: number, min: number, max = Number.MAX_SAFE_INTEGER) =>
  v.pipe(
    v.optional(v.string(), String(fallback)),
    v.trim(),
    v.regex(/^-?\d+$/, `expects an integer from ${min} to ${max}`),
    v.transform(Number),
    v.number(),
    v.minValue(min, `expects an integer from ${min} to ${max}`),
    v.maxValue(max, `expects an integer from ${min} to ${max}`),
  );

/** The longest wait of a Node timer (setTimeout's 2^31-1 ms): Node runs a longer one after 1 ms instead. */
export const MAX_TIMER_MS = 2 ** 31 - 1;
/**
 * The longest interval or timeout a setting in seconds may ask for (a timer's, in whole seconds):
 * a larger SVC_*_INTERVAL_SECONDS made the job run back to back (hundreds of times a second)
 * rather than rarely, and a larger timeout would time out at once.
 */
export const MAX_INTERVAL_SECONDS = Math.floor(MAX_TIMER_MS / 1000);

/**
 * The longest SVC_RETENTION_DAYS (about 2,700 years): retention compares finish times with now
 * less that many days, and PostgreSQL's timestamps end at 4713 BC, so a longer one (from about
 * 2,460,000 days) failed every partition run with "timestamp out of range". Unset keeps everything.
 */
export const MAX_RETENTION_DAYS = 1_000_000;
/**
 * The longest age a setting compares timestamps with (now less that many seconds: stale, hard
 * timeout, pending retry, auto-resume's window), as long as MAX_RETENTION_DAYS: a larger one
 * (from about 2.1e11 s) failed every reaper sweep, or every claim, with "timestamp out of range".
 */
export const MAX_AGE_SECONDS = MAX_RETENTION_DAYS * 86_400;
const MAX_AGE_MINUTES = MAX_AGE_SECONDS / 60;
const RETENTION_MESSAGE = `expects a number of days > 0, at most ${MAX_RETENTION_DAYS} (unset: keep everything)`;

// A decimal as people write one: `.5` and `5.` too (Python's float() takes them, and the spec's
// limits came from there); `.5` was refused with "expects a number from 0.001 to ...".
const DECIMAL = /^(?:\d+(?:\.\d*)?|\.\d+)$/;

const num = (fallback: number, min: number, max = Number.MAX_SAFE_INTEGER) => {
  const expects = max === Number.MAX_SAFE_INTEGER ? `expects a number >= ${min}` : `expects a number from ${min} to ${max}`;
  return v.pipe(
    v.optional(v.string(), String(fallback)),
    v.trim(),
    v.regex(DECIMAL, expects),
    v.transform(Number),
    v.number(),
    v.minValue(min, expects),
    v.maxValue(max, expects),
  );
};

const httpUrl = (what: string) => v.optional(v.pipe(v.string(), v.trim(), v.url(`expects ${what}`), v.regex(/^https?:\/\//i, `expects ${what}`)));

// Spans go as OTLP/HTTP JSON (@opentelemetry/exporter-trace-otlp-http); an OTLP/HTTP receiver
// takes both encodings on the same path, so http/protobuf (the spec's default) is accepted too.
// `key=value` pairs, comma separated (OTEL_RESOURCE_ATTRIBUTES, OTEL_EXPORTER_OTLP_HEADERS): the
// OpenTelemetry specification's list, values percent-encoded.
const KEY_VALUE_LIST = /^(?:[^=,\s]+=[^,]*(?:\s*,\s*[^=,\s]+=[^,]*)*)?$/;
const otlpHeaders = v.optional(v.pipe(v.string(), v.trim(), v.regex(KEY_VALUE_LIST, 'expects header=value pairs, comma separated')));
const otlpProtocol = v.optional(v.pipe(v.string(), v.trim(), v.toLowerCase(), v.picklist(['http/json', 'http/protobuf'], 'expects http/json or http/protobuf (spans are sent over OTLP/HTTP; grpc is not supported)')));

const POSTGRES_URL_MESSAGE = 'expects a postgres:// or postgresql:// URL';
const postgresUrl = v.optional(
  v.pipe(v.string(), v.trim(), v.url(POSTGRES_URL_MESSAGE), v.regex(/^postgres(?:ql)?:\/\//i, POSTGRES_URL_MESSAGE)),
);

/** AES-256 sealing keys are this long; checked here so a bad key stops the process before any work. */
export const ENCRYPTION_KEY_BYTES = 32;
const KEY_MESSAGE = `expects base64 of exactly ${ENCRYPTION_KEY_BYTES} bytes (\`openssl rand -base64 32\`)`;
// Standard or URL-safe alphabet, as the keyring decodes them.
const BASE64_KEY = /^(?:[A-Za-z0-9+/]+={0,2}|[A-Za-z0-9_-]+={0,2})$/;

/** True when `text` is base64 (or base64url) of exactly ENCRYPTION_KEY_BYTES bytes, as the keyring reads it. */
export function isEncryptionKey(text: string): boolean {
  return BASE64_KEY.test(text) && Buffer.from(text, /[-_]/.test(text) ? 'base64url' : 'base64').length === ENCRYPTION_KEY_BYTES;
}

const encryptionKey = v.optional(v.pipe(v.string(), v.trim(), v.minLength(1, KEY_MESSAGE), v.check(isEncryptionKey, KEY_MESSAGE)));

// A comma list of keys that still open old rows; empty items are ignored. The message names
// the item by position, never by value.
const oldEncryptionKeys = v.optional(
  v.pipe(
    v.string(),
    v.trim(),
    v.rawCheck(({ dataset, addIssue }) => {
      if (!dataset.typed) return;
      const items = dataset.value.split(',').map((item) => item.trim());
      const bad = items.findIndex((item) => item !== '' && !isEncryptionKey(item));
      if (bad < 0) return;
      // One key per line (as secret files are often written) reads as one bad item: say why.
      const spaced = /\s/.test(items[bad]) ? '; the keys are separated by commas, not by line breaks or spaces' : '';
      addIssue({ message: `item ${bad + 1} of ${items.length}: ${KEY_MESSAGE}${spaced}` });
    }),
  ),
);

/**
 * The largest SVC_SHELL_MEMORY_MB and SVC_SHELL_FILE_MB (8 PiB): their bytes are written for
 * prlimit and bwrap as a whole number, which past 2^53 came out as `9.44e+21`; the worker then
 * found the sandbox broken and refused every shell task.
 */
export const MAX_SHELL_MB = Math.floor(Number.MAX_SAFE_INTEGER / (1024 * 1024));

/** The most slots a worker pool (or `svc start`'s in-process one) runs. */
export const MAX_WORKER_CONCURRENCY = 1024;

/** Shared secrets (worker token, gateway key) are at least this long. */
export const MIN_SECRET_CHARS = 32;
// They travel in headers, so visible ASCII only; `openssl rand -base64 32` makes a good one.
const secret = v.optional(
  v.pipe(v.string(), v.trim(), v.regex(new RegExp(`^[\\x21-\\x7e]{${MIN_SECRET_CHARS},}$`), `expects at least ${MIN_SECRET_CHARS} visible ASCII characters (\`openssl rand -base64 32\`)`)),
);

const ASYMMETRIC_MESSAGE = 'expects asymmetric JWS algorithms (RS256, PS256, ES256, EdDSA, ...), comma separated';

// A comma list of origins (`https://gui.example.com`), each parsed as a URL with no path; empty
// items are ignored. Kept as the normalised origin strings.
const originList = (what: string) =>
  v.optional(
    v.pipe(
      v.string(),
      v.rawTransform(({ dataset, addIssue, NEVER }) => {
        const out: string[] = [];
        for (const item of dataset.value.split(',').map((s) => s.trim())) {
          if (item === '') continue;
          let parsed: URL | undefined;
          try {
            parsed = new URL(item);
          } catch {
            parsed = undefined;
          }
          if (!parsed || !/^https?:$/.test(parsed.protocol) || (parsed.pathname !== '/' && parsed.pathname !== '') || parsed.search || parsed.hash) {
            addIssue({ message: `expects ${what}; item ${out.length + 1} is not one` });
            return NEVER;
          }
          out.push(parsed.origin);
        }
        return out;
      }),
    ),
    '',
  );

const envSchema = v.object({
  SVC_PORT: int(8082, 0, 65535),
  SVC_HOST: v.optional(v.pipe(v.string(), v.trim(), v.minLength(1)), '127.0.0.1'),
  // none: no caller checks (loopback only); token: API tokens with roles; gateway: identities
  // asserted by `svc gateway`. Worker routes take the worker token in every mode.
  SVC_AUTH: v.optional(v.picklist(['none', 'token', 'gateway'], 'expects none, token or gateway'), 'none'),
  // SVC_AUTH=token: refused credentials a source address may send in a minute before 429
  // (src/api/failed-token-limit.ts).
  SVC_AUTH_FAILURES_PER_MINUTE: int(30, 1),
  SVC_WORKER_TOKEN: secret,
  SVC_GATEWAY_SECRET: secret,
  // What `svc run` and other clients send as `Authorization: Bearer` (an API token).
  SVC_API_TOKEN: v.optional(v.pipe(v.string(), v.trim(), v.regex(/^[\x21-\x7e]+$/, 'expects a token of visible ASCII characters'))),
  SVC_DATABASE_URL: postgresUrl,
  SVC_DATA_DIR: v.optional(v.pipe(v.string(), v.trim(), v.minLength(1)), './.svc'),
  SVC_ENCRYPTION_KEY: encryptionKey,
  SVC_ENCRYPTION_KEYS_OLD: oldEncryptionKeys,
  SVC_WORKER_CONCURRENCY: int(4, 0, MAX_WORKER_CONCURRENCY),
  // http(s) only, as the message says: clients and workers speak nothing else (ftp:// was taken, then "unreachable").
  SVC_SERVER_URL: v.optional(v.pipe(v.string(), v.trim(), v.url('expects an http(s) URL'), v.regex(/^https?:\/\//i, 'expects an http(s) URL')), 'http://127.0.0.1:8082'),
  // Workers: the platform metadata service's token endpoint, the last source of an mcp task's
  // bearer token (after workload.access_token, the task's credential, GOOGLE_OAUTH_ACCESS_TOKEN).
  // Unset: no metadata service is asked. The worker's tools read it from their environment.
  SVC_MCP_METADATA_URL: httpUrl('an http(s) URL of the metadata token endpoint'),
  // Workers: the hosts (and their subdomains, comma separated) that may receive the worker's own
  // token (GOOGLE_OAUTH_ACCESS_TOKEN, the metadata service's), whatever endpoint a playbook names.
  SVC_MCP_TOKEN_HOSTS: v.optional(v.pipe(v.string(), v.trim(), v.regex(/^[A-Za-z0-9.:\[\]-]+(?:\s*,\s*[A-Za-z0-9.:\[\]-]+)*$/, 'expects host names, comma separated')), MCP_TOKEN_HOSTS_DEFAULT),
  SVC_LOG_LEVEL: v.optional(
    v.picklist(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], 'expects one of fatal, error, warn, info, debug, trace, silent'),
    'info',
  ),
  SVC_ALLOW_SERVICE_DB_TASKS: serviceDbTasks,
  // Shell tasks (docs/operations.md, "What a task can reach"): run in a bubblewrap sandbox unless
  // `off`, an explicit opt-out the worker logs loudly at start. The limits apply to each task.
  SVC_SHELL_SANDBOX: v.optional(v.picklist(['on', 'off'], 'expects on or off'), 'on'),
  SVC_SHELL_CPU_SECONDS: int(300, 1),
  SVC_SHELL_MEMORY_MB: int(1024, 16, MAX_SHELL_MB),
  SVC_SHELL_MAX_PROCESSES: int(256, 4),
  SVC_SHELL_OUTPUT_BYTES: int(1024 * 1024, 1024),
  // Kept of each task attempt's output in its `call.attempt` event and in GET .../steps/{step}.
  SVC_TASK_OUTPUT_BYTES: int(64 * 1024, 256),
  SVC_SHELL_FILE_MB: int(1024, 1, MAX_SHELL_MB),
  // A task's network: the host's (true, the default), none (false), or `external`: the network
  // from a namespace of its own (passt's pasta), never this machine's loopback services.
  SVC_SHELL_NETWORK: v.pipe(
    v.optional(v.string(), 'true'),
    v.trim(),
    v.toLowerCase(),
    v.picklist(['true', 'false', '1', '0', 'yes', 'no', 'on', 'off', 'external'], 'expects true, false or external'),
    v.transform((s): ShellNetwork => (s === 'external' ? 'external' : ['true', '1', 'yes', 'on'].includes(s) ? 'host' : 'none')),
  ),
  // Extra host paths a sandboxed task may read (absolute, comma separated), bound read-only.
  SVC_SHELL_SANDBOX_BINDS: v.optional(
    v.pipe(v.string(), v.trim(), v.regex(/^(?:\/[^,]*(?:\s*,\s*\/[^,]*)*)?$/, 'expects absolute paths, comma separated')),
    '',
  ),
  SVC_AUTO_RESUME_MODE: v.optional(v.picklist(['restart', 'cancel'], 'expects restart or cancel'), 'restart'),
  SVC_AUTO_RESUME_MIN_STALE_SECONDS: int(30, 0, MAX_AGE_SECONDS),
  RESUME_WINDOW_MINUTES: int(5, 1, MAX_AGE_MINUTES),
  SVC_BATCH_MAX_EVENTS: int(256, 1),
  SVC_BATCH_MAX_BYTES: int(2 * 1024 * 1024, 1024),
  // The longest a request may take to arrive, headers and body, at the server and the gateway (src/request-timeout.ts).
  SVC_REQUEST_TIMEOUT_SECONDS: int(300, 1, MAX_INTERVAL_SECONDS),
  SVC_BATCH_ACCEPT_ENQUEUE_TIMEOUT_SECONDS: num(0.25, 0.001, MAX_INTERVAL_SECONDS),
  SVC_BATCH_ACCEPT_QUEUE_MAXSIZE: int(1024, 1),
  SVC_BATCH_ACCEPT_WORKERS: int(1, 1, 64),
  SVC_BATCH_PROCESSING_TIMEOUT_SECONDS: num(15, 0.1, MAX_INTERVAL_SECONDS),
  SVC_BATCH_STATUS_STREAM_POLL_SECONDS: num(0.5, 0.05, MAX_INTERVAL_SECONDS),
  // The event log's ranges (src/partitions/): ids per range, how often they are kept, retention
  // (unset: none; days may be fractional) and where dropped ranges are archived (unset: not).
  SVC_EVENT_PARTITION_EXECUTIONS: int(1_000_000, 10),
  SVC_PARTITION_INTERVAL_SECONDS: int(60, 1, MAX_INTERVAL_SECONDS),
  SVC_RETENTION_DAYS: v.optional(
    v.pipe(v.string(), v.trim(), v.regex(DECIMAL, RETENTION_MESSAGE), v.transform(Number), v.number(), v.gtValue(0, RETENTION_MESSAGE), v.maxValue(MAX_RETENTION_DAYS, RETENTION_MESSAGE)),
  ),
  SVC_ARCHIVE_DIR: v.optional(v.pipe(v.string(), v.trim(), v.regex(/^\//, 'expects an absolute path'))),
  // The bus (src/bus/): NATS JetStream at this URL (nats:// or tls://), else PostgreSQL LISTEN/NOTIFY.
  SVC_NATS_URL: v.optional(v.pipe(v.string(), v.trim(), v.regex(/^(nats|tls):\/\/[^\s]+$/, 'expects a nats:// or tls:// URL'), v.check(isNatsBusSetting, 'expects nats:// or tls:// URLs with a host, separated by commas'))),
  // Deployments that share one NATS each name their own stream and subjects (src/bus/nats.ts natsNames).
  SVC_NATS_NAMESPACE: v.optional(v.pipe(v.string(), v.trim(), v.regex(/^[A-Za-z0-9_-]{1,32}$/, 'expects 1 to 32 letters, digits, _ or - (a NATS subject token and stream name)'))),
  SVC_COMMAND_REAPER_ENABLED: bool(true),
  SVC_COMMAND_REAPER_INTERVAL_SECONDS: int(60, 1, MAX_INTERVAL_SECONDS),
  // Auto-resume waits this long after a start (src/periodic/auto-resume.ts): a timer's longest wait.
  SVC_COMMAND_REAPER_WORKER_STALE_SECONDS: int(60, 1, MAX_INTERVAL_SECONDS),
  SVC_COMMAND_REAPER_HEALTHY_HARD_TIMEOUT_SECONDS: int(1800, 1, MAX_AGE_SECONDS),
  SVC_COMMAND_REAPER_PENDING_RETRY_SECONDS: int(60, 1, MAX_AGE_SECONDS),
  SVC_COMMAND_REAPER_MAX_PER_RUN: int(100, 1),
  // Running executions whose machine snapshot a server keeps in memory (actors/hot-snapshots.ts
  // has the default): more routes without reading the execution, for memory.
  SVC_HOT_SNAPSHOTS: v.optional(v.pipe(v.string(), v.trim(), v.regex(/^[1-9]\d{0,8}$/, 'expects a whole number of executions, at least 1'), v.transform(Number))),
  // Unset: a healthy worker's claim is never taken over. 0 would take over every claim at once.
  SVC_COMMAND_CLAIM_HEALTHY_WORKER_HARD_TIMEOUT_SECONDS: v.optional(
    v.pipe(
      v.string(),
      v.trim(),
      v.regex(/^\d+$/, `expects a whole number of seconds from 1 to ${MAX_AGE_SECONDS}`),
      v.transform(Number),
      v.minValue(1, `expects a whole number of seconds from 1 to ${MAX_AGE_SECONDS}`),
      v.maxValue(MAX_AGE_SECONDS, `expects a whole number of seconds from 1 to ${MAX_AGE_SECONDS}`),
    ),
  ),
  // The gateway (`svc gateway`, docs/gateway.md). Origins and public URLs are comma lists: several
  // public hostnames may route to one gateway.
  CORS_ALLOWED_ORIGINS: originList('comma-separated origins (scheme://host[:port])'),
  GATEWAY_PUBLIC_URL: originList('comma-separated http(s) URLs of the gateway (no path)'),
  SVC_GATEWAY_PORT: int(8090, 0, 65535),
  SVC_GATEWAY_HOST: v.optional(v.pipe(v.string(), v.trim(), v.minLength(1)), '127.0.0.1'),
  SVC_OIDC_ISSUER: httpUrl('the http(s) issuer URL of an OpenID provider'),
  SVC_OIDC_CLIENT_ID: v.optional(v.pipe(v.string(), v.trim(), v.minLength(1))),
  SVC_OIDC_CLIENT_SECRET: v.optional(v.pipe(v.string(), v.trim(), v.minLength(1))),
  // The `aud` bearer JWTs must carry; the client id when unset.
  SVC_OIDC_AUDIENCE: v.optional(v.pipe(v.string(), v.trim(), v.minLength(1))),
  SVC_OIDC_SCOPES: v.optional(v.pipe(v.string(), v.trim(), v.minLength(1)), 'openid profile email'),
  // Where roles are in the token's claims (a dotted path: `realm_access.roles` for Keycloak).
  SVC_OIDC_ROLES_CLAIM: v.optional(v.pipe(v.string(), v.trim(), v.regex(/^[^.\s]+(\.[^.\s]+)*$/, 'expects a claim name or dotted path')), 'roles'),
  // Optional: a claim listing the playbook path patterns a caller may start (`reports/*`, `etl/**`);
  // callers whose token carries it may start executions of matching paths only.
  SVC_OIDC_PATHS_CLAIM: v.optional(v.pipe(v.string(), v.trim(), v.regex(/^[^.\s]+(\.[^.\s]+)*$/, 'expects a claim name or dotted path'))),
  // `provider-role=svc-role` pairs, comma separated; the default maps the role names to themselves.
  SVC_OIDC_ROLE_MAP: v.optional(
    v.pipe(v.string(), v.trim(), v.regex(/^[^=,\s]+=(viewer|operator|admin)(\s*,\s*[^=,\s]+=(viewer|operator|admin))*$/, 'expects name=viewer|operator|admin pairs, comma separated')),
    'viewer=viewer,operator=operator,admin=admin',
  ),
  // Bearer JWT algorithms accepted (asymmetric only: `none` and HMAC are never accepted).
  SVC_OIDC_ALGORITHMS: v.optional(
    v.pipe(v.string(), v.trim(), v.regex(/^(?:(?:RS|PS|ES)(?:256|384|512)|EdDSA)(?:\s*,\s*(?:(?:RS|PS|ES)(?:256|384|512)|EdDSA))*$/, ASYMMETRIC_MESSAGE)),
    'RS256,PS256,ES256,EdDSA',
  ),
  // Addresses (or CIDRs) of proxies in front of the gateway whose X-Forwarded-For/-Proto it believes;
  // comma list. Unset: the socket's address is the client's (limits and audit lines use it).
  SVC_GATEWAY_TRUSTED_PROXIES: v.optional(
    v.pipe(v.string(), v.trim(), v.check((list) => list.split(',').every((item) => isProxyRange(item.trim())), 'expects addresses or CIDRs, comma separated')),
  ),
  // A session's expiry is now() + these in PostgreSQL: longer ones failed every login ("interval out of range").
  SVC_GATEWAY_SESSION_IDLE_SECONDS: int(8 * 3600, 60, MAX_AGE_SECONDS),
  SVC_GATEWAY_SESSION_MAX_SECONDS: int(7 * 24 * 3600, 60, MAX_AGE_SECONDS),
  SVC_GATEWAY_RATE_LIMIT_PER_MINUTE: int(600, 1),
  SVC_GATEWAY_AUTH_RATE_LIMIT_PER_MINUTE: int(30, 1),
  // OpenTelemetry traces (docs/operations.md, "Observability"), the standard variables: off unless
  // an OTLP endpoint is set. Workers decide from the same parsed ones (they add `traceparent` to
  // http tasks, src/telemetry/traces-configured.ts); timeouts and TLS files (..._TIMEOUT,
  // ..._CERTIFICATE) are read by the exporter itself. The headers (a collector's key) and the
  // endpoints (a login in the URL) are secrets: moved out of the environment
  // (src/secret-environment.ts) or read from ..._FILE, and passed on from here.
  OTEL_SDK_DISABLED: bool(false),
  OTEL_TRACES_EXPORTER: v.optional(v.pipe(v.string(), v.trim(), v.toLowerCase(), v.picklist(['otlp', 'none'], 'expects otlp or none')), 'otlp'),
  OTEL_EXPORTER_OTLP_ENDPOINT: httpUrl('an http(s) URL of an OTLP/HTTP receiver (spans go to <url>/v1/traces)'),
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: httpUrl('the http(s) URL spans are sent to (an OTLP/HTTP receiver\'s /v1/traces)'),
  OTEL_EXPORTER_OTLP_PROTOCOL: otlpProtocol,
  OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: otlpProtocol,
  OTEL_EXPORTER_OTLP_HEADERS: otlpHeaders,
  OTEL_EXPORTER_OTLP_TRACES_HEADERS: otlpHeaders,
  // Unset: the `service.name` of OTEL_RESOURCE_ATTRIBUTES, else `svc` (src/telemetry/start-tracing.ts).
  OTEL_SERVICE_NAME: v.optional(v.pipe(v.string(), v.trim(), v.minLength(1))),
  OTEL_RESOURCE_ATTRIBUTES: v.optional(v.pipe(v.string(), v.trim(), v.regex(KEY_VALUE_LIST, 'expects key=value pairs, comma separated')), ''),
  OTEL_BSP_SCHEDULE_DELAY: int(5000, 0, MAX_TIMER_MS),
  OTEL_BSP_MAX_QUEUE_SIZE: int(2048, 1),
  OTEL_BSP_MAX_EXPORT_BATCH_SIZE: int(512, 1),
  OTEL_BSP_EXPORT_TIMEOUT: int(30000, 1, MAX_TIMER_MS),
  // Hashed into every trace and span id (src/telemetry/trace-ids.ts), the same on servers and
  // workers: deployments (or a database started afresh) sending to one backend keep apart traces
  // of executions with the same ids.
  SVC_TRACE_SALT: v.optional(v.pipe(v.string(), v.trim()), ''),
});

export type Config = Readonly<v.InferOutput<typeof envSchema>>;

/** The name of every variable loadConfig reads (docs/operations.md's *Settings* lists each). */
export const CONFIG_VARIABLES: readonly string[] = Object.freeze(Object.keys(envSchema.entries));

/** Thrown for an invalid environment; its message is one line naming the variable. */
export class ConfigError extends Error {
  override name = 'ConfigError';
}

/** Parses the environment once; throws ConfigError naming the first bad variable and what it expects. */
export function loadConfig(env: Readonly<Record<string, string | undefined>> = processEnvironment()): Config {
  const picked: Record<string, string> = {};
  // Variables whose value came from their _FILE: a refusal names the file, where the value is.
  const fromFile = new Set<string>();
  for (const key of Object.keys(envSchema.entries)) {
    const direct = env[key];
    const value = direct || secretFromFile(key, env);
    // An empty variable means "unset": `SVC_DATABASE_URL= npm start` should fall back to the default.
    if (value !== undefined && value !== '') picked[key] = value;
    if (!direct && value) fromFile.add(key);
  }
  const result = v.safeParse(envSchema, picked);
  if (!result.success) {
    const issue = result.issues[0];
    const name = v.getDotPath(issue) ?? 'environment';
    // A secret's value (an OTLP endpoint's login too) is never echoed, nor one whose name says it may hold one.
    const secret = (SECRET_VARIABLES as readonly string[]).includes(name) || /KEY|PASSWORD|URL|TOKEN|SECRET|HEADERS/.test(name);
    const shown = name in picked && !secret ? ` (got ${JSON.stringify(picked[name])})` : '';
    if (fromFile.has(name)) throw new ConfigError(`invalid ${name}_FILE: ${env[`${name}_FILE`]} holds a bad ${name}: ${issue.message}${shown}`);
    throw new ConfigError(`invalid ${name}: ${issue.message}${shown}`);
  }
  return Object.freeze(result.output);
}

/**
 * The settings of a client command (`svc run`, `doctor`, `events`, ...): SVC_SERVER_URL unless
 * `serverFlag` overrides it, and SVC_API_TOKEN (or its _FILE); only those, so a bad server-side
 * variable does not stop a client. Throws ConfigError.
 */
export function loadClientConfig(serverFlag: string | undefined, env: Readonly<Record<string, string | undefined>> = processEnvironment()): Config {
  const config = loadConfig({
    SVC_SERVER_URL: serverFlag === undefined ? env.SVC_SERVER_URL : undefined,
    SVC_API_TOKEN: env.SVC_API_TOKEN,
    SVC_API_TOKEN_FILE: env.SVC_API_TOKEN_FILE,
  });
  // The client never sends such a URL, and its error would quote the password: refused, unquoted.
  if (serverFlag === undefined && holdsUserinfo(config.SVC_SERVER_URL)) {
    throw new ConfigError('invalid SVC_SERVER_URL: expects an http(s) URL without a user name or password (an API token goes in SVC_API_TOKEN)');
  }
  return config;
}

/**
 * A secret variable X may be given as a file instead: X_FILE names it (Docker and Kubernetes
 * secrets mount so), read once, trimmed; then no process holds the value in its environment.
 */
function secretFromFile(key: string, env: Readonly<Record<string, string | undefined>>): string | undefined {
  const file = (SECRET_VARIABLES as readonly string[]).includes(key) ? env[`${key}_FILE`] : undefined;
  if (file === undefined || file === '') return undefined;
  let value: string;
  try {
    value = readFileSync(file, 'utf8').trim();
  } catch (err) {
    const code = err instanceof Error && 'code' in err ? String(err.code) : 'unreadable';
    throw new ConfigError(`invalid ${key}_FILE: cannot read ${file} (${code})`);
  }
  // Not "unset": a secret mount not filled in would otherwise pass for no setting, and the embedded
  // default would generate a key (or worker token) of its own where the operator gave one.
  if (value === '') throw new ConfigError(`invalid ${key}_FILE: ${file} is empty (put the value in it, or unset ${key}_FILE)`);
  return value;
}

/** True for an address only this machine can reach: 127.0.0.0/8, ::1 (also IPv4-mapped), localhost. */
export function isLoopbackHost(host: string): boolean {
  const h = host.trim().toLowerCase().replace(/^\[(.*)\]$/, '$1');
  if (h === 'localhost' || h === '::1' || h === '0:0:0:0:0:0:0:1') return true;
  const v4 = h.startsWith('::ffff:') ? h.slice('::ffff:'.length) : h;
  return isIP(v4) === 4 && v4.startsWith('127.');
}

/**
 * What a server (not a worker or client) needs besides valid variables: `SVC_AUTH=none` only on a
 * loopback SVC_HOST, and `gateway` only with SVC_GATEWAY_SECRET. Throws ConfigError (one line).
 */
export function checkServerAuth(config: Config): void {
  if (config.SVC_AUTH === 'none' && !isLoopbackHost(config.SVC_HOST)) {
    throw new ConfigError(
      `SVC_HOST=${config.SVC_HOST} is not a loopback address and SVC_AUTH=none checks no caller: set SVC_AUTH=token (or gateway), or SVC_HOST=127.0.0.1`,
    );
  }
  if (config.SVC_AUTH === 'gateway' && !config.SVC_GATEWAY_SECRET) {
    throw new ConfigError('SVC_GATEWAY_SECRET is required with SVC_AUTH=gateway (the key the gateway signs identities with; `openssl rand -base64 32`)');
  }
}
