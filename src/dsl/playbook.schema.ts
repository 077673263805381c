import * as v from 'valibot';
import { ApiVersionSchema } from './api-version.ts';
import { TEMPLATE_MARK } from './template-ast.ts';
import { InputsSchema } from './inputs.schema.ts';
import { TriggerSchema } from '../triggers/trigger.schema.ts';
import { ROLES } from '../auth/roles.ts';
import { durationMs, MAX_DURATION_MS } from './duration.ts';
import { LIMIT_NAME, LIMIT_NAME_RULE } from '../flow/limit-name.ts';
import { ownKeysRecord } from '../own-keys-record.ts';
import { isObject } from '../objects.ts';
import { withoutUserinfo } from './parse-mcp-server.ts';
import { credentialReference } from './credential-reference.ts';
import { isAccessibleName } from './template-values.ts';
import { MAX_STEP_NAME_CHARS } from './step-name-limit.ts';

// Shape of a playbook document (DESIGN.md "Playbook DSL v1"). Semantic rules that need the whole
// document (unique names, arc targets) live in parse-playbook.ts; this file is shape only.
// Every block is strict (an unknown field is a problem, with "did you mean" when one is close):
// a typo would silently change behaviour. Only metadata is loose, for labels of other tools.

const identifier = /^[A-Za-z_][A-Za-z0-9_]*$/;
const nonEmptyString = v.pipe(v.string(), v.nonEmpty('must not be empty'));
// Step and task names become keys of plain objects (steps, tasks, runs): `__proto__` there sets
// an object's prototype instead of a key, and the run, its views and its simulation lose the step.
const keyName = v.pipe(nonEmptyString, v.notValue('__proto__', 'is reserved (JavaScript gives the key __proto__ a meaning of its own)'));
const anyRecord = ownKeysRecord(v.string(), v.unknown());
const positiveNumber = v.pipe(v.number(), v.minValue(0, 'must be >= 0'));

/** Template roots a loop iterator must not shadow. */
export const TEMPLATE_ROOTS = ['workload', 'keychain', 'args', 'vars', 'steps', 'tasks', 'outcome', 'loop', 'execution', 'signal'] as const;

export const RetrySchema = v.strictObject({
  attempts: v.optional(v.pipe(v.number(), v.integer('must be an integer'), v.minValue(1, 'must be >= 1')), 1),
  delay_seconds: v.optional(positiveNumber, 0),
  backoff: v.optional(v.pipe(v.number(), v.minValue(1, 'must be >= 1')), 1),
  max_delay_seconds: v.optional(positiveNumber),
  when: v.optional(v.string()),
});

/**
 * A task field that may be a template: a string holding template syntax passes here (templateProblems
 * checks its syntax) and the worker checks what it renders to, failing the task naming the field;
 * any other value must pass `schema`. lazy() keeps a literal's issues at their exact path.
 */
export function templated<S extends v.GenericSchema>(schema: S) {
  return v.lazy((input: unknown): v.GenericSchema<unknown, v.InferOutput<S> | string> =>
    typeof input === 'string' && TEMPLATE_MARK.test(input) ? v.string() : schema,
  );
}

const limitName = v.pipe(v.string(), v.regex(LIMIT_NAME, LIMIT_NAME_RULE));
/** The longest a flow-control key template may be (it renders to the key). */
const keyTemplate = v.pipe(v.string(), v.maxLength(1000, 'must be at most 1000 characters'));

/** A task's `limit`: its command waits for room and tokens on the named limit's key (DESIGN.md "Flow control"). */
export const TaskLimitSchema = v.strictObject({ name: limitName, key: v.optional(keyTemplate) });

const commonTaskEntries = {
  name: v.optional(keyName),
  limit: v.optional(TaskLimitSchema),
  auth: v.optional(templated(credentialReference)),
  retry: v.optional(RetrySchema),
  timeout_seconds: v.optional(templated(v.pipe(v.number(), v.gtValue(0, 'must be > 0')))),
};

const HTTP_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS'] as const;

/**
 * A literal URL the worker would refuse (src/worker/tools/http-url.ts: absolute, http or https, no
 * user name or password, which fetch refuses quoting the URL) is refused at registration, not by
 * every run's task; a template is checked once rendered. An http task's url, an mcp task's endpoint.
 */
const httpUrl = templated(
  v.pipe(
    nonEmptyString,
    v.check((text) => URL.canParse(text) && /^https?:$/.test(new URL(text).protocol), 'must be an absolute http or https URL'),
    withoutUserinfo,
  ),
);

export const HttpTaskSchema = v.strictObject({
  ...commonTaskEntries,
  kind: v.literal('http'),
  method: v.optional(templated(v.pipe(v.string(), v.toUpperCase(), v.picklist(HTTP_METHODS))), 'GET'),
  url: httpUrl,
  headers: v.optional(templated(anyRecord)),
  params: v.optional(templated(anyRecord)),
  body: v.optional(v.unknown()),
  accept_status: v.optional(templated(v.array(v.pipe(v.number(), v.integer('must be an integer'))))),
});

export const PostgresTaskSchema = v.strictObject({
  ...commonTaskEntries,
  kind: v.literal('postgres'),
  command: nonEmptyString,
  params: v.optional(templated(v.array(v.unknown()))),
  // One statement in a read-only transaction; without `auth`, the service database's reader role.
  read_only: v.optional(templated(v.boolean())),
});

export const PlaybookTaskSchema = v.strictObject({
  ...commonTaskEntries,
  kind: v.literal('playbook'),
  path: nonEmptyString,
  args: v.optional(templated(anyRecord)),
});

export const McpTaskSchema = v.strictObject({
  ...commonTaskEntries,
  kind: v.literal('mcp'),
  server: v.optional(nonEmptyString),
  endpoint: v.optional(httpUrl),
  method: templated(v.picklist(['tools/list', 'tools/call'])),
  tool: v.optional(nonEmptyString),
  arguments: v.optional(templated(anyRecord)),
  // Which MCP transport to speak; by default Streamable HTTP, then the older HTTP+SSE.
  transport: v.optional(templated(v.picklist(['streamable-http', 'sse', 'auto']))),
});

/** What a shell task's environment variable may be named (POSIX: letters, digits, underscore). */
export const SHELL_ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

export const ShellTaskSchema = v.strictObject({
  ...commonTaskEntries,
  kind: v.literal('shell'),
  command: nonEmptyString,
  // Rendered values reach the command as environment variables, never as its text.
  env: v.optional(templated(ownKeysRecord(v.pipe(v.string(), v.regex(SHELL_ENV_NAME, 'must be a variable name (letters, digits, _)')), v.unknown()))),
  cwd: v.optional(nonEmptyString),
  stdin: v.optional(v.string()),
});

export const NoopTaskSchema = v.strictObject({
  ...commonTaskEntries,
  kind: v.literal('noop'),
});

export const TaskSchema = v.variant('kind', [
  HttpTaskSchema,
  PostgresTaskSchema,
  PlaybookTaskSchema,
  McpTaskSchema,
  ShellTaskSchema,
  NoopTaskSchema,
]);

export const LoopSchema = v.strictObject({
  // Text without a template renders to itself, never a list: every run would fail loop_input.
  in: v.union([v.pipe(v.string(), v.check((text) => TEMPLATE_MARK.test(text), 'must be a template string or a list, not plain text')), v.array(v.unknown())], 'must be a template string or a list'),
  iterator: v.optional(
    v.pipe(
      v.string(),
      v.regex(identifier, 'must be an identifier'),
      v.notValues(TEMPLATE_ROOTS, 'must not shadow a template root'),
      // A name no template reads (`{{ constructor }}` fails every run): `__proto__` set the context's prototype.
      v.check(isAccessibleName, 'is a name templates cannot read (JavaScript gives it a meaning of its own): use another, or loop.item'),
    ),
    'item',
  ),
  mode: v.optional(v.picklist(['sequential', 'parallel']), 'sequential'),
  max_in_flight: v.optional(v.pipe(v.number(), v.integer('must be an integer'), v.minValue(1, 'must be >= 1'))),
});

export const ArcObjectSchema = v.strictObject({
  step: nonEmptyString,
  when: v.optional(v.string()),
  set: v.optional(anyRecord),
});

/**
 * A value of none of the shapes a field takes, named with all of them (`tool: noop` is not "must be
 * an Object" only). `what` lists the forms.
 */
const noneOf = (what: string) => v.custom<never>(() => false, (issue) => `must be ${what}, got ${issue.received}`);

// lazy() dispatches on the input's shape so issues keep exact paths (a union would bury them).
const ArcSchema = v.lazy((input: unknown) => (typeof input === 'string' ? nonEmptyString : isObject(input) ? ArcObjectSchema : noneOf('a step name or an arc {step, when?, set?}')));

export const NextSchema = v.lazy((input: unknown) => {
  if (typeof input === 'string') return nonEmptyString;
  if (Array.isArray(input)) return v.array(ArcSchema);
  if (!isObject(input)) return noneOf('a step name, a list of arcs or {mode, arcs}');
  return v.strictObject({
    mode: v.optional(v.picklist(['exclusive', 'inclusive']), 'exclusive'),
    arcs: v.array(ArcSchema),
  });
});

const duration = v.pipe(
  v.union([v.number(), v.string()], 'must be a duration: seconds, or text like 90s, 30m, 2h, 1d, 1h30m'),
  v.check((d) => durationMs(d) !== undefined, 'must be a duration: seconds, or text like 90s, 30m, 2h, 1d, 1h30m'),
  v.check((d) => (durationMs(d) ?? 0) <= MAX_DURATION_MS, 'must be at most 366d'),
);

/** A step that waits (DESIGN.md "Waiting and control"): for a time, until a time, or for a signal; which one is checked in waitProblems. */
export const WaitSchema = v.strictObject({
  for: v.optional(duration),
  // A template giving an ISO 8601 time (with its offset) or epoch milliseconds; a literal time is
  // checked in waitProblems. A bare number is refused by its own message: epoch milliseconds are
  // what a template renders (`{{ 1767225600000 }}`), and seconds or milliseconds is a guess.
  until: v.optional(v.pipe(v.string('must be a time as text: ISO 8601 with its offset (2026-12-01T06:00:00+01:00), or a template giving one or epoch milliseconds ("{{ 1767225600000 }}")'), v.nonEmpty('must not be empty'))),
  signal: v.optional(v.pipe(v.string(), v.regex(/^[A-Za-z_][A-Za-z0-9_.\-]*$/, 'must be a name of letters, digits, _ . - (starting with a letter or _)'), v.maxLength(128, 'must be at most 128 characters'))),
  timeout: v.optional(duration),
  approval: v.optional(v.strictObject({ roles: v.pipe(v.array(v.picklist(ROLES)), v.minLength(1, 'must name at least one role')) })),
  buffer: v.optional(v.boolean()),
});

const ListedTaskSchema = v.lazy((input: unknown) => (isObject(input) ? TaskSchema : noneOf('a task (a mapping with its kind)')));
const ToolSchema = v.lazy((input: unknown) => (Array.isArray(input) ? v.array(ListedTaskSchema) : isObject(input) ? TaskSchema : noneOf('a task (a mapping with its kind) or a list of tasks')));

export const StepSchema = v.strictObject({
  step: v.pipe(
    keyName,
    v.maxLength(MAX_STEP_NAME_CHARS, `must be at most ${MAX_STEP_NAME_CHARS} characters (the API names a step in paths and reports)`),
    // The statechart names each step's state after the step (machines/playbook-statechart.ts), and
    // xstate reads a state key starting with `#` as a state id: such a step's executions stopped
    // moving, for ever `running`, once its state was in the state value.
    v.check((name) => !name.startsWith('#'), 'must not start with # (xstate reads a state named so as a state id: the step could never run)'),
  ),
  desc: v.optional(v.string()),
  tool: v.optional(ToolSchema),
  loop: v.optional(LoopSchema),
  wait: v.optional(WaitSchema),
  next: v.optional(NextSchema),
});

export const KeychainDefinitionSchema = v.strictObject({
  name: v.pipe(v.string(), v.regex(identifier, 'must be an identifier (letters, digits, _)')),
  kind: v.picklist(['secret_manager', 'oauth2', 'http']),
  provider: v.optional(nonEmptyString),
  scope: v.optional(v.picklist(['global', 'local', 'shared']), 'global'),
  auth: v.optional(templated(credentialReference)),
  map: v.optional(ownKeysRecord(v.string(), v.string())),
  auto_renew: v.optional(v.boolean()),
  ttl_seconds: v.optional(v.pipe(v.number(), v.integer('must be an integer'), v.minValue(1, 'must be >= 1'))),
  // Sent as it is: a user name or password in it would be quoted, with the URL, by fetch's refusal.
  endpoint: v.optional(v.pipe(nonEmptyString, withoutUserinfo)),
  // What the worker's fetch sends: any other text registered, then failed every resolution.
  method: v.optional(templated(v.pipe(v.string(), v.toUpperCase(), v.picklist(HTTP_METHODS, `must be an HTTP method (${HTTP_METHODS.join(', ')}, any case)`)))),
  headers: v.optional(anyRecord),
  data: v.optional(v.unknown()),
  token_field: v.optional(nonEmptyString),
  ttl_field: v.optional(nonEmptyString),
  // secret_manager providers' location (keychain-resolver.ts).
  region: v.optional(nonEmptyString),
  vault_url: v.optional(nonEmptyString),
  vault: v.optional(nonEmptyString),
});

export const MetadataSchema = v.looseObject({
  name: nonEmptyString,
  path: nonEmptyString,
  agent: v.optional(v.boolean()),
  description: v.optional(v.string()),
  terminal: v.optional(
    v.looseObject({
      visible: v.optional(v.boolean()),
      workspace: v.optional(v.string()),
      scopes: v.optional(v.array(v.string())),
      capabilities: v.optional(v.array(v.string())),
    }),
  ),
});

/** The document versions this service reads. */

/** A playbook's `concurrency`: at most `limit` (a named limit, or N) of its executions run at once per key; the others are queued. */
export const ConcurrencySchema = v.strictObject({
  limit: v.union([limitName, v.pipe(v.number(), v.integer('must be an integer'), v.minValue(1, 'must be >= 1'), v.maxValue(100_000, 'must be <= 100000'))], `must be a limit name or a number >= 1`),
  key: v.optional(keyTemplate),
});

/** A playbook's `debounce`: starts with one key within `seconds` of each other make one execution, with the last payload. */
export const DebounceSchema = v.strictObject({
  key: v.optional(keyTemplate),
  seconds: v.pipe(v.number(), v.gtValue(0, 'must be > 0'), v.maxValue(86_400, 'must be <= 86400')),
});

/** Claimed first: 0 (lowest) to 9 (highest); 5 by default. */
export const PrioritySchema = v.pipe(v.number(), v.integer('must be an integer'), v.minValue(0, 'must be >= 0'), v.maxValue(9, 'must be <= 9'));

export const PlaybookDocumentSchema = v.strictObject({
  apiVersion: ApiVersionSchema,
  kind: v.optional(v.literal('Playbook'), 'Playbook'),
  metadata: MetadataSchema,
  // A token written here would be copied into every execution.started unsealed (and a handle's
  // text would pass for the tree's own): it is given at start, where it is sealed.
  workload: v.optional(
    v.pipe(
      anyRecord,
      v.check((w) => !('access_token' in w), 'access_token: a token is not written into a playbook: pass it when starting (workload.access_token, sealed there) or name a credential in the task\'s auth'),
    ),
    () => ({}),
  ),
  // What a start's workload must hold (checked by check-inputs.ts at every start).
  inputs: v.optional(InputsSchema),
  keychain: v.optional(v.array(KeychainDefinitionSchema), () => []),
  workflow: v.pipe(v.array(StepSchema), v.minLength(1, 'must have at least one step')),
  // What starts executions by itself (src/triggers/); the newest version's are the live ones.
  triggers: v.optional(v.array(TriggerSchema), () => []),
  // Flow control (DESIGN.md "Flow control"; src/flow/).
  concurrency: v.optional(ConcurrencySchema),
  priority: v.optional(PrioritySchema, 5),
  debounce: v.optional(DebounceSchema),
  // Sample results per step name, for simulation only (machines/simulation-data.ts); never run.
  examples: v.optional(anyRecord),
});

export type PlaybookDocument = v.InferOutput<typeof PlaybookDocumentSchema>;
export type StepDocument = v.InferOutput<typeof StepSchema>;
export type TaskDocument = v.InferOutput<typeof TaskSchema>;
export type TaskKind = TaskDocument['kind'];
export type ArcDocument = v.InferOutput<typeof ArcObjectSchema>;
export type NextDocument = v.InferOutput<typeof NextSchema>;
export type LoopSpec = v.InferOutput<typeof LoopSchema>;
export type WaitDocument = v.InferOutput<typeof WaitSchema>;
export type RetrySpec = v.InferOutput<typeof RetrySchema>;
export type ConcurrencySpec = v.InferOutput<typeof ConcurrencySchema>;
export type DebounceSpec = v.InferOutput<typeof DebounceSchema>;
export type KeychainDefinition = v.InferOutput<typeof KeychainDefinitionSchema>;
export type PlaybookMetadata = v.InferOutput<typeof MetadataSchema>;
