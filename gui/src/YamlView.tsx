import { Fragment, type ReactNode } from 'react';

// A small YAML highlighter: comments, keys, strings, numbers/booleans, and `{{ }}` / `{% %}`
// templates; one span per token, escaped by React.
const TOKEN = /(#.*$)|("(?:[^"\\]|\\.)*"|'(?:[^']|'')*')|(\{\{.*?\}\}|\{%.*?%\})|(^\s*(?:- )*[A-Za-z_][\w.-]*(?=\s*:))|(\b(?:true|false|null|-?\d+(?:\.\d+)?)\b)/g;

function highlight(line: string): ReactNode[] {
  const out: ReactNode[] = [];
  let last = 0;
  for (const m of line.matchAll(TOKEN)) {
    if (m.index > last) out.push(line.slice(last, m.index));
    const cls = m[1] ? 'y-comment' : m[2] ? 'y-string' : m[3] ? 'y-template' : m[4] ? 'y-key' : 'y-literal';
    out.push(
      <span key={m.index} className={cls}>
        {m[0]}
      </span>,
    );
    last = m.index + m[0].length;
  }
  if (last < line.length) out.push(line.slice(last));
  return out;
}

/** YAML with line numbers and colours; `marks` flags lines (1-based) with a message. */
export function YamlView({ text, marks }: { text: string; marks?: Map<number, string[]> }) {
  return (
    <pre className="yaml" tabIndex={0} aria-label="YAML">
      {text.split('\n').map((line, i) => {
        const problem = marks?.get(i + 1);
        return (
          <Fragment key={i}>
            <span className={`yl${problem ? ' has-problem' : ''}`} data-line={i + 1} title={problem?.join('\n')}>
              <span className="ln">{i + 1}</span>
              {highlight(line)}
              {'\n'}
            </span>
          </Fragment>
        );
      })}
    </pre>
  );
}

/** Line diff of two texts (longest common subsequence), as rows of kept, removed and added lines. */
export function diffLines(a: string, b: string): { kind: ' ' | '-' | '+'; text: string }[] {
  const x = a.split('\n');
  const y = b.split('\n');
  const n = x.length;
  const m = y.length;
  const lcs: number[][] = Array.from({ length: n + 1 }, () => new Array<number>(m + 1).fill(0));
  for (let i = n - 1; i >= 0; i--) for (let j = m - 1; j >= 0; j--) lcs[i][j] = x[i] === y[j] ? lcs[i + 1][j + 1] + 1 : Math.max(lcs[i + 1][j], lcs[i][j + 1]);
  const out: { kind: ' ' | '-' | '+'; text: string }[] = [];
  let i = 0;
  let j = 0;
  while (i < n && j < m) {
    if (x[i] === y[j]) {
      out.push({ kind: ' ', text: x[i] });
      i++;
      j++;
    } else if (lcs[i + 1][j] >= lcs[i][j + 1]) out.push({ kind: '-', text: x[i++] });
    else out.push({ kind: '+', text: y[j++] });
  }
  while (i < n) out.push({ kind: '-', text: x[i++] });
  while (j < m) out.push({ kind: '+', text: y[j++] });
  return out;
}
