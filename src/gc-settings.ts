import { setFlagsFromString } from 'node:v8';

/**
 * Turns V8's allocation-site pretenuring off for this process; call before the service's modules
 * load. A fold makes one xstate snapshot and context copy per event and drops it at the next:
 * from the second fold on, pretenuring allocated those straight into the old generation, where
 * each dropped one kept its event's copy alive until a full collection (about 15 % of what a fold
 * allocates survived; pauses of 30-100 ms). Without it they die young (docs/benchmarks.md,
 * "Sixty-fifth session").
 */
export function keepShortLivedObjectsYoung(): void {
  setFlagsFromString('--no-allocation-site-pretenuring');
}
