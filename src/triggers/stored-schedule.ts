import * as v from 'valibot';
import { ScheduleTriggerSchema, type ScheduleTrigger } from './trigger.schema.ts';

/**
 * A schedule's stored spec as this version reads it, or why it cannot: a row registered under
 * older, looser rules (a name longer than 128 characters, before e642708). One such row must
 * not stop every other schedule (the timekeeper's tick) nor fail the listing with a 500: each
 * reader decides what to do with the problem.
 */
export function storedSchedule(spec: unknown): { spec: ScheduleTrigger } | { problem: string } {
  const parsed = v.safeParse(ScheduleTriggerSchema, spec);
  if (parsed.success) return { spec: parsed.output };
  const issue = parsed.issues[0];
  const where = v.getDotPath(issue);
  return { problem: `the stored schedule no longer reads (${where ? `${where}: ` : ''}${issue.message}): register a new version of the playbook` };
}
