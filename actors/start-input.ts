import type { ExecutionInput } from '../machines/execution.machine.ts';
import type { Admission } from '../machines/execution/types.ts';
import { DEFAULT_PRIORITY } from '../machines/flow-key.ts';
import type { StartRequest } from './unit-types.ts';

/**
 * The input a start records in its `execution.started` and its machine starts from: `rootId` and
 * `priority` as the fold resolved them, `admission` as admitted at the start (or still waiting).
 */
export function startInput(req: StartRequest, rootId: number, priority: number, admission: Admission | undefined): ExecutionInput {
  return {
    executionId: req.executionId,
    catalogId: req.compiled.catalogId,
    path: req.compiled.path,
    parentExecutionId: req.parent?.executionId ?? null,
    parentSeq: req.parent?.seq ?? null,
    rootExecutionId: rootId,
    ...(req.parent?.depth ? { depth: req.parent.depth } : {}),
    workload: req.workload,
    args: req.args,
    childTaskTimers: true,
    ...(req.replay ? { replay: req.replay } : {}),
    ...(req.signals ? { signals: req.signals } : {}),
    // A start's own priority is recorded whatever it is: 5 over a playbook's 9 is what a retry
    // or auto-resume's restart (src/engine/asked-of.ts) must start it at again, not the 9.
    ...(priority !== DEFAULT_PRIORITY || req.priority !== undefined ? { priority } : {}),
    ...(admission ? { admission } : {}),
  };
}
