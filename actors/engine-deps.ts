import type { Config } from '../src/config.ts';
import type { Db } from '../src/db/db.ts';
import type { Logger } from '../src/log.ts';
import type { Metrics } from '../src/metrics.ts';
import type { TraceSink } from '../src/telemetry/trace-sink.ts';
import type { WaitClock } from '../src/waits/wait-clock.ts';
import type { HotSnapshots } from './hot-snapshots.ts';
import type { PlaybookCache } from './playbook-cache.ts';

/**
 * What the actors need from the host; `waitClock` hears of wake-up times a routing wrote (this
 * server's timekeeper), `traces` of every committed unit when traces are on (src/telemetry/).
 */
export type EngineDeps = { db: Db; cache: PlaybookCache; snapshots: HotSnapshots; metrics: Metrics; log: Logger; config: Config; waitClock?: WaitClock; traces?: TraceSink };
