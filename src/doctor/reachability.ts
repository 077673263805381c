import * as v from 'valibot';
import { ServerError } from '../worker/server-client.ts';
import { checked, type DoctorClient } from './doctor-client.ts';
import { outcome, worse, type Outcome, type Severity } from './outcome.ts';

// GET /api/health: `database` (a ping within 2 s; 503 when it fails or finds the database
// read-only) and `bus` (the LISTEN connection). Servers older than the `bus` field report
// `unknown` for it.
const health = v.looseObject({ status: v.string(), database: v.optional(v.string()), bus: v.optional(v.string()) });

type Part = { status: string; severity: Severity };

/**
 * `reachability`: the API answers, the server reaches its database, and its bus hears
 * notifications. No answer at all is `error` (the doctor could not run); a database the server
 * cannot reach is `critical`; a disconnected bus `warning` (claimers fall back to polling).
 */
export async function reachability(client: DoctorClient): Promise<Outcome> {
  const t0 = performance.now();
  let body: v.InferOutput<typeof health>;
  let httpStatus = 200;
  try {
    body = await client.request('GET', '/api/health', health);
  } catch (err) {
    // 503 is the server's own "database unreachable" answer; its body still says what is wrong.
    if (!(err instanceof ServerError && err.status === 503)) throw err;
    body = checked(health, err.detail, 'GET /api/health');
    httpStatus = 503;
  }
  const latencyMs = Math.round(performance.now() - t0);
  const server = client.baseUrl;
  const database: Part =
    body.database === undefined ? { status: 'unknown', severity: 'ok' } : { status: body.database, severity: body.database === 'ok' ? 'ok' : 'critical' };
  const bus: Part = body.bus === undefined ? { status: 'unknown', severity: 'ok' } : { status: body.bus, severity: body.bus === 'ok' ? 'ok' : 'warning' };
  const severity = worse(database.severity, bus.severity);

  const problems: string[] = [];
  const next: string[] = [];
  if (database.status === 'read_only') {
    problems.push('the server reaches its database, but it takes no writes (read_only: a standby, or default_transaction_read_only set); starts answer 503 meanwhile');
    next.push('point SVC_DATABASE_URL at the primary (after a failover), or reset default_transaction_read_only, then run `svc doctor reachability` again');
  } else if (database.severity !== 'ok') {
    problems.push(`the server cannot reach its database (${database.status}); its API answers 503 meanwhile`);
    next.push('check PostgreSQL (pg_isready; for the embedded one, the server log and SVC_DATA_DIR/pg), then run `svc doctor reachability` again');
  }
  if (bus.severity !== 'ok') {
    problems.push(`the server's bus is ${bus.status}: workers hear of new commands only when they poll (slower starts)`);
    next.push('if it stays so, restart the server (its LISTEN connection to PostgreSQL is down)');
  }
  const fine = [
    `the API answers (${latencyMs} ms)`,
    database.status === 'unknown' ? 'the server reports no database state' : 'the server reaches its database',
    bus.status === 'unknown' ? 'it reports no bus state (an older server)' : 'its bus listens',
  ];
  const summary = problems.length ? problems.join('; ') : fine.join(', ');
  return outcome('reachability', severity, {
    summary,
    next_steps: next,
    server,
    api: { status: 'ok', http_status: httpStatus, latency_ms: latencyMs },
    database: { status: database.status },
    bus: { status: bus.status },
  });
}
