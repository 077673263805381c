import { yamlPositions, positionOf } from '../dsl/yaml-positions.ts';
import { isObject } from '../objects.ts';
import { load } from 'js-yaml';

type Located = { path: string; message: string; line?: number; column?: number };

/** Registration problems as compilers print them, `file:line:col: message`, one a line. */
export function problemLines(file: string, problems: readonly Located[]): string {
  return problems.map((p) => `${file}:${p.line ?? 1}:${p.column ?? 1}: ${p.path === '$' ? '' : `${p.path}: `}${p.message}\n`).join('');
}

/**
 * Registration warnings as `file:line:col: warning: message`. A warning names its place as a
 * prefix (`workflow.<step>: …`), which is found in `content` at the step of that name; a path
 * that starts a sentence (`metadata.terminal.visibel is not …`) is its place too.
 */
export function warningLines(file: string, content: string, warnings: readonly string[]): string {
  const positions = yamlPositions(content);
  let steps: string[] = [];
  try {
    const doc: unknown = load(content);
    if (isObject(doc) && Array.isArray(doc.workflow)) steps = doc.workflow.map((s) => (isObject(s) && typeof s.step === 'string' ? s.step : ''));
  } catch {
    // positions stay at 1:1
  }
  return warnings
    .map((w) => {
      const named = /^workflow\.([^:]+):/.exec(w);
      const index = named ? steps.indexOf(named[1]) : -1;
      const where = positionOf(positions, index >= 0 ? `workflow[${index}]` : (/^([^:\s]+)[:\s]/.exec(w)?.[1] ?? '$'));
      return `${file}:${where.line}:${where.column}: warning: ${w}\n`;
    })
    .join('');
}
