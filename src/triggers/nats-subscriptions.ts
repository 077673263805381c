import * as v from 'valibot';
import type { EngineDeps } from '../../actors/engine-deps.ts';
import type { Keyring } from '../crypto/keyring.ts';
import { natsTriggerRows, type NatsTriggerRow } from '../db/trigger-subscription.repo.ts';
import { noteSubscriptionProblem, TRIGGERS_CHANGED_CHANNEL } from '../db/trigger.repo.ts';
import { every } from '../periodic/every.ts';
import type { NatsSubscription } from './nats-subscription.ts';
import { NatsTriggerSchema } from './trigger.schema.ts';

// Every server subscribes to every live, unpaused NATS trigger (nats-subscription.ts). JetStream
// shares a durable pull consumer's messages among the servers pulling from it, and a fire's key
// makes a message delivered to two of them start one execution. The set is read again when a
// registration, pause or resume notifies, and every NATS_RELOAD_INTERVAL_MS in case one was missed.

/** How often the triggers are read again without a notification. */
export const NATS_RELOAD_INTERVAL_MS = 10_000;

export type NatsSubscriptionsDeps = EngineDeps & { keyring: Keyring };

type Running = { signature: string; stream: string; sub: NatsSubscription };

// The NATS client (a tenth of a second of CPU) loads with the first trigger to subscribe: a server
// without one never loads it.
const natsClient = async () => ({ ...(await import('./nats-login.ts')), ...(await import('./nats-subscription.ts')) });
type NatsClient = Awaited<ReturnType<typeof natsClient>>;

/**
 * Starts this server's NATS subscriptions and keeps them in step with core.trigger: new triggers
 * start, paused ones stop, changed ones (spec or credential) restart, removed ones stop and delete
 * their consumer. `reload()` reads the triggers now. `stop()` ends every subscription.
 */
export function startNatsSubscriptions(deps: NatsSubscriptionsDeps, opts: { reloadIntervalMs?: number } = {}): { stop(): Promise<void>; reload(): Promise<void> } {
  const running = new Map<string, Running>();
  let nats: NatsClient | undefined;
  // What this server last noted per trigger (why it is not consuming): written to the trigger's
  // row, where the listing reads it, when it changes, so a reload or a retry writes nothing.
  const problems = new Map<string, string>();
  let stopped = false;
  let tail: Promise<void> = Promise.resolve();
  let queued: Promise<void> | undefined;

  const note = (row: Pick<NatsTriggerRow, 'path' | 'name'>, problem: string | null) => {
    const key = keyOf(row);
    if ((problems.get(key) ?? null) === problem) return;
    if (problem === null) problems.delete(key);
    else problems.set(key, problem);
    noteSubscriptionProblem(deps.db, row, problem).catch((err: unknown) =>
      deps.log.warn({ trigger: key, err: err instanceof Error ? err.message : String(err) }, 'why a NATS trigger is not consuming could not be noted'),
    );
  };
  // A problem found here (the spec, the credential) is logged when it appears, not at every reload.
  const report = (row: Pick<NatsTriggerRow, 'path' | 'name'>, problem: string) => {
    if (problems.get(keyOf(row)) !== problem) deps.log.warn({ trigger: keyOf(row), problem }, 'NATS trigger not subscribed');
    note(row, problem);
  };

  const reconcile = async () => {
    const rows = await natsTriggerRows(deps.db);
    const live = new Set(rows.map(keyOf));
    const wanted = new Set<string>();
    for (const row of rows) {
      const key = keyOf(row);
      if (stopped) continue;
      // Paused: not consuming, as asked; a problem noted before no longer says why.
      if (row.paused) {
        note(row, null);
        continue;
      }
      const parsed = v.safeParse(NatsTriggerSchema, row.spec);
      if (!parsed.success) {
        report(row, 'its stored spec is not a NATS trigger');
        continue;
      }
      const spec = parsed.output;
      const signature = JSON.stringify([spec, row.created_at.toISOString(), row.credential_type, row.credential_updated_at?.toISOString() ?? null]);
      const current = running.get(key);
      if (current?.signature === signature) {
        // A new version that left the trigger as it was: its fires render the same payload.
        current.sub.follow(row.catalog_id);
        wanted.add(key);
        continue;
      }
      nats ??= await natsClient();
      const login = nats.natsLogin(deps.keyring, { name: spec.auth, type: row.credential_type, sealed: row.credential_sealed });
      if ('problem' in login) {
        report(row, login.problem);
        continue;
      }
      if (current) {
        running.delete(key);
        // A trigger moved to another stream leaves its old consumer behind: it is deleted.
        await current.sub.stop({ deleteConsumer: current.stream !== spec.stream });
      }
      wanted.add(key);
      const sub = nats.startNatsSubscription(deps, {
        path: row.path,
        name: row.name,
        spec,
        login: login.login,
        startTime: row.created_at,
        catalogId: row.catalog_id,
        onChanged: heard,
        onProblem: (problem) => note(row, problem),
      });
      running.set(key, { signature, stream: spec.stream, sub });
    }
    const ending = [...running].filter(([key]) => !wanted.has(key));
    for (const [key] of ending) running.delete(key);
    // A removed trigger's consumer is deleted (a paused one keeps its place in the stream).
    await Promise.all(ending.map(([key, r]) => r.sub.stop({ deleteConsumer: !live.has(key) && !stopped })));
    for (const key of problems.keys()) if (!live.has(key)) problems.delete(key);
  };

  // One reconcile at a time; calls while one waits to start share it.
  const reload = (): Promise<void> => {
    queued ??= tail.then(() => {
      queued = undefined;
      return stopped ? undefined : reconcile();
    });
    const run = queued;
    tail = run.catch(() => {});
    return run;
  };
  const heard = () => {
    reload().catch((err: unknown) => deps.log.warn({ err: err instanceof Error ? err.message : String(err) }, 'NATS triggers could not be read; tried again soon'));
  };

  const listening = deps.db.listen(TRIGGERS_CHANGED_CHANNEL, heard, { lost: () => {}, resumed: heard }).catch((err: unknown) => {
    deps.log.warn({ err: err instanceof Error ? err.message : String(err) }, 'not listening for trigger changes; NATS triggers are read every interval only');
    return undefined;
  });
  const periodic = every(deps, { name: 'nats_subscriptions', intervalMs: opts.reloadIntervalMs ?? NATS_RELOAD_INTERVAL_MS, firstDelayMs: 0 }, () => reload());

  return {
    reload,
    async stop() {
      stopped = true;
      await periodic.stop();
      (await listening)?.();
      await tail;
      const all = [...running.values()];
      running.clear();
      await Promise.all(all.map((r) => r.sub.stop()));
    },
  };
}

const keyOf = (row: Pick<NatsTriggerRow, 'path' | 'name'>) => `${row.path}/${row.name}`;
