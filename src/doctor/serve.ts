import { createHash, timingSafeEqual } from 'node:crypto';
import { toJsonSchema } from '@valibot/to-json-schema';
import Fastify, { type FastifyInstance } from 'fastify';
import { PUBLIC } from '../api/access.ts';
import { browserFromElsewhere } from '../auth/browser-from-elsewhere.ts';
import { DoctorClient, DoctorStopped } from './doctor-client.ts';
import { TOOL_NAMES, type Outcome, type ToolName } from './outcome.ts';
import { TOOLS, invokeTool, type Invocation } from './tools.ts';
import { isObject } from '../objects.ts';

// `svc doctor serve`: the doctor's tools over HTTP, for a supervisor or an agent on the same host.
// It acts with its own server credentials (an admin's API token, for the reaper nudge), so every
// caller of a tool presents the bearer this doctor made at start (doctor-command.ts writes it to a
// 0600 file): loopback alone let any local process act with them (a shell task on the host
// network, an http task to 127.0.0.1). It still listens on loopback only, and always examines the
// server it started with, never one chosen by the caller.

/** Invocation bodies are a few numbers. */
const BODY_LIMIT_BYTES = 64 * 1024;
// The doctor's own bearer guards these (the onRequest hook), not the API's roles: PUBLIC says the
// server's access check has nothing to add. Declared as the API's routes declare theirs.
const LOOPBACK_ONLY = { access: PUBLIC };
/** The one route open without the bearer: a supervisor's liveness probe, which learns nothing else. */
const OPEN_PATH = '/healthz';

const digest = (text: string): Buffer => createHash('sha256').update(text).digest();

/** Whether `header` is `Bearer <token>` (compared in constant time: digests of equal length). */
function presents(header: string | undefined, token: string): boolean {
  const m = header === undefined ? null : /^Bearer[ ]+(\S+)[ ]*$/i.exec(header);
  return m !== null && timingSafeEqual(digest(m[1]), digest(token));
}

/**
 * The doctor's HTTP app: GET /healthz (the doctor itself), GET /tools (name, description and
 * JSON Schema of each tool's arguments), POST /tools/{name}/invoke (a JSON object of arguments,
 * or no body) → the outcome object, 200; 502 when its severity is `error` (the server behind
 * could not be examined); 400 for bad arguments, 404 for an unknown tool; 401 without the
 * doctor's bearer (all but /healthz); never 500.
 */
async function buildDoctorApp(client: DoctorClient, opts: { token: string; tokenFile: string }): Promise<FastifyInstance> {
  const app = Fastify({ logger: false, bodyLimit: BODY_LIMIT_BYTES });
  // Identical invocations while one runs share its outcome: a supervisor polling faster than a
  // detection takes must not pile up detection runs on the server.
  const running = new Map<string, Promise<Invocation>>();

  app.setErrorHandler((err: { statusCode?: number; message: string }, _req, reply) => {
    const client4xx = err.statusCode !== undefined && err.statusCode >= 400 && err.statusCode < 500;
    reply.code(client4xx ? (err.statusCode ?? 400) : 502).send({ detail: client4xx ? err.message : 'the doctor could not answer' });
  });
  app.setNotFoundHandler((req, reply) => {
    reply.code(404).send({ detail: `no route ${req.method} ${req.url.split('?')[0]}: GET /tools lists the tools` });
  });

  // Loopback is no wall against a browser on this host: another site's page could invoke a
  // tool (with this doctor's token) or, rebinding its name here, read the answers.
  app.addHook('onRequest', async (req, reply) => {
    const refused = browserFromElsewhere(req.headers, 'svc doctor serve');
    if (refused) return reply.code(403).send({ detail: refused });
    if ((req.url.split('?')[0] ?? '') === OPEN_PATH || presents(req.headers.authorization, opts.token)) return;
    const detail = `svc doctor serve needs its token: send Authorization: Bearer <the token in ${opts.tokenFile}>`;
    return reply.code(401).header('www-authenticate', 'Bearer realm="svc doctor serve"').send({ detail });
  });

  app.get('/healthz', { config: LOOPBACK_ONLY }, async () => ({ status: 'ok' }));

  app.get('/tools', { config: LOOPBACK_ONLY }, async () => ({
    tools: TOOL_NAMES.map((name) => {
      const inputSchema = toJsonSchema(TOOLS[name].input, { errorMode: 'ignore' }) as Record<string, unknown>;
      delete inputSchema.$schema;
      return { name, description: TOOLS[name].description, input_schema: inputSchema };
    }),
  }));

  // No body, or an empty one, means no arguments (curl -H 'content-type: application/json' without -d).
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_req, text, done) => {
    if (String(text).trim() === '') return done(null, undefined);
    try {
      done(null, JSON.parse(String(text)));
    } catch {
      done(Object.assign(new Error('the body is not valid JSON'), { statusCode: 400 }), undefined);
    }
  });

  app.post<{ Params: { name: string } }>('/tools/:name/invoke', { config: LOOPBACK_ONLY }, async (req, reply) => {
    const { name } = req.params;
    const tool = TOOL_NAMES.find((t): t is ToolName => t === name);
    if (!tool) return reply.code(404).send({ detail: `unknown tool '${name}': expects one of ${TOOL_NAMES.join(', ')}` });
    // No body is no arguments; a JSON `null` is a body, refused as an array is (it ran the tool).
    const body: unknown = req.body === undefined ? {} : req.body;
    if (!isObject(body)) return reply.code(400).send({ detail: 'the body must be a JSON object of arguments' });
    const key = `${tool} ${JSON.stringify(body)}`;
    let pending = running.get(key);
    if (!pending) {
      pending = invokeTool(tool, body, client).finally(() => running.delete(key));
      running.set(key, pending);
    }
    let invocation: Invocation;
    try {
      invocation = await pending;
    } catch (err) {
      // The doctor is stopping: the detection it ran was cancelled (see serveDoctor's close).
      // Connection: close, or the caller's keep-alive connection held the closing app open.
      if (err instanceof DoctorStopped) return reply.code(503).header('connection', 'close').send({ detail: `svc doctor serve is stopping: ${err.message}` });
      throw err;
    }
    if (!invocation.ok) return reply.code(400).send({ detail: { code: 'bad_request', message: `invalid arguments for ${tool}`, errors: invocation.problems } });
    const outcome: Outcome = invocation.outcome;
    return reply.code(outcome.severity === 'error' ? 502 : 200).send(outcome);
  });
  return app;
}

/**
 * Listens on host:port (0: any free port) with tools that examine `serverUrl` (sending `apiToken`),
 * for callers that present `token` (written to `tokenFile`, which refusals name).
 */
export async function serveDoctor(opts: { host: string; port: number; serverUrl: string; apiToken?: string; token: string; tokenFile: string }): Promise<{ url: string; close(): Promise<void> }> {
  const client = new DoctorClient(opts.serverUrl, opts.apiToken);
  // Stopping ends a detection that waits (up to its timeout_seconds) at once, its executions
  // cancelled, as `svc doctor detect` does on a signal; else close waited for it.
  const stopping = new AbortController();
  client.stopped = stopping.signal;
  const app = await buildDoctorApp(client, opts);
  try {
    const address = await app.listen({ host: opts.host, port: opts.port });
    return {
      url: address,
      async close() {
        stopping.abort();
        await app.close();
        client.close();
      },
    };
  } catch (err) {
    client.close();
    throw err;
  }
}
