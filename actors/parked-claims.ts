import type { CommandRow } from '../src/db/command.repo.ts';
import type { Claimer } from '../src/db/unit-write.ts';

// Claim-ahead for idle workers. A worker's long poll (POST /api/worker/claim) that found nothing
// waits here, parked, until a notification or its deadline. A unit written on this server
// meanwhile (a start, a report, a timer, a signal, a child's result) takes the parked claimers and
// its one statement hands them the commands it issues beyond its own claimers' share, as a
// report's write hands the reporting worker its next command. An idle worker then gets the
// command with the unit's commit: no NOTIFY, no wake-up, no claim statement and commit of its own.
// The database still decides: the write claims for the claimer, or nothing.

type Parked = {
  readonly claimer: Claimer;
  /** `taken`: a write in flight may hand it commands; it answers nothing else until `settled`. */
  state: 'waiting' | 'taken';
  settled: PromiseWithResolvers<void> | null;
  readonly handed: PromiseWithResolvers<CommandRow[]>;
  commands: CommandRow[];
};

/** A claimer's place among the parked: `handed` resolves when a write hands it commands; `leave` ends its wait. */
export type Parking = {
  readonly handed: Promise<CommandRow[]>;
  /** Leaves (after the write that took it, if one did): the commands handed to it, or none. */
  leave(): Promise<CommandRow[]>;
};

/** This server's parked claimers, by claim token (one per claim request). */
export class ParkedClaims {
  readonly #parked = new Map<string, Parked>();

  /**
   * Parks a claimer whose claim found nothing; null when a claim under its token is parked already
   * (the same request sent again while the first still waits): that one waits unparked, since
   * commands handed under one token would reach both.
   */
  park(claimer: Claimer & { token: string }): Parking | null {
    if (this.#parked.has(claimer.token)) return null;
    const p: Parked = { claimer, state: 'waiting', settled: null, handed: Promise.withResolvers(), commands: [] };
    this.#parked.set(claimer.token, p);
    return {
      handed: p.handed.promise,
      leave: async () => {
        if (p.settled) await p.settled.promise;
        if (this.#parked.get(claimer.token) === p) this.#parked.delete(claimer.token);
        return p.commands;
      },
    };
  }

  /**
   * Runs a unit's `write` with every waiting claimer taken (for the commands it issues beyond its
   * own claimers' share), then `committed` (the caller's publishing), then answers the claimers:
   * their workers may report at once, and this process holds what the write committed by then. A
   * write that fails hands nothing.
   */
  async offer<T extends { claimed: readonly CommandRow[] }>(write: (parked: readonly Claimer[]) => Promise<T>, committed: (done: T) => void): Promise<T> {
    const taken = this.#take();
    let claimed: readonly CommandRow[] = [];
    try {
      const done = await write(taken);
      committed(done);
      claimed = done.claimed;
      return done;
    } finally {
      this.#settle(taken, claimed);
    }
  }

  /**
   * Takes every waiting claimer for one write, each for commands that write issues only (an older
   * command would have been its claim's); `#settle` must follow, whether the write committed or not.
   */
  #take(): Claimer[] {
    const taken: Claimer[] = [];
    for (const p of this.#parked.values()) {
      if (p.state !== 'waiting') continue;
      p.state = 'taken';
      p.settled = Promise.withResolvers();
      taken.push({ ...p.claimer, newOnly: true });
    }
    return taken;
  }

  /** After the write that took `taken`: each gets the commands `claimed` under its token; one handed none waits on. */
  #settle(taken: readonly Claimer[], claimed: readonly CommandRow[]): void {
    for (const c of taken) {
      const p = c.token === null ? undefined : this.#parked.get(c.token);
      if (!p || p.state !== 'taken') continue;
      const mine = claimed.filter((x) => x.claim_token === c.token);
      p.state = 'waiting';
      if (mine.length) {
        p.commands = mine;
        this.#parked.delete(c.token!);
        p.handed.resolve(mine);
      }
      p.settled!.resolve();
      p.settled = null;
    }
  }
}
