import * as v from 'valibot';
import { loadYamlDocument } from './load-yaml-document.ts';
import { ApiVersionSchema } from './api-version.ts';
import { holdsUserinfo, USERINFO_PROBLEM } from '../url-userinfo.ts';
import type { Problem } from './reference-problems.ts';
import { describeIssue, formatPath } from './issue-text.ts';
import { unknownFields } from './unknown-field-message.ts';
import { placeProblems } from './yaml-positions.ts';
import { ownKeysRecord } from '../own-keys-record.ts';
import { credentialReference } from './credential-reference.ts';

const nonEmptyString = v.pipe(v.string(), v.nonEmpty('must not be empty'));
const SERVER_NAME = /^[A-Za-z0-9][A-Za-z0-9_.\-]*$/;
const ACTION_NAME = /^[a-z][a-z0-9_\-]*$/;

/**
 * An MCP endpoint holds no user name or password: fetch refuses such a URL (every call would fail,
 * its error quoting the password), and viewers read endpoints. A credential goes in `auth`.
 */
export const withoutUserinfo = v.check<string, string>((text) => !holdsUserinfo(text), USERINFO_PROBLEM);

/** MCP transports a server may speak; `auto` tries Streamable HTTP, then the older HTTP+SSE. */
export const MCP_TRANSPORTS = ['streamable-http', 'sse', 'auto'] as const;

// Strict like a playbook: an unknown field (`endpont:`) is a problem with "did you mean".
export const McpServerDocumentSchema = v.strictObject({
  apiVersion: ApiVersionSchema,
  kind: v.literal('Mcp'),
  metadata: v.looseObject({
    name: v.pipe(v.string(), v.regex(SERVER_NAME, 'must be letters, digits, _ . - (starting with a letter or digit)'), v.maxLength(200, 'at most 200 characters')),
    path: v.optional(nonEmptyString),
    description: v.optional(v.string()),
  }),
  endpoint: v.pipe(v.string(), v.url('must be an http(s) URL'), v.regex(/^https?:\/\//i, 'must be an http(s) URL'), withoutUserinfo),
  transport: v.optional(v.picklist(MCP_TRANSPORTS), 'auto'),
  // A credential reference name, used for the server's bearer token when a task names none.
  auth: v.optional(credentialReference),
  lifecycle: v.optional(ownKeysRecord(v.pipe(v.string(), v.regex(ACTION_NAME, 'an action name is lower-case letters, digits, _ -')), nonEmptyString), () => ({})),
  // Free settings the lifecycle playbooks read (a port, a command); never rendered.
  config: v.optional(ownKeysRecord(v.string(), v.unknown()), () => ({})),
});

export type McpServerDocument = v.InferOutput<typeof McpServerDocumentSchema>;

export type McpParseResult = { ok: true; server: McpServerDocument } | { ok: false; problems: Problem[] };

/** Parses and validates an `Mcp` document (YAML); never throws, every problem with its path, line and column. */
export function parseMcpServer(text: string): McpParseResult {
  const result = findProblems(text);
  if (result.ok) return result;
  // Every problem carries where it is in the text, as a playbook's do (DESIGN.md "Authoring").
  return { ok: false, problems: placeProblems(text, result.problems) };
}

function findProblems(text: string): McpParseResult {
  const loaded = loadYamlDocument(text);
  if (!loaded.ok) return loaded;
  const parsed = v.safeParse(McpServerDocumentSchema, loaded.raw);
  if (parsed.success) return { ok: true, server: parsed.output };
  return {
    ok: false,
    problems: parsed.issues.flatMap((issue) =>
      issue.expected === 'never' ? unknownFields(McpServerDocumentSchema, issue.path ?? []).map((u) => ({ path: formatPath(u.path), message: u.message })) : [{ path: formatPath(issue.path), message: describeIssue(issue) }],
    ),
  };
}
