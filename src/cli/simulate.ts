import { parseArgs } from 'node:util';
import { playbookPaths, simulatePlaybook, type SimulatedOutcomes } from '../../machines/simulate-playbook.ts';
import { parsePlaybook } from '../dsl/parse-playbook.ts';
import { payloadRefusal } from '../../machines/payload-refusal.ts';
import { problemLines } from './located-lines.ts';
import { undecidedText } from '../../machines/simulation-data.ts';
import { SIMULATE_USAGE } from './simulate-usage.ts';
import { NotUtf8Error, readTextFile } from './read-text-file.ts';
import { inapplicableOutcome } from '../../machines/inapplicable-outcome.ts';
import { outcomeProblem, type SimulatedOutcome } from '../../machines/simulated-outcome.ts';
import { optionErrorMessage, usageSynopsis, UsageError, writeUsageError } from './usage-error.ts';
import { jsonObjectOption } from './json-option.ts';

type Out = { write(text: string): unknown };

/** Parses `--outcome step=ok,error` values; a message for the first bad one. */
export function parseOutcomes(values: string[]): SimulatedOutcomes | string {
  const out: SimulatedOutcomes = {};
  for (const text of values) {
    const at = text.lastIndexOf('=');
    const step = at > 0 ? text.slice(0, at) : '';
    const list = text.slice(at + 1).split(',');
    const code = list.find((o) => o.startsWith('error:') && outcomeProblem(o) !== undefined);
    if (step && code) return `--outcome ${step}=${code}: ${outcomeProblem(code)}`;
    if (!step || !list.every((o): o is SimulatedOutcome => outcomeProblem(o) === undefined)) return `--outcome expects STEP=ok|error[:CODE]|timeout[,...] (timeout: a signal wait times out), got ${JSON.stringify(text)}`;
    out[step] = list.length === 1 ? list[0] : list;
  }
  return out;
}

/** Parses `--result step=JSON` values (a step's example result); a message for the first bad one. */
export function parseResults(values: string[]): Record<string, unknown> | string {
  const out: Record<string, unknown> = {};
  for (const text of values) {
    const at = text.indexOf('=');
    const step = at > 0 ? text.slice(0, at) : '';
    let value: unknown;
    try {
      value = JSON.parse(text.slice(at + 1));
    } catch {
      return `--result expects STEP=JSON, got ${JSON.stringify(text)}`;
    }
    if (!step) return `--result expects STEP=JSON, got ${JSON.stringify(text)}`;
    out[step] = value;
  }
  return out;
}

/** `svc simulate`: runs a playbook file's statechart with no database and no workers; returns the exit code. */
export async function simulateCommand(argv: string[], out: Out = process.stdout, errOut: Out = process.stderr): Promise<number> {
  // A command line `svc simulate` cannot take (every exit 2: options, the file, a refused payload): written as every command writes a usage error.
  const usageFailed = (message: string, extra?: Record<string, unknown>): number => {
    writeUsageError({ out, err: errOut }, 'simulate', message, usageSynopsis(SIMULATE_USAGE), argv, 2, extra);
    return 2;
  };
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      options: { outcome: { type: 'string', multiple: true }, result: { type: 'string', multiple: true }, payload: { type: 'string' }, paths: { type: 'boolean' }, json: { type: 'boolean' } },
      strict: true,
      allowPositionals: true,
    });
  } catch (err) {
    return usageFailed(optionErrorMessage(err, argv));
  }
  const [file, ...rest] = parsed.positionals;
  if (!file || rest.length) return usageFailed('expects one playbook file');
  const outcomes = parseOutcomes(parsed.values.outcome ?? []);
  if (typeof outcomes === 'string') return usageFailed(outcomes);
  const results = parseResults(parsed.values.result ?? []);
  if (typeof results === 'string') return usageFailed(results);
  let payload: Record<string, unknown> = {};
  try {
    if (parsed.values.payload !== undefined) payload = jsonObjectOption('--payload', parsed.values.payload, '{"limit": 5}');
  } catch (err) {
    if (err instanceof UsageError) return usageFailed(err.message);
    throw err;
  }
  let text: string;
  try {
    text = await readTextFile(file);
  } catch (err) {
    if (err instanceof NotUtf8Error) return usageFailed(err.message, { file, line: err.line, column: err.column });
    return usageFailed(`cannot read ${file}: ${err instanceof Error && 'code' in err ? String(err.code) : String(err)}`);
  }
  // Problems as registration prints them (file:line:col), or, with --json, as its answer lists them.
  const checked = parsePlaybook(text);
  if (!checked.ok) {
    if (parsed.values.json) out.write(`${JSON.stringify({ file, error: 'invalid playbook', problems: checked.problems }, null, 2)}\n`);
    errOut.write(`svc simulate: invalid playbook ${file}\n${problemLines(file, checked.problems)}`);
    return 1;
  }
  const pb = checked.playbook;
  // The payload stands for a start's: one a start refuses runs nothing to simulate.
  const refused = payloadRefusal(pb, payload);
  if (refused) return usageFailed(refused);
  for (const [flag, given] of [['--outcome', outcomes], ['--result', results]] as const) {
    for (const step of Object.keys(given)) {
      if (!pb.workflow.some((s) => s.step === step)) return usageFailed(`${flag} names no step of the playbook: ${step}`);
    }
  }
  for (const [name, chosen] of Object.entries(outcomes)) {
    const step = pb.workflow.find((s) => s.step === name);
    const problem = step && [chosen].flat().map((o) => [o, inapplicableOutcome(step, o)] as const).find(([, why]) => why !== undefined);
    if (problem) return usageFailed(`--outcome ${name}=${problem[0]}: ${problem[1]}`);
  }
  if (parsed.values.paths) {
    const report = playbookPaths(pb, { payload, results });
    if (parsed.values.json) {
      out.write(`${JSON.stringify(report, null, 2)}\n`);
      return 0;
    }
    for (const p of report.paths) {
      const chosen = p.outcomes.map((o) => `${o.step}=${o.outcome}`).join(' ');
      out.write(`${(p.cut ? `${p.status} (cut)` : p.status).padEnd(16)} ${p.path.join(' → ')}${chosen ? `   [${chosen}]` : ''}${p.undecided ? `   (${undecidedText(p.undecided)})` : ''}\n`);
    }
    out.write(`${report.paths.length} path(s)${report.truncated ? ' (state space too large: partial)' : ''}\n`);
    if (report.unreachable.length) out.write(`unreachable steps: ${report.unreachable.join(', ')}\n`);
    if (report.depends_on_data.length) {
      // No path stopped on missing data: the example results decided, and others may reach these.
      const sampled = !report.paths.some((p) => p.undecided);
      out.write(sampled ? `not reached with these example results (others may reach them): ${report.depends_on_data.join(', ')}\n` : `not reached without data (give examples: or --result, the workload --payload): ${report.depends_on_data.join(', ')}\n`);
    }
    return 0;
  }
  const result = simulatePlaybook(pb, outcomes, { payload, results });
  if (parsed.values.json) {
    out.write(`${JSON.stringify(result, null, 2)}\n`);
    return 0;
  }
  out.write(`path:   ${result.path.join(' → ')}\n`);
  if (result.undecided) out.write(`status: ${result.status} (${undecidedText(result.undecided)})\n`);
  else out.write(`status: ${result.status}${result.error ? ` (${result.error.step ? `${result.error.step}: ` : ''}${result.error.message})` : ''}\n`);
  out.write(`steps:  ${Object.entries(result.steps).map(([name, s]) => `${name} ${s.status}`).join(', ')}\n`);
  return 0;
}
