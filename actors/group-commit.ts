export type GroupCommitOptions<I, O> = {
  /** Batches written at once; items that arrive meanwhile wait and go together in the next. */
  maxInFlight: number;
  /** How much of a batch one item uses, and how much one batch may hold (the first item always fits). */
  weight: (item: I) => number;
  maxWeight: number;
  /** Items of one key are never in two batches in flight at once: later ones wait for the batch after, in order. */
  key?: (item: I) => unknown;
  /** Runs a batch; an Error in an item's place fails that item alone. */
  run: (items: I[]) => Promise<(O | Error)[]>;
};

type Pending<I, O> = { item: I; ok: (o: O) => void; fail: (e: unknown) => void };

/**
 * Group commit: work submitted while `maxInFlight` batches are being written goes together in
 * the next batch, so a burst costs a few transactions instead of one per request; a lone request
 * runs at once. A batch that throws is run again one item at a time, so one bad item cannot fail
 * the others. With `key`, items whose key is in a batch in flight wait for the next batch after
 * it (work on one row takes turns here rather than in the database's lock queue).
 */
export class GroupCommit<I, O> {
  readonly #opts: GroupCommitOptions<I, O>;
  #queue: Pending<I, O>[] = [];
  #inFlight = 0;
  /** Keys of the items in the batches being written (a key is in one of them at most). */
  readonly #busy = new Set<unknown>();

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
      if (!batch.length) return; // every waiting item's key is being written
      const { key } = this.#opts;
      const keys = new Set(key ? batch.map((p) => key(p.item)) : []);
      for (const k of keys) this.#busy.add(k);
      this.#inFlight++;
      void this.#runBatch(batch).finally(() => {
        for (const k of keys) this.#busy.delete(k);
        this.#inFlight--;
        this.#pump();
      });
    }
  }

  /** The next batch: waiting items in order, leaving those whose key is being written (and, after them, their key's later items). */
  #take(): Pending<I, O>[] {
    const { key, weight, maxWeight } = this.#opts;
    const queue = this.#queue;
    const batch: Pending<I, O>[] = [];
    const rest: Pending<I, O>[] = [];
    const held = new Set<unknown>();
    let total = 0;
    let i = 0;
    for (; i < queue.length; i++) {
      const p = queue[i];
      const w = weight(p.item);
      const fits = batch.length === 0 || total + w <= maxWeight;
      if (!key && !fits) break; // without keys the queue's order is the batches' order
      const k = key?.(p.item);
      if (fits && !this.#busy.has(k) && !held.has(k)) {
        total += w;
        batch.push(p);
      } else {
        rest.push(p);
        held.add(k);
      }
    }
    this.#queue = i < queue.length ? rest.concat(queue.slice(i)) : rest;
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
