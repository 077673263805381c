// A unified line diff (as `diff -u` prints it) from a longest common subsequence of lines.

type Op = { kind: ' ' | '-' | '+'; line: string };

/** The LCS table is at most this many cells; past it the differing middle is one removal and one addition. */
const MAX_CELLS = 4_000_000;
const CONTEXT = 3;

// A last line without a newline keeps a '\n' of its own (no other line holds one), so it differs
// from the same line with its newline: texts differing only there have a diff, as with diff -u.
const NO_EOL = '\n';
const NO_EOL_MARK = '\\ No newline at end of file';

const linesOf = (text: string): string[] => {
  const lines = text.split('\n');
  if (lines.at(-1) === '') lines.pop();
  else lines[lines.length - 1] += NO_EOL;
  return lines;
};

/** The edit script turning `a` into `b`: common prefix and suffix kept, the middle by LCS. */
function editScript(a: string[], b: string[]): Op[] {
  let start = 0;
  while (start < a.length && start < b.length && a[start] === b[start]) start++;
  let endA = a.length;
  let endB = b.length;
  while (endA > start && endB > start && a[endA - 1] === b[endB - 1]) {
    endA--;
    endB--;
  }
  const ops: Op[] = a.slice(0, start).map((line) => ({ kind: ' ', line }));
  const midA = a.slice(start, endA);
  const midB = b.slice(start, endB);
  const n = midA.length;
  const m = midB.length;
  if ((n + 1) * (m + 1) > MAX_CELLS) {
    for (const line of midA) ops.push({ kind: '-', line });
    for (const line of midB) ops.push({ kind: '+', line });
  } else {
    // lcs[i*(m+1)+j]: the LCS length of midA[i..] and midB[j..].
    const lcs = new Uint32Array((n + 1) * (m + 1));
    for (let i = n - 1; i >= 0; i--) {
      for (let j = m - 1; j >= 0; j--) {
        lcs[i * (m + 1) + j] = midA[i] === midB[j] ? lcs[(i + 1) * (m + 1) + j + 1] + 1 : Math.max(lcs[(i + 1) * (m + 1) + j], lcs[i * (m + 1) + j + 1]);
      }
    }
    // Walks the table; removals before additions, as diff -u prints them.
    let i = 0;
    let j = 0;
    while (i < n || j < m) {
      if (i < n && j < m && midA[i] === midB[j]) {
        ops.push({ kind: ' ', line: midA[i++] });
        j++;
      } else if (i < n && (j === m || lcs[(i + 1) * (m + 1) + j] >= lcs[i * (m + 1) + j + 1])) ops.push({ kind: '-', line: midA[i++] });
      else ops.push({ kind: '+', line: midB[j++] });
    }
  }
  for (const line of a.slice(endA)) ops.push({ kind: ' ', line });
  return ops;
}

/**
 * A unified diff of two texts by lines, headed `--- fromName` / `+++ toName`, hunks with three
 * lines of context (`\\ No newline at end of file` after a last line without one); the empty
 * string when the texts are the same.
 */
export function unifiedDiff(from: string, to: string, fromName: string, toName: string): string {
  const ops = editScript(linesOf(from), linesOf(to));
  const changed = ops.flatMap((o, i) => (o.kind === ' ' ? [] : [i]));
  if (changed.length === 0) return '';
  const out = [`--- ${fromName}`, `+++ ${toName}`];
  // Line numbers (1-based) in a and b before each op.
  const atA: number[] = [];
  const atB: number[] = [];
  let la = 1;
  let lb = 1;
  for (const o of ops) {
    atA.push(la);
    atB.push(lb);
    if (o.kind !== '+') la++;
    if (o.kind !== '-') lb++;
  }
  let k = 0;
  while (k < changed.length) {
    const first = Math.max(0, changed[k] - CONTEXT);
    let last = changed[k];
    while (k + 1 < changed.length && changed[k + 1] - last <= 2 * CONTEXT) last = changed[++k];
    k++;
    const end = Math.min(ops.length - 1, last + CONTEXT);
    const hunk = ops.slice(first, end + 1);
    const lenA = hunk.filter((o) => o.kind !== '+').length;
    const lenB = hunk.filter((o) => o.kind !== '-').length;
    // As diff -u: an empty side names the line before it.
    out.push(`@@ -${lenA ? atA[first] : atA[first] - 1},${lenA} +${lenB ? atB[first] : atB[first] - 1},${lenB} @@`);
    for (const o of hunk) out.push(...(o.line.endsWith(NO_EOL) ? [`${o.kind}${o.line.slice(0, -1)}`, NO_EOL_MARK] : [`${o.kind}${o.line}`]));
  }
  return `${out.join('\n')}\n`;
}
