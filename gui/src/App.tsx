import { CatalogEntryPage } from './pages/CatalogEntryPage.tsx';
import { CatalogPage } from './pages/CatalogPage.tsx';
import { EditorPage } from './pages/EditorPage.tsx';
import { ExecutionPage } from './pages/ExecutionPage.tsx';
import { ExecutionsPage } from './pages/ExecutionsPage.tsx';
import { AgentsPage } from './pages/AgentsPage.tsx';
import { OperationsPage } from './pages/OperationsPage.tsx';
import { TriggersPage } from './pages/TriggersPage.tsx';
import { href, useRoute } from './route.ts';
import { useSession } from './session.ts';

const SECTIONS = [
  { key: 'executions', label: 'Executions' },
  { key: 'catalog', label: 'Catalog' },
  { key: 'triggers', label: 'Triggers' },
  { key: 'agents', label: 'Agents' },
  { key: 'operations', label: 'Operations' },
] as const;

/** The shell: navigation, who is signed in, and the page of the route. */
export function App() {
  const route = useRoute();
  const session = useSession();
  const [section = 'executions', ...rest] = route.parts;
  return (
    <>
      <a className="skip" href="#main" onClick={(e) => { e.preventDefault(); document.getElementById('main')?.focus(); }}>
        Skip to content
      </a>
      <header className="top">
        <a className="brand" href={href(['executions'])}>svc</a>
        <nav aria-label="Sections">
          {SECTIONS.map((s) => (
            <a key={s.key} href={href([s.key])} aria-current={section === s.key ? 'page' : undefined}>
              {s.label}
            </a>
          ))}
        </nav>
        <div className="who">
          {session.user ? <span title={session.user.email ?? undefined}>{session.user.name ?? session.user.sub} ({session.user.roles.join(', ') || 'no role'})</span> : null}
          {session.config.auth !== 'none' ? (
            <button type="button" className="link" onClick={session.logout}>
              Sign out
            </button>
          ) : null}
        </div>
      </header>
      <main id="main" tabIndex={-1}>
        {page(section, rest, route.query)}
      </main>
    </>
  );
}

function page(section: string, rest: string[], query: URLSearchParams) {
  switch (section) {
    case 'executions':
      // Keyed by id: another execution's page starts afresh (nothing of the last one shown meanwhile).
      if (!rest[0]) return <ExecutionsPage query={query} />;
      // An id is a positive integer: anything else names no execution, so nothing is asked of the server.
      if (!/^[1-9][0-9]{0,15}$/.test(rest[0])) return <p className="error" role="alert">No execution “{rest[0]}”: an execution id is a number. <a href={href(['executions'])}>Executions</a></p>;
      return <ExecutionPage key={rest[0]} id={Number(rest[0])} />;
    case 'catalog':
      if (rest[0] === 'new') return <EditorPage />;
      if (rest[0] === 'edit') return <EditorPage path={rest.slice(1).join('/')} />;
      if (rest[0] === 'entry') return <CatalogEntryPage path={rest.slice(1).join('/')} version={query.get('version')} />;
      return <CatalogPage />;
    case 'triggers':
      return <TriggersPage query={query} />;
    case 'agents':
      return <AgentsPage />;
    case 'operations':
      return <OperationsPage query={query} />;
    default:
      return <p>Nothing here. <a href={href(['executions'])}>Executions</a></p>;
  }
}
