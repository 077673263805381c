import { api, type Trigger } from '../api.ts';
import { usePoll } from '../hooks.ts';
import { href } from '../route.ts';
import { ErrorBox, Section } from '../ui.tsx';
import { TriggerTable } from './TriggerTable.tsx';
import { TRIGGERS_REFRESH_MS } from './TriggersPage.tsx';

/** The triggers of one playbook path, for its catalog page; nothing when it has none. */
export function PlaybookTriggers({ path }: { path: string }) {
  const list = usePoll((signal) => api<{ triggers: Trigger[] }>('/triggers', { signal }), TRIGGERS_REFRESH_MS, []);
  const mine = (list.data?.triggers ?? []).filter((t) => t.path === path);
  if (list.error) return <ErrorBox error={list.error} />;
  if (mine.length === 0) return null;
  return (
    <Section title="Triggers" actions={<a className="button" href={href(['triggers'], { path })}>All triggers</a>}>
      <TriggerTable triggers={mine} changed={list.reload} showPath={false} />
    </Section>
  );
}
