// Where in YAML text a problem path (`workflow[2].tool[0].kind`, the server's Problem.path)
// points: a walk over the block structure by indentation. Flow collections (`{…}`, `[…]`) end
// the walk at their line. Lines are 1-based.

type Token = { key: string } | { index: number };

function tokens(path: string): Token[] {
  const out: Token[] = [];
  const re = /\[(\d+)\]|\["((?:[^"\\]|\\.)*)"\]|\.?([^.[\]]+)/g;
  for (const m of path.matchAll(re)) {
    if (m[1] !== undefined) out.push({ index: Number(m[1]) });
    else if (m[2] !== undefined) out.push({ key: JSON.parse(`"${m[2]}"`) as string });
    else if (m[3] !== undefined && m[3] !== '$') out.push({ key: m[3] });
  }
  return out;
}

const contentColumn = (line: string): number => {
  const m = /^[ -]*/.exec(line)!;
  // "  - - key": the content starts after the dashes and their spaces.
  return m[0].length;
};
const blank = (line: string) => /^\s*(#.*)?$/.test(line);
const escapeRe = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** The 1-based line a problem path points to in `text`; 1 for the root or what cannot be found. */
export function lineOfPath(text: string, path: string): number {
  const yamlAt = /at line (\d+)/.exec(path);
  if (yamlAt) return Number(yamlAt[1]);
  const lines = text.split('\n');
  let start = 0;
  let end = lines.length;
  let col = 0;
  let found = 0;
  for (const t of tokens(path)) {
    let hit = -1;
    if ('key' in t) {
      const re = new RegExp(`^["']?${escapeRe(t.key)}["']?\\s*:(\\s|$)`);
      for (let i = start; i < end; i++) {
        const line = lines[i];
        if (blank(line)) continue;
        const c = contentColumn(line);
        if (c === col && /^[ -]*$/.test(line.slice(0, col)) && re.test(line.slice(col))) {
          hit = i;
          break;
        }
      }
      if (hit < 0) break;
      found = hit;
      const rest = lines[hit].slice(col).replace(/^[^:]*:\s*/, '');
      if (rest && !rest.startsWith('#')) break; // inline value
      start = hit + 1;
      end = blockEnd(lines, start, col);
      const first = lines.slice(start, end).find((l) => !blank(l));
      if (first === undefined) break;
      col = /^ */.exec(first)![0].length;
    } else {
      let n = -1;
      for (let i = start; i < end; i++) {
        const line = lines[i];
        if (blank(line)) continue;
        if (line.slice(0, col).trim() === '' && line.slice(col).startsWith('-')) {
          n++;
          if (n === t.index) {
            hit = i;
            break;
          }
        }
      }
      if (hit < 0) break;
      found = hit;
      start = hit;
      end = itemEnd(lines, hit + 1, col, end);
      col = col + 2;
    }
  }
  return found + 1;
}

function blockEnd(lines: string[], from: number, parentCol: number): number {
  for (let i = from; i < lines.length; i++) {
    if (blank(lines[i])) continue;
    const indent = /^ */.exec(lines[i])![0].length;
    // A sequence may sit at its key's own indentation ("key:\n- a").
    if (indent < parentCol || (indent === parentCol && !lines[i].slice(indent).startsWith('-'))) return i;
  }
  return lines.length;
}

function itemEnd(lines: string[], from: number, col: number, limit: number): number {
  for (let i = from; i < limit; i++) {
    if (blank(lines[i])) continue;
    const indent = /^ */.exec(lines[i])![0].length;
    if (indent <= col) return i;
  }
  return limit;
}
