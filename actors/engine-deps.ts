import type { Config } from '../src/config.ts';
import type { Keyring } from '../src/crypto/keyring.ts';
import type { Db } from '../src/db/db.ts';
import type { Logger } from '../src/log.ts';
import type { Metrics } from '../src/metrics.ts';
import type { TraceSink } from '../src/telemetry/trace-sink.ts';
import type { WaitClock } from '../src/waits/wait-clock.ts';
import type { FlowClock } from '../src/flow/flow-clock.ts';
import type { ScheduleClock } from '../src/triggers/schedule-clock.ts';
import type { HotSnapshots } from './hot-snapshots.ts';
import type { KeyRooms } from './key-rooms.ts';
import type { ParkedClaims } from './parked-claims.ts';
import type { PlaybookCache } from './playbook-cache.ts';

/**
 * What the actors need from the host; `rooms` is this server's memory of concurrency keys' room
 * (admission at the start); `waitClock` hears of wake-up times a routing wrote (this server's
 * timekeeper), `flowClock` of admissions due (this server's admitter, src/flow/), `scheduleClock`
 * of executions that ended (this server's scheduler), `traces` of every committed unit when traces
 * are on (src/telemetry/); `parked` holds this server's claimers waiting for work, which a unit
 * hands the new commands it issues (actors/parked-claims.ts); `keyring` seals a start's access token
 * (actors/access-tokens.ts; the host always has one, an engine test that starts none may go without).
 */
export type EngineDeps = { db: Db; keyring?: Keyring; cache: PlaybookCache; snapshots: HotSnapshots; rooms: KeyRooms; parked: ParkedClaims; metrics: Metrics; log: Logger; config: Config; waitClock?: WaitClock; flowClock?: FlowClock; scheduleClock?: ScheduleClock; traces?: TraceSink; announce?: Announcer };

/**
 * Where the bus is not PostgreSQL (NATS: its write statements send no NOTIFY), the engine
 * announces after each commit what claimers should look for: commands of these executions issued
 * PENDING, or `room` (a limited command's slot came free, a command was cancelled).
 */
export type Announcer = { commands(executionIds: readonly number[]): void; room(): void };
