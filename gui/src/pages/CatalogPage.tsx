import { api, type CatalogEntry } from '../api.ts';
import { usePoll } from '../hooks.ts';
import { href } from '../route.ts';
import { useCan } from '../session.ts';
import { ErrorBox, Section, formatTime } from '../ui.tsx';

/** Every catalog path (newest version): playbooks and agents. */
export function CatalogPage() {
  const canOperate = useCan('operator');
  const list = usePoll((signal) => api<{ playbooks: CatalogEntry[] }>('/catalog/playbooks', { signal }), null, []);
  return (
    <Section title="Catalog" actions={canOperate ? <a className="button" href={href(['catalog', 'new'])}>Register a playbook</a> : null}>
      <ErrorBox error={list.error} />
      <table className="list">
        <thead>
          <tr>
            <th scope="col">Path</th>
            <th scope="col">Kind</th>
            <th scope="col">Version</th>
            <th scope="col">Registered</th>
          </tr>
        </thead>
        <tbody>
          {list.data?.playbooks.map((p) => (
            <tr key={p.catalog_id}>
              <td>
                <a href={href(['catalog', 'entry', p.path])}>{p.path}</a>
              </td>
              <td>{p.kind}</td>
              <td>{p.version}</td>
              <td>{formatTime(p.created_at)}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {list.data?.playbooks.length === 0 ? <p className="muted">The catalog is empty: register a playbook.</p> : null}
    </Section>
  );
}
