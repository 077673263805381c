import type { FastifyInstance } from 'fastify';
import * as v from 'valibot';
import type { AppDeps } from '../app-deps.ts';
import { sweepStrandedCommands } from '../periodic/command-reaper.ts';
import { ServiceError } from '../errors.ts';
import { integer, responses } from './answers.ts';
import { ownKeysRecord } from '../own-keys-record.ts';

const sweepAnswer = v.object({
  status: v.literal('ok'),
  scanned: integer,
  republished: integer,
  by_reason: v.pipe(ownKeysRecord(v.string(), integer), v.description('republished commands by why they were stranded')),
  released: v.pipe(integer, v.description('limit slots given back: commands cancelled while a worker held them, whose worker went without a report')),
  withdrawn: v.pipe(integer, v.description("claims of paused executions whose worker is gone, given back to the pause (status PAUSED, a limit's slot freed): the resume issues them")),
});

/** Operator tools that act on the whole service: the reaper nudge (used by `svc doctor repair`). */
export async function adminRoutes(app: FastifyInstance, deps: AppDeps): Promise<void> {
  app.post(
    '/api/admin/command_reaper/sweep',
    {
      config: { access: { level: 'admin' } },
      schema: {
        tags: ['admin'],
        summary: 'Run one command reaper sweep now',
        description:
          'Republishes the notification of stranded commands (PENDING past the retry age; CLAIMED/RUNNING whose worker is missing, stopped, stale or no longer lists them, or past the hard timeout) under the reaper lease, and gives back the limit slots of commands cancelled while a worker held them once the lease of their worker expired with no report. A claim of a paused execution whose worker is gone is not republished (no worker may take it over while paused): it is given back to the pause (`withdrawn`), and the resume issues it. 409 `sweep_in_progress` while another sweep holds the lease. Works with SVC_COMMAND_REAPER_ENABLED=false too: that only stops the timer.',
        response: responses({ 200: sweepAnswer }),
      },
    },
    async () => {
      const out = await sweepStrandedCommands(deps, { trigger: 'nudge', minGapSeconds: null });
      if (out.status === 'busy') {
        const who = out.holder ? ` (${out.holder}, lease until ${out.expires_at?.toISOString() ?? 'now'})` : '';
        throw new ServiceError('sweep_in_progress', { code: 'sweep_in_progress', message: `another reaper sweep holds the lease${who}; try again in a moment` });
      }
      return out;
    },
  );
}
