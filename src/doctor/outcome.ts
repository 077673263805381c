// The one shape every doctor tool answers with, on the command line and over HTTP.

/** `ok`: nothing to do; `warning`/`critical`: an anomaly (critical: work is blocked); `error`: the tool could not run. */
const SEVERITIES = ['ok', 'warning', 'critical', 'error'] as const;
export type Severity = (typeof SEVERITIES)[number];

export const TOOL_NAMES = ['detect', 'reachability', 'repair_trigger_reaper'] as const;
export type ToolName = (typeof TOOL_NAMES)[number];

/**
 * What a tool found. `data.summary` says it in one line and `data.next_steps` lists what to run
 * next (commands a person can paste); the rest of `data` is the tool's own findings.
 */
export type Outcome = {
  action: ToolName;
  severity: Severity;
  generated_at: string;
  data: { summary: string; next_steps: string[]; [key: string]: unknown };
};

/** Process exit codes: 0 ok (healthy, repaired, no-op), 2 an anomaly was found, 3 the tool could not run. */
const EXIT_OK = 0;
const EXIT_ANOMALY = 2;
export const EXIT_COULD_NOT_RUN = 3;

export function exitCodeOf(severity: Severity): number {
  if (severity === 'ok') return EXIT_OK;
  return severity === 'error' ? EXIT_COULD_NOT_RUN : EXIT_ANOMALY;
}

/** The more serious of two anomaly severities (ok < warning < critical). */
export function worse(a: Severity, b: Severity): Severity {
  return SEVERITIES.indexOf(a) >= SEVERITIES.indexOf(b) ? a : b;
}

export function outcome(action: ToolName, severity: Severity, data: Outcome['data']): Outcome {
  return { action, severity, generated_at: new Date().toISOString(), data };
}
