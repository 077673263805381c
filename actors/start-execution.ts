import type { EngineDeps } from './engine-deps.ts';
import { ExecutionUnit } from './execution-unit.ts';
import type { CompiledPlaybook } from './playbook-cache.ts';

/**
 * Starts an execution in one transaction: `execution.started`, the first step's events and
 * command rows, the projection and snapshot. Workers hear of the commands after commit.
 */
export async function startExecution(
  deps: EngineDeps,
  req: { compiled: CompiledPlaybook; payload: Record<string, unknown> },
): Promise<{ executionId: number; commandsGenerated: number }> {
  const out = await deps.db.tx(async (q) => {
    const unit = new ExecutionUnit(q, deps.cache);
    const executionId = await unit.start({
      compiled: req.compiled,
      workload: { ...req.compiled.playbook.workload, ...req.payload },
      args: req.payload,
    });
    await unit.flush();
    return { executionId, commandsGenerated: unit.commandsGenerated, finished: unit.finished };
  });
  deps.metrics.executionsStarted.inc();
  deps.metrics.commandsIssued.inc(out.commandsGenerated);
  for (const f of out.finished) deps.metrics.executionsFinished.inc({ status: f.status });
  return { executionId: out.executionId, commandsGenerated: out.commandsGenerated };
}
