import * as v from 'valibot';
import { ServerError } from '../worker/server-client.ts';
import { detailText, DoctorFailure, type DoctorClient } from './doctor-client.ts';
import { outcome, type Outcome } from './outcome.ts';
import { plural } from '../plural.ts';

/** The reaper nudge (DESIGN.md): one sweep now. */
const SWEEP_PATH = '/api/admin/command_reaper/sweep';

// What every svc server answers at GET /api/health, older ones included (503 when its database is away).
const svcHealth = v.looseObject({ status: v.string() });

// `released`, `withdrawn`: absent from older servers' answers, which gave slots back without
// saying so, and republished a paused execution's dead claim at every sweep.
const swept = v.looseObject({
  status: v.literal('ok'),
  scanned: v.pipe(v.number(), v.integer()),
  republished: v.pipe(v.number(), v.integer()),
  released: v.optional(v.pipe(v.number(), v.integer())),
  withdrawn: v.optional(v.pipe(v.number(), v.integer())),
});

/**
 * `repair_trigger_reaper`: asks the server's command reaper for one sweep now. Every answer
 * the server means is severity `ok` (exit 0): swept (`result: swept`, with its counts); 404, a
 * server without the endpoint (`no_op`); 409, a sweep already running (`sweep_in_progress`: that
 * sweep does the work asked for, so it is not an anomaly). Anything else could not run, and so
 * does a 404 from what is not an svc server (a wrong --server answers 404 too).
 */
export async function repair(client: DoctorClient): Promise<Outcome> {
  const server = client.baseUrl;
  const confirm = `svc doctor detect --server ${server}   # confirm nothing is left stuck`;
  try {
    // An empty object: the endpoint takes no options, and a JSON body suits any body schema.
    const answer = await client.request('POST', SWEEP_PATH, swept, {});
    const released = answer.released ?? 0;
    const republished =
      answer.republished > 0
        ? `the reaper republished ${answer.republished} of the ${answer.scanned} commands it scanned: live workers claim them again`
        : `the reaper scanned ${answer.scanned} commands and none needed republishing`;
    // A slot given back admits what waits on its limit: a sweep that did only that did something.
    const gaveBack = released > 0 ? `; it gave back ${plural(released, 'limit slot')} that cancelled commands of a worker gone without a report held: what waits on them goes on` : '';
    const withdrawn = answer.withdrawn ?? 0;
    const gaveToPause = withdrawn > 0 ? `; it gave ${plural(withdrawn, 'claim')} of paused executions whose worker is gone back to the pause: their resume issues them` : '';
    const summary = `${republished}${gaveBack}${gaveToPause}`;
    return outcome('repair_trigger_reaper', 'ok', {
      summary,
      next_steps: [confirm],
      server,
      result: 'swept',
      scanned: answer.scanned,
      republished: answer.republished,
      ...(answer.released === undefined ? {} : { released }),
      ...(answer.withdrawn === undefined ? {} : { withdrawn }),
    });
  } catch (err) {
    if (!(err instanceof ServerError) || (err.status !== 404 && err.status !== 409)) throw err;
    if (err.status === 404) {
      await confirmSvcServer(client);
      return outcome('repair_trigger_reaper', 'ok', {
        summary: 'nothing done: the server has no reaper endpoint (an older server)',
        next_steps: [`svc doctor detect --server ${server}   # what is stuck; cancel what is: svc cancel <id> --server ${server}`],
        server,
        result: 'no_op',
        reason: `POST ${SWEEP_PATH} answered 404`,
      });
    }
    return outcome('repair_trigger_reaper', 'ok', {
      summary: `a reaper sweep is already running (${detailText(err.detail)}); it republishes what it finds`,
      next_steps: [confirm],
      server,
      result: 'sweep_in_progress',
    });
  }
}

/**
 * Throws DoctorFailure unless the server is an svc server (its GET /api/health answers as one):
 * only then does the nudge's 404 mean an older server, where nothing was to be done.
 */
async function confirmSvcServer(client: DoctorClient): Promise<void> {
  try {
    await client.request('GET', '/api/health', svcHealth);
    return;
  } catch (err) {
    if (err instanceof ServerError && err.status === 503 && v.is(svcHealth, err.detail)) return;
    if (err instanceof DoctorFailure && err.kind !== 'bad_answer') throw err;
    throw new DoctorFailure('bad_answer', `POST ${SWEEP_PATH} answered 404 and GET /api/health is not an svc server's health either: ${client.baseUrl} is not an svc server`, [
      'is --server (or SVC_SERVER_URL) the address of an svc server? `svc doctor reachability` checks it',
    ]);
  }
}
