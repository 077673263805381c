// The worker token reaches only what its claims need (DESIGN.md "Security"): credential data, a
// keychain entry or a secret handle is given to it only for a command the calling worker holds
// (CLAIM_HEADERS) whose tasks name it. Admins and SVC_AUTH=none callers are not asked.
import type { FastifyRequest } from 'fastify';
import * as v from 'valibot';
import type { AppDeps } from '../app-deps.ts';
import { namesCredential } from '../credential/names-credential.ts';
import { readsServiceDatabase } from '../dsl/reads-service-database.ts';
import { templateRefs } from '../dsl/template-refs.ts';
import { readHeldCommand, type ClaimRef } from '../db/held-command.repo.ts';
import { ServiceError } from '../errors.ts';
import { CLAIM_HEADERS } from '../protocol.ts';
import { secretHandle } from '../secret-handle.ts';
import { describeIssues, integerText, MAX_ID, MAX_INT4 } from './validation.ts';

/** What a worker asks for: a credential by name, a keychain entry by name of a catalog entry (and execution), a secret handle's uuid. */
export type WorkerAsk =
  | { kind: 'credential'; name: string }
  | { kind: 'keychain'; name: string; catalogId: number; executionId: number | null }
  | { kind: 'secret'; handle: string }
  | { kind: 'service_reader' };

const ClaimHeaders = v.object({
  [CLAIM_HEADERS.command]: integerText(1, MAX_ID),
  [CLAIM_HEADERS.attempt]: integerText(1, MAX_INT4),
  [CLAIM_HEADERS.worker]: v.pipe(v.string(), v.minLength(1), v.maxLength(200)),
});

/**
 * The claim headers as the OpenAPI document shows them, for a route that calls requireWorkerGrant:
 * a worker written from the document alone learns there what its requests must name (without
 * them the worker token is refused, 403 secret_not_granted). Documentation only: claimOf reads
 * them, and other callers send none. A new object each call: fastify rewrites a route's header
 * schema in place.
 */
export function claimHeadersSchema(): Record<string, unknown> {
  const described = (text: string) => ({ type: 'string', description: `Worker token only, with the other two: ${text}` });
  return {
    type: 'object',
    properties: {
      [CLAIM_HEADERS.command]: described('the command_id of the claimed command this request is for'),
      [CLAIM_HEADERS.attempt]: described('the attempt of that claim (the claimed command\'s `attempt`)'),
      [CLAIM_HEADERS.worker]: described('the worker_id that claimed it'),
    },
  };
}

/**
 * The claim the request's headers name; else why not: none sent, or the first one malformed, by
 * name (`x-svc-command: must be an integer from 1 to …`), which the worker did send.
 */
function claimOf(req: FastifyRequest): ClaimRef | string {
  const parsed = v.safeParse(ClaimHeaders, req.headers);
  if (!parsed.success) {
    const sent = Object.values(CLAIM_HEADERS).some((name) => req.headers[name] !== undefined);
    return sent ? describeIssues(parsed.issues)[0] : `name the command it runs for in the headers ${Object.values(CLAIM_HEADERS).join(', ')}`;
  }
  const h = parsed.output;
  return { commandId: h[CLAIM_HEADERS.command], attempt: h[CLAIM_HEADERS.attempt], workerId: h[CLAIM_HEADERS.worker] };
}

const what = (ask: WorkerAsk): string =>
  ask.kind === 'credential'
    ? `credential '${ask.name}'`
    : ask.kind === 'keychain'
      ? `keychain entry '${ask.name}' of catalog entry ${ask.catalogId}`
      : ask.kind === 'secret'
        ? 'this secret handle'
        : "the service database reader's login";

/**
 * For the worker token: throws 403 `secret_not_granted` (counted by kind) unless the request names
 * a command its worker holds (claimed or running, this attempt) that was given what `ask` names.
 * Any other caller passed the route's own access and is let through unchanged.
 */
export async function requireWorkerGrant(req: FastifyRequest, deps: Pick<AppDeps, 'db' | 'metrics'>, ask: WorkerAsk): Promise<void> {
  if (req.identity?.via !== 'worker') return;
  const deny = (missing: string): ServiceError => {
    deps.metrics.workerSecretDenied.inc({ kind: ask.kind });
    req.log.info({ kind: ask.kind, missing }, 'worker token refused a secret');
    return new ServiceError('secret_not_granted', { code: 'secret_not_granted', message: `the worker token may not read ${what(ask)}: ${missing}` });
  };
  const claim = claimOf(req);
  if (typeof claim === 'string') throw deny(claim);
  const held = await readHeldCommand(deps.db, claim, ask.kind === 'credential' ? ask.name : null, ask.kind === 'secret' ? secretHandle(ask.handle) : null);
  const command = `command ${claim.commandId}`;
  if (!held) throw deny(`${command} is not held by worker '${claim.workerId}' at attempt ${claim.attempt} (not claimed, finished, or claimed again)`);
  switch (ask.kind) {
    case 'credential':
      if (!namesCredential(held, ask.name)) throw deny(`no task of ${command} names it (auth, an mcp server's auth, or a keychain entry's auth)`);
      return;
    case 'keychain':
      if (held.catalog_id !== ask.catalogId) throw deny(`${command} runs catalog entry ${held.catalog_id}`);
      if (ask.executionId !== null && ask.executionId !== held.execution_id) throw deny(`${command} runs execution ${held.execution_id}, not ${ask.executionId}`);
      // The entries its worker resolves (run-command.ts): those its tasks' templates read, no other of the playbook.
      if (!(Array.isArray(held.tasks) && held.tasks.some((task) => templateRefs(task).keychain.has(ask.name)))) throw deny(`no task of ${command} reads keychain.${ask.name}`);
      return;
    case 'secret':
      if (!held.carries_handle) throw deny(`${command} was not given it`);
      return;
    case 'service_reader':
      if (!(Array.isArray(held.tasks) && held.tasks.some(readsServiceDatabase))) throw deny(`${command} has no read_only postgres task without auth`);
      return;
  }
}
