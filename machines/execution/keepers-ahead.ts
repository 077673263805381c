import type { NormalizedPlaybook, NormalizedStep } from '../../src/dsl/parse-playbook.ts';
import { admitsSignal, type Role } from '../../src/auth/roles.ts';
import { stepNamed } from './step-index.ts';
import type { ExecutionContext } from './types.ts';

/**
 * The steps that keep signal `name` (`buffer: true`) and may still begin to wait for it, and so
 * take it if it is kept now: those reached through `next` arcs (any arc, whatever its `when`: a
 * branch not known yet may take it) from the steps that run now, or, before the entry step ran
 * (queued for admission), the entry step and those reached from it. A step that runs now is
 * ahead only when an arc leads back to it (a cycle): the run it has is not a wait that begins.
 * Nearest first (fewest arcs away), then in the playbook's order. With `role`, only those whose
 * approval admits a sender of that role (the only ones that would take its signal,
 * machines/execution/step-wait.ts). Empty: a signal kept now would never be taken.
 * The one reading of it: the machine's `bufferable` guard and the signal route's answer.
 */
export function keepersAhead(pb: NormalizedPlaybook, ctx: ExecutionContext, name: string, role?: Role | null): NormalizedStep[] {
  const order = new Map(pb.workflow.map((s, i) => [s.step, i]));
  const byOrder = (a: string, b: string) => (order.get(a) ?? 0) - (order.get(b) ?? 0);
  const live = Object.values(ctx.runs).map((r) => r.step);
  // Nothing entered yet: queued, or the transition of the start itself.
  const from = live.length === 0 && !ctx.finished && ctx.nextRun === 1 ? null : [...new Set(live)].sort(byOrder);
  const reached: string[] = [];
  const seen = new Set<string>();
  let frontier = from === null ? [pb.entry] : from.flatMap((step) => stepNamed(pb, step).next.arcs.map((a) => a.step));
  while (frontier.length) {
    const next: string[] = [];
    for (const step of [...new Set(frontier)].sort(byOrder)) {
      if (seen.has(step)) continue;
      seen.add(step);
      reached.push(step);
      next.push(...stepNamed(pb, step).next.arcs.map((a) => a.step));
    }
    frontier = next;
  }
  return reached.map((step) => stepNamed(pb, step)).filter((s) => s.wait?.kind === 'signal' && s.wait.signal === name && s.wait.buffer && (role === undefined || admitsSignal(s.wait.roles, role)));
}
