import { api, type Trigger } from '../api.ts';
import { usePoll } from '../hooks.ts';
import { href, navigate } from '../route.ts';
import { ErrorBox, Section } from '../ui.tsx';
import { TriggerTable } from './TriggerTable.tsx';

const KINDS = ['', 'schedule', 'webhook', 'nats'] as const;
// Fires happen on their own; the list follows them at this pace.
export const TRIGGERS_REFRESH_MS = 5_000;

/** Every live trigger (GET /api/triggers), by kind, or those of one playbook (`?path=`, `&name=` for one trigger). */
export function TriggersPage({ query }: { query: URLSearchParams }) {
  const kind = query.get('kind') ?? '';
  const path = query.get('path') ?? '';
  const name = query.get('name') ?? '';
  const list = usePoll((signal) => api<{ triggers: Trigger[]; count: number }>(`/triggers${kind ? `?kind=${encodeURIComponent(kind)}` : ''}`, { signal }), TRIGGERS_REFRESH_MS, [kind]);
  const shown = (list.data?.triggers ?? []).filter((t) => (!path || t.path === path) && (!name || t.name === name));
  return (
    <Section title="Triggers" actions={<span className="muted">{list.loading && !list.data ? 'loading…' : 'live'}</span>}>
      <div className="filters">
        <label>
          Kind
          <select value={kind} onChange={(e) => navigate(href(['triggers'], { kind: e.target.value, path, name }))}>
            {KINDS.map((k) => (
              <option key={k} value={k}>
                {k || 'any'}
              </option>
            ))}
          </select>
        </label>
        {path ? (
          <p>
            {name ? `Trigger ${name} of ` : 'Triggers of '}
            <a href={href(['catalog', 'entry', path])}>{path}</a> · <a href={href(['triggers'], { kind })}>show all</a>
          </p>
        ) : null}
      </div>
      <ErrorBox error={list.error} />
      {list.data ? (
        shown.length ? (
          <TriggerTable triggers={shown} changed={list.reload} />
        ) : (
          <p className="muted">No {kind ? `${kind} ` : ''}triggers{path ? ' here' : ''}. A playbook declares them in its <code>triggers:</code> block: schedules, signed webhooks and NATS subscriptions (docs/triggers.md).</p>
        )
      ) : null}
    </Section>
  );
}

