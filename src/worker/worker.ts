import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { setTimeout as delay } from 'node:timers/promises';
import type { ClaimAnswer, ClaimRequest, PresentedCommand, ReportAnswer, ReportRequest, RoutedEvent } from '../protocol.ts';
import { commandFailed, detailText, type ReportBase } from './command-failed.ts';
import { createKeychainResolver } from './keychain-resolver.ts';
import { PoolHeartbeat } from './pool-heartbeat.ts';
import { StandStillClock } from './stand-still-clock.ts';
import { commandSuperseded } from './tools/outcome.ts';
import { refusedEventReasons } from './refused-events.ts';
import { rejectsOnAbort } from './rejects-on-abort.ts';
import { logShellHost, probeShellSandbox } from './tools/probe-shell-sandbox.ts';
import type { ShellHost } from './tools/shell-argv.ts';
import { DEFAULT_SHELL_SETTINGS } from './tools/shell-settings.ts';
import { sweepTaskHomesOnce } from './tools/task-homes.ts';
import type { WorkerOptions } from './worker-options.ts';
import { runCommand, type KeychainResolver } from './run-command.ts';
import { commandReport, fittingReports, reportEventsRoom, type CommandReport } from './bound-report.ts';
import { inCommandTrace } from '../telemetry/command-trace.ts';
import { isRefusal, isServerFault, ServerClient, serverNotUp, type ServerError } from './server-client.ts';
import { serviceReaderSource, type ServiceReaderSource } from './service-reader.ts';

export const CLAIM_WAIT_MS = 5_000;
/**
 * Longest a request to the server waits for its answer beyond its claim wait, in ms. A server
 * that takes the connection and never answers (SIGSTOPped, hung) held a report, a heartbeat or
 * the registration for ever, silently; past it the request fails like an unreachable server's
 * and is sent again (a report with its report_id: fenced, never applied twice). Well over the
 * server's own bound on a database that hangs (DB_CONNECT_TIMEOUT_MS + DB_ANSWER_TIMEOUT_MS).
 */
export const WORKER_ANSWER_TIMEOUT_MS = 30_000;
const REPORT_RETRY_MAX_DELAY_MS = 5_000;
// A report the server fails on (500) this many times in a row is given up as a refused one is:
// one execution the server cannot route (a fault of its code) held a batch, and with it every
// other command's report of the pool, retried for ever; its drain hung too.
const REPORT_SERVER_FAULT_TRIES = 4;
// A worker started before its server retries registering from this delay, doubling, up to the max.
const REGISTER_RETRY_FIRST_DELAY_MS = 250;
const REGISTER_RETRY_MAX_DELAY_MS = 5_000;
// A stop with nothing left to drain waits this long for the last heartbeat and the deregistration:
// a server that answers nothing (stopped, or behind a dead network path) must not hold it for ever.
// Its pool then goes stale there, as a killed worker's does.
const GOODBYE_TIMEOUT_MS = 5_000;
// One report in flight: results that finish meanwhile gather into the next one, so a busy pool
// pays one request and one routing transaction per batch. A report held up longer than
// REPORT_STALL_MS (its execution locked elsewhere, say) lets a second one go, so one stuck
// execution does not hold back every other result of the pool.
const REPORTS_IN_FLIGHT = 2;
export const REPORT_STALL_MS = 250;
// While its commands take less than this on average, a pool also holds as many claimed commands
// as it has slots, waiting (prefetch): the next ones start the moment a slot frees, instead of a
// report's round trip later. Longer commands are not prefetched, so none waits behind them.
export const QUICK_COMMAND_MS = 100;
const RUN_TIME_SMOOTHING = 0.2; // weight of the newest duration in the running average

type PendingReport = { base: ReportBase; events: RoutedEvent[]; bytes: number };

/** A command the pool runs now, and since when (performance.now()). */
export type RunningCommand = { execution_id: number; step: string; loop_index: number | null; startedAt: number };

/** What a stop still waits for: the commands running, those claimed and not started, the finished ones not yet reported. */
export type DrainState = { running: RunningCommand[]; queued: number; unreported: number };

/**
 * A worker pool: claims commands (long poll), runs up to `concurrency` at once, and reports
 * results. Reports that finish while another is in flight are sent together in one request,
 * which also claims the next commands (claim-ahead), so a busy pool costs about one round trip
 * and one commit per batch of steps. The pool holds at most its window of commands (running,
 * waiting in its queue, finished but not yet reported, or asked for): its concurrency, twice it
 * while commands are quick (QUICK_COMMAND_MS).
 */
export class Worker {
  readonly name: string;
  readonly client: ServerClient;
  readonly #opts: WorkerOptions;
  // One per pool: concurrent commands needing the same keychain entry share its token request.
  readonly #resolveKeychain: KeychainResolver;
  readonly #serviceReader: ServiceReaderSource | undefined;
  #running = 0; // executing
  #unreported = new Set<number>(); // finished; their report is not answered yet
  #queued: PresentedCommand[] = []; // claimed, waiting for a slot
  #claiming = 0; // asked for by requests in flight
  #avgRunMs: number | undefined;
  #stopping = false;
  #stopped: Promise<void> | undefined;
  #abortClaims = new AbortController();
  #abortTasks = new AbortController();
  #room: (() => void) | undefined; // wakes the claim loop when the window has room
  #reports: PendingReport[] = [];
  readonly #reporting = new Map<Promise<void>, number>(); // in flight → when it was sent
  #stallTimer: NodeJS.Timeout | undefined;
  #loop: Promise<void> | undefined;
  #commands = new Map<number, AbortController>(); // claimed: queued or running
  readonly #runningSince = new Map<number, RunningCommand>(); // executing: what a drain waits for
  readonly #heartbeat: PoolHeartbeat;
  #shell: ShellHost | undefined; // probed at start
  readonly #clock = new StandStillClock();
  #checking: Promise<void> | undefined; // the heartbeat a woken pool waits for before starting commands

  constructor(opts: WorkerOptions) {
    this.#opts = opts;
    this.name = opts.name ?? `${hostname()}-${process.pid}-${Math.random().toString(36).slice(2, 6)}`;
    // In-process, the server and the pool are one process: nothing to wait out (and a request with
    // a timeout would go over the socket instead of through the server's inject).
    const timeoutMs = opts.inProcess ? undefined : (opts.answerTimeoutMs ?? WORKER_ANSWER_TIMEOUT_MS) + (opts.claimWaitMs ?? CLAIM_WAIT_MS);
    this.client = new ServerClient(opts.serverUrl, { token: opts.token, inProcess: opts.inProcess, timeoutMs });
    this.#resolveKeychain = opts.resolveKeychain ?? createKeychainResolver({ client: this.client, log: opts.log, env: opts.env });
    this.#serviceReader = opts.serviceReaderBaseUrl && !opts.serviceReaderUrl ? serviceReaderSource(this.client, this.name, opts.serviceReaderBaseUrl, opts.log) : undefined;
    this.#heartbeat = new PoolHeartbeat({
      client: this.client,
      name: this.name,
      log: opts.log,
      commands: this.#commands,
      unreported: this.#unreported,
      draining: () => this.#stopping,
      register: () => this.#register(),
      idleIntervalMs: opts.idleHeartbeatIntervalMs,
      busyIntervalMs: opts.busyHeartbeatIntervalMs,
    });
  }

  /** What the pool holds, command by command: what a drain waits for (src/worker/drain-report.ts says it). */
  drainState(): DrainState {
    return { running: [...this.#runningSince.values()], queued: this.#queued.length, unreported: this.#unreported.size };
  }

  /** Commands the pool holds: running, waiting in its queue, or finished and not yet reported. */
  get running(): number {
    return this.#running + this.#queued.length + this.#unreported.size;
  }

  #window(): number {
    const c = this.#opts.concurrency;
    return this.#avgRunMs !== undefined && this.#avgRunMs <= QUICK_COMMAND_MS ? 2 * c : c;
  }

  #held(): number {
    return this.#running + this.#queued.length + this.#unreported.size + this.#claiming;
  }

  /** Registers the pool and starts claiming. */
  async start(): Promise<void> {
    // Before this process makes task homes of its own: what killed workers left in the temp directory goes.
    await sweepTaskHomesOnce(this.#opts.log);
    // Before claiming: a pool whose sandbox cannot run refuses shell tasks, and says so once here.
    this.#shell = await probeShellSandbox(this.#opts.shell ?? DEFAULT_SHELL_SETTINGS);
    logShellHost(this.#shell, this.#opts.log);
    if (this.#opts.serviceDatabaseUrl) {
      this.#opts.log.warn(
        'SVC_ALLOW_SERVICE_DB_TASKS=true: postgres tasks without auth that are not read_only run as the service database\'s own user, so whoever registers playbooks has its powers over the service database (API tokens, sealed credentials); read_only gives svc doctor detect what it needs',
      );
    }
    await this.#registerOnceUp();
    if (this.#stopping) return;
    this.#heartbeat.start();
    this.#clock.start();
    this.#loop = this.#claimLoop();
  }

  /**
   * Registers, waiting for a server that is not up yet (refused, unreachable, 502-504) with a
   * bounded backoff, as the claim loop does once running; stop() ends the wait. Other answers throw.
   */
  async #registerOnceUp(): Promise<void> {
    let backoffMs = REGISTER_RETRY_FIRST_DELAY_MS;
    for (let attempt = 1; ; attempt++) {
      try {
        // A stop ends the wait for an answer too: a server that answers nothing would hold it.
        return await Promise.race([this.#register(), rejectsOnAbort(this.#abortClaims.signal)]);
      } catch (err) {
        if (this.#stopping) return;
        if (!serverNotUp(err)) throw err;
        this.#opts.log.warn({ err: String(err), attempt, retry_in_ms: backoffMs }, `server ${this.client.baseUrl} not reachable yet; waiting to register`);
      }
      await delay(backoffMs, undefined, { signal: this.#abortClaims.signal }).catch(() => {});
      if (this.#stopping) return;
      backoffMs = Math.min(backoffMs * 2, REGISTER_RETRY_MAX_DELAY_MS);
    }
  }

  async #register(): Promise<void> {
    await this.client.request('POST', '/api/worker/pool/register', { name: this.name, capacity: this.#opts.concurrency, labels: { host: hostname(), pid: process.pid } });
  }

  /** Drains: no new claims; running commands finish and report; then deregisters. */
  stop(): Promise<void> {
    this.#stopped ??= (async () => {
      this.#stopping = true;
      this.#abortClaims.abort();
      this.#room?.();
      await this.#loop;
      while (this.running > 0 || this.#reports.length || this.#reporting.size) await (this.#reporting.size ? Promise.race(this.#reporting.keys()) : delay(20));
      const lastBeat = this.#heartbeat.stop();
      this.#clock.stop();
      // A beat still in flight would mark the pool 'draining' again after it deregistered. Both
      // get GOODBYE_TIMEOUT_MS in all; closing the client then ends what is still unanswered.
      const goodbye = AbortSignal.timeout(GOODBYE_TIMEOUT_MS);
      const late = rejectsOnAbort(goodbye).catch(() => {});
      await Promise.race([lastBeat, late]);
      if (!goodbye.aborted) await Promise.race([this.client.request('POST', '/api/worker/pool/deregister', { name: this.name }).catch(() => {}), late]);
      this.client.close();
    })();
    return this.#stopped;
  }

  /** Stops at once: running tasks are aborted (used when a drain must not wait). */
  async kill(): Promise<void> {
    this.#abortTasks.abort();
    await this.stop();
  }

  async #claimLoop(): Promise<void> {
    let backoffMs = 100;
    // One id per claim until it is answered: sent again after a failure, it gets back what the
    // lost answer carried (a server that died after committing the claim).
    let requestId = randomUUID();
    let retry = false;
    while (!this.#stopping) {
      const free = this.#window() - this.#held();
      if (free <= 0) {
        await new Promise<void>((r) => (this.#room = r));
        continue;
      }
      this.#claiming += free;
      try {
        const body: ClaimRequest = { worker_id: this.name, request_id: requestId, retry, max: free, wait_ms: this.#opts.claimWaitMs ?? CLAIM_WAIT_MS };
        const res = await this.client
          .request<ClaimAnswer>('POST', '/api/worker/claim', body, this.#abortClaims.signal, { resendBody: { ...body, retry: true } })
          .finally(() => (this.#claiming -= free));
        this.#take(res.commands);
        backoffMs = 100;
        requestId = randomUUID();
        retry = false;
      } catch (err) {
        if (this.#stopping) break;
        retry = true;
        this.#opts.log.warn({ err: String(err) }, 'claim failed; retrying');
        await delay(backoffMs);
        backoffMs = Math.min(backoffMs * 2, 5_000);
      }
    }
  }

  /** Commands claimed for this pool: they start as slots allow; a cancel reaches them from now on. */
  #take(commands: PresentedCommand[]): void {
    for (const cmd of commands) {
      this.#commands.set(cmd.command_id, new AbortController());
      this.#queued.push(cmd);
    }
    // Busy: beat within the busy interval of the last beat, so a cancel reaches these commands soon.
    if (commands.length) this.#heartbeat.schedule();
    if (this.#holdAfterFreeze()) return;
    while (this.#running < this.#opts.concurrency && this.#queued.length) this.#launch(this.#queued.shift()!);
  }

  /**
   * True while a pool that did not run for FROZEN_MS or more asks the server which of its commands
   * it still holds: nothing starts until the heartbeat answers. A command it was handed before or
   * while it stood still (a claim's answer waiting in its socket) may have been taken over and run
   * by another worker; started now, its side effects happened twice, for a refused report. The
   * ones the answer names superseded leave the queue unrun.
   */
  #holdAfterFreeze(): boolean {
    if (this.#checking) return true;
    if (!this.#heartbeat.on || !this.#queued.length) return false;
    const stoodStillMs = this.#clock.takeStandStill();
    if (!stoodStillMs) return false;
    this.#opts.log.warn({ stood_still_ms: Math.round(stoodStillMs) }, 'worker did not run for a while; asking the server which commands it still holds before starting any');
    // A beat sent before the pause was answered before any takeover: one more after it.
    this.#checking = this.#heartbeat
      .beatAfterInFlight()
      .finally(() => {
        this.#checking = undefined;
        this.#queued = this.#queued.filter((cmd) => {
          const reason: unknown = this.#commands.get(cmd.command_id)?.signal.reason;
          if (!(reason instanceof Error && reason.name === commandSuperseded().name)) return true;
          this.#commands.delete(cmd.command_id);
          return false;
        });
        this.#take([]);
        if (this.#window() > this.#held()) this.#room?.();
      });
    return true;
  }

  #launch(cmd: PresentedCommand): void {
    this.#running++;
    const abort = this.#commands.get(cmd.command_id) ?? new AbortController();
    const startedAt = performance.now();
    this.#runningSince.set(cmd.command_id, { execution_id: cmd.execution_id, step: cmd.step, loop_index: cmd.loop_index, startedAt });
    const base: ReportBase = { execution_id: cmd.execution_id, command_id: cmd.command_id, attempt: cmd.attempt, worker_id: this.name, step: cmd.step };
    const signal = AbortSignal.any([this.#abortTasks.signal, abort.signal]);
    // Traces on (OTEL_* in the worker's config): its http tasks send `traceparent` (src/telemetry/command-trace.ts).
    const reader = this.#serviceReader;
    const run = (serviceReaderUrl: string | undefined) => inCommandTrace(this.#opts.traces, cmd, () =>
      runCommand(cmd, {
        client: this.client,
        workerId: this.name,
        env: this.#opts.env,
        log: this.#opts.log,
        signal,
        serviceDatabaseUrl: this.#opts.serviceDatabaseUrl,
        serviceReaderUrl,
        renewServiceReaderUrl: reader && (() => reader(cmd, signal, { renew: true })),
        resolveKeychain: this.#resolveKeychain,
        shell: this.#shell,
        outputBytes: this.#opts.outputBytes,
      }));
    // A `svc worker` asks for the reader's login first when the command has a read_only task for it.
    (this.#serviceReader ? this.#serviceReader(cmd, signal).then(run) : run(this.#opts.serviceReaderUrl))
      // A bug in the runner must still end the command, or it would wait for the reaper.
      .catch((err): CommandReport => commandReport(commandFailed(base, 'worker_error', `worker error: ${err instanceof Error ? err.message : String(err)}`)))
      .then(({ events, bytes }) => {
        const ms = performance.now() - startedAt;
        this.#avgRunMs = this.#avgRunMs === undefined ? ms : this.#avgRunMs + RUN_TIME_SMOOTHING * (ms - this.#avgRunMs);
        this.#commands.delete(cmd.command_id);
        this.#runningSince.delete(cmd.command_id);
        this.#running--;
        this.#unreported.add(cmd.command_id);
        this.#reports.push({ base, events, bytes });
        this.#take([]); // a queued command takes the slot
        this.#scheduleFlush();
      });
  }

  #flushSoon: NodeJS.Immediate | undefined;

  // Commands that finish in the same turn of the event loop go in one report: one routing
  // transaction instead of one per command. After a report's answer too, so the commands it
  // handed over (claim-ahead) that finish at once join the next report rather than trail it.
  #scheduleFlush(): void {
    this.#flushSoon ??= setImmediate(() => {
      this.#flushSoon = undefined;
      this.#flushReports();
    });
  }

  #flushReports(): void {
    if (!this.#reports.length || this.#reporting.size >= REPORTS_IN_FLIGHT) return;
    if (this.#reporting.size > 0) {
      const waitedMs = performance.now() - Math.min(...this.#reporting.values());
      if (waitedMs < REPORT_STALL_MS) {
        this.#stallTimer ??= setTimeout(() => {
          this.#stallTimer = undefined;
          this.#flushReports();
        }, REPORT_STALL_MS - waitedMs);
        return;
      }
    }
    clearTimeout(this.#stallTimer);
    this.#stallTimer = undefined;
    // As many as one request's body holds (the server refuses a larger one whole); the rest go next.
    const batch = this.#reports.splice(0, fittingReports(this.#reports, reportEventsRoom(this.name)));
    const sending: Promise<void> = this.#send(batch).finally(() => {
      this.#reporting.delete(sending);
      this.#scheduleFlush();
    });
    this.#reporting.set(sending, performance.now());
  }

  async #send(batch: PendingReport[]): Promise<void> {
    const refusal = await this.#report(batch);
    if (!refusal) return;
    if (batch.length > 1) {
      // The server refuses a whole request for one bad part (e.g. 404 when one execution is gone),
      // or fails on it (500): send each command's report alone, so only that one fails.
      this.#opts.log.warn({ commands: batch.map((r) => r.base.command_id) }, 'report batch refused by the server; reporting each command alone');
      for (const one of batch) await this.#send([one]);
      return;
    }
    // The server will never store this report as it is (too large, refused by its input checks, or
    // failing on it, a fault of its own):
    // the command fails with the server's reason instead, in one small event.
    const { base } = batch[0];
    const id = base.command_id;
    this.#opts.log.error({ err: refusal.message, command_id: id }, `report of command ${id} refused by the server; failing the command (report_rejected)`);
    const failure = commandFailed(base, 'report_rejected', `the server refused this command's report (HTTP ${refusal.status}): ${detailText(refusal.detail)}`);
    const refusedAgain = await this.#report([{ base, ...commandReport(failure) }]);
    if (!refusedAgain) return;
    // Nothing more to try from here; the command reaper recovers the command.
    this.#opts.log.error({ err: refusedAgain.message, command_id: id }, `report_rejected failure of command ${id} refused by the server too; dropped`);
    this.#settle(batch, []);
  }

  /**
   * Sends one report request, retrying while the server is unreachable or failing (5xx, 408,
   * 429); once answered, frees the reported commands' slots and launches the commands it
   * claimed. A refusal (4xx), or a 500 REPORT_SERVER_FAULT_TRIES times, is returned, and the
   * batch's slots are left to the caller.
   */
  async #report(batch: PendingReport[]): Promise<ServerError | undefined> {
    // Sent again with the same id after a failure: the server hands back what the lost answer claimed.
    const reportId = randomUUID();
    // The batch's places in the window come back with the answer: it claims as many, and any room left.
    const claim = this.#stopping ? 0 : Math.max(0, this.#window() - this.#held() + batch.length);
    this.#claiming += claim;
    for (let attempt = 0; ; attempt++) {
      try {
        const body: ReportRequest = { worker_id: this.name, report_id: reportId, retry: attempt > 0, events: batch.flatMap((r) => r.events), claim };
        const res = await this.client.report(body, { ...body, retry: true });
        this.#claiming -= claim;
        // Accepted, but single events may be refused (stale_claim, unknown_command, ...): nothing to
        // resend, but worth one line per command, since those events were not recorded.
        for (const [commandId, reason] of refusedEventReasons(batch.flatMap((r) => r.events), res.results)) {
          this.#opts.log.warn({ command_id: commandId, reason }, `report of command ${commandId} not recorded by the server`);
        }
        this.#settle(batch, res.commands);
        return undefined;
      } catch (err) {
        if (isRefusal(err) || (isServerFault(err) && attempt + 1 >= REPORT_SERVER_FAULT_TRIES)) {
          this.#claiming -= claim;
          return err;
        }
        // The server is unreachable or failing: keep the results and try again; they are not lost.
        this.#opts.log.warn({ err: String(err), attempt }, 'report failed; retrying');
        await delay(Math.min(100 * 2 ** attempt, REPORT_RETRY_MAX_DELAY_MS));
      }
    }
  }

  /** The reported commands leave the window; the commands claimed with them start. */
  #settle(reported: PendingReport[], claimed: PresentedCommand[]): void {
    for (const r of reported) this.#unreported.delete(r.base.command_id);
    this.#take(claimed);
    // Fewer than asked for: nothing more is pending now, so the long poll waits for the next.
    if (this.#window() > this.#held()) this.#room?.();
  }
}
