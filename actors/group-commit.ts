export type GroupCommitOptions<I, O> = {
  /** Batches written at once; items that arrive meanwhile wait and go together in the next. */
  maxInFlight: number;
  /** How much of a batch one item uses, and how much one batch may hold (the first item always fits). */
  weight: (item: I) => number;
  maxWeight: number;
  /** Runs a batch; an Error in an item's place fails that item alone. */
  run: (items: I[]) => Promise<(O | Error)[]>;
};

type Pending<I, O> = { item: I; ok: (o: O) => void; fail: (e: unknown) => void };

/**
 * Group commit: work submitted while `maxInFlight` batches are being written goes together in
 * the next batch, so a burst costs a few transactions instead of one per request; a lone request
 * runs at once. A batch that throws is run again one item at a time, so one bad item cannot fail
 * the others.
 */
export class GroupCommit<I, O> {
  readonly #opts: GroupCommitOptions<I, O>;
  #queue: Pending<I, O>[] = [];
  #inFlight = 0;

  constructor(opts: GroupCommitOptions<I, O>) {
    this.#opts = opts;
  }

  submit(item: I): Promise<O> {
    return new Promise((ok, fail) => {
      this.#queue.push({ item, ok, fail });
      this.#pump();
    });
  }

  #pump(): void {
    while (this.#inFlight < this.#opts.maxInFlight && this.#queue.length) {
      const batch = this.#take();
      this.#inFlight++;
      void this.#runBatch(batch).finally(() => {
        this.#inFlight--;
        this.#pump();
      });
    }
  }

  #take(): Pending<I, O>[] {
    const batch: Pending<I, O>[] = [];
    let weight = 0;
    while (this.#queue.length && (batch.length === 0 || weight + this.#opts.weight(this.#queue[0].item) <= this.#opts.maxWeight)) {
      const p = this.#queue.shift()!;
      weight += this.#opts.weight(p.item);
      batch.push(p);
    }
    return batch;
  }

  async #runBatch(batch: Pending<I, O>[]): Promise<void> {
    try {
      const results = await this.#opts.run(batch.map((p) => p.item));
      batch.forEach((p, i) => settle(p, results[i]));
    } catch (err) {
      if (batch.length === 1) return batch[0].fail(err);
      for (const p of batch) {
        await this.#opts.run([p.item]).then(
          ([r]) => settle(p, r),
          (e: unknown) => p.fail(e),
        );
      }
    }
  }
}

function settle<O>(p: { ok: (o: O) => void; fail: (e: unknown) => void }, r: O | Error): void {
  if (r instanceof Error) p.fail(r);
  else p.ok(r);
}
