import { COMMAND_RULES } from '../machines/command-rules.ts';
import type { UnitCommandUpdate } from '../src/db/unit-write.ts';

/**
 * True for a unit's update that records a worker's report on a command cancelled while it held it
 * (its status stays cancelled). The report gives back what the command kept until then: its
 * limit's slot (migrations/0054) and, the last of its execution's, its ended execution's
 * admission's slot (migrations/0055). Claimers and the admitter may have room now.
 */
export function isLateCancelReport(u: Pick<UnitCommandUpdate, 'status' | 'expected_status'>): boolean {
  return u.status === COMMAND_RULES.cancel.to && u.expected_status === u.status;
}
