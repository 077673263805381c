// valibot's record (like its object schemas) skips the keys `__proto__`, `prototype` and
// `constructor` of what it validates, for prototype safety: a payload's {"prototype": 1} lost that
// field without a word, and a step named `constructor` vanished from the views that read
// `steps` through a record. This record keeps every own key, set as an own property (never
// through a setter), and validates each key and value as v.record does.
import * as v from 'valibot';
import { isObject } from './objects.ts';

type KeySchema = v.GenericSchema<string, string>;

/** The keys valibot's object schemas skip. */
export const RESERVED_NAMES = ['__proto__', 'prototype', 'constructor'] as const;

const plainRecords = new WeakMap<object, v.GenericSchema>();

// Re-issued, a check's issue is no longer a check: the text written with it (never the value;
// valibot's own, which quotes it, starts "Invalid ") is then what it expects, which readers such
// as the worker's invalidTask show (they show no message).
const expectedOf = (issue: v.BaseIssue<unknown>): string | undefined =>
  issue.expected ?? (issue.type === 'check' && !issue.message.startsWith('Invalid ') ? issue.message : undefined);

/**
 * A record of `value`s by `key` (an object, not an array: v.record would take `[1, 2]` as
 * `{"0": 1, "1": 2}`) with every own key kept; issues carry their key's path as v.record's do.
 * Its JSON Schema is v.record's (see plainRecordOf).
 */
export function ownKeysRecord<const V extends v.GenericSchema>(key: KeySchema, value: V, message?: string): v.GenericSchema<Record<string, v.InferInput<V>>, Record<string, v.InferOutput<V>>> {
  const object = v.custom<Record<string, unknown>>(isObject, message ?? ((issue) => `expected Object, got ${issue.received}`));
  // valibot's JSON Schema converter flattens pipes: it meets this first item, not the pipe.
  plainRecords.set(object, v.record(key, value));
  return v.pipe(
    object,
    v.rawTransform(({ dataset, addIssue, NEVER }) => {
      const input = dataset.value;
      const out: Record<string, v.InferOutput<V>> = {};
      let failed = false;
      for (const [k, item] of Object.entries(input)) {
        const keyResult = v.safeParse(key, k);
        const valueResult = v.safeParse(value, item);
        const here = (origin: 'key' | 'value'): v.IssuePathItem => ({ type: 'object', origin, input, key: k, value: item });
        if (!keyResult.success) {
          failed = true;
          for (const issue of keyResult.issues) addIssue({ message: issue.message, expected: expectedOf(issue), received: issue.received, input: k, path: [here('key')] });
        }
        if (!valueResult.success) {
          failed = true;
          for (const issue of valueResult.issues) addIssue({ message: issue.message, expected: expectedOf(issue), received: issue.received, input: issue.input, path: [here('value'), ...(issue.path ?? [])] });
        }
        if (keyResult.success && valueResult.success) Object.defineProperty(out, keyResult.output, { value: valueResult.output, enumerable: true, writable: true, configurable: true });
      }
      return failed ? NEVER : out;
    }),
  );
}

/** The v.record an ownKeysRecord stands for in a JSON Schema (valibot's converter cannot read a custom check); undefined for any other schema. */
export function plainRecordOf(schema: object): v.GenericSchema | undefined {
  return plainRecords.get(schema);
}
