import { StrictMode, useEffect, useState } from 'react';
import { createRoot } from 'react-dom/client';
import { asObject } from '../../src/objects.ts';
import { ApiError, api, configureApi, setToken, type RuntimeConfig } from './api.ts';
import { App } from './App.tsx';
import { SessionContext, type User } from './session.ts';
import { ErrorBox } from './ui.tsx';
import './styles.css';

type Phase =
  | { kind: 'loading' }
  | { kind: 'failed'; error: unknown }
  | { kind: 'token'; config: RuntimeConfig; error?: unknown }
  | { kind: 'ready'; config: RuntimeConfig; user: User | null };

/**
 * True when the console signs in with an API token: SVC_AUTH=token, or a gateway with no login
 * (no OpenID provider), which lets in only the server's API tokens, passed through as they came.
 */
const signsInWithToken = (config: RuntimeConfig): boolean => config.auth === 'token' || (config.auth === 'gateway' && !config.login_url);

/**
 * Set once Sign out begins: a view's request that the ended session makes answer 401 must not send
 * the browser to log in again, as the provider (whose session is still open) would sign it back in.
 */
let signingOut = false;

/** To the gateway's login, which brings the browser back to this page (its route, the hash, included). */
function logIn(loginUrl: string): void {
  if (signingOut) return;
  const url = new URL(loginUrl, location.href);
  url.searchParams.set('return_to', location.pathname + location.search + location.hash);
  location.assign(url.href);
}

/**
 * Ends the gateway session by POST, whose Origin proves it comes from this page (the gateway
 * refuses a logout another site sends the browser to), then goes where the gateway says: the
 * provider's logout. Throws ApiError when the gateway refuses.
 */
async function signOut(logoutUrl: string): Promise<void> {
  signingOut = true;
  let answer: Record<string, unknown>;
  try {
    const res = await fetch(logoutUrl, { method: 'POST', credentials: 'same-origin', headers: { accept: 'application/json' } });
    answer = asObject(await res.json().catch(() => null));
    if (!res.ok) throw new ApiError(res.status, answer.detail);
  } catch (error) {
    signingOut = false;
    throw error;
  }
  location.assign(typeof answer.redirect === 'string' ? answer.redirect : '/');
}

/** Runtime settings first (relative to where the console is served), then who the user is. */
function Boot() {
  const [phase, setPhase] = useState<Phase>({ kind: 'loading' });

  useEffect(() => {
    void (async () => {
      try {
        const res = await fetch('./runtime-config.json', { headers: { accept: 'application/json' } });
        if (!res.ok) throw new Error(`runtime-config.json answered ${res.status}`);
        const config = (await res.json()) as RuntimeConfig;
        configureApi(config.api_base || '/api', () => {
          if (config.auth === 'gateway' && config.login_url) logIn(config.login_url);
          else if (signsInWithToken(config)) {
            setToken(null);
            setPhase({ kind: 'token', config, error: new Error('the token was refused; give another') });
          }
        });
        if (signsInWithToken(config)) return setPhase({ kind: 'token', config });
        if (config.auth === 'gateway' && config.me_url) {
          const me = await fetch(config.me_url, { credentials: 'same-origin', headers: { accept: 'application/json' } });
          if (me.status === 401 && config.login_url) {
            // allow_skip_auth is false behind the gateway: nothing is shown before login.
            logIn(config.login_url);
            return;
          }
          if (!me.ok) throw new Error(`${config.me_url} answered ${me.status}`);
          return setPhase({ kind: 'ready', config, user: (await me.json()) as User });
        }
        setPhase({ kind: 'ready', config, user: null });
      } catch (error) {
        setPhase({ kind: 'failed', error });
      }
    })();
  }, []);

  if (phase.kind === 'loading') return <p className="boot">Loading…</p>;
  if (phase.kind === 'failed') return <ErrorBox error={phase.error} />;
  if (phase.kind === 'token') return <TokenPrompt config={phase.config} error={phase.error} onReady={(config) => setPhase({ kind: 'ready', config, user: null })} />;
  const logout = () => {
    setToken(null);
    if (phase.config.logout_url) signOut(phase.config.logout_url).catch((error: unknown) => setPhase({ kind: 'failed', error }));
    else if (signsInWithToken(phase.config)) setPhase({ kind: 'token', config: phase.config });
  };
  return (
    <SessionContext.Provider value={{ config: phase.config, user: phase.user, logout }}>
      <App />
    </SessionContext.Provider>
  );
}

/** SVC_AUTH=token: an API token, checked with one read, kept in memory (a reload asks again). */
function TokenPrompt({ config, error, onReady }: { config: RuntimeConfig; error?: unknown; onReady: (c: RuntimeConfig) => void }) {
  const [value, setValue] = useState('');
  const [problem, setProblem] = useState<unknown>(error);
  const [busy, setBusy] = useState(false);
  const submit = async (e: React.FormEvent) => {
    e.preventDefault();
    setBusy(true);
    setToken(value.trim());
    try {
      await api('/executions?limit=1');
      onReady(config);
    } catch (err) {
      setToken(null);
      setProblem(err instanceof ApiError && err.status === 401 ? new Error('the server refused this token') : err);
    } finally {
      setBusy(false);
    }
  };
  return (
    <main className="login">
      <form onSubmit={submit} className="panel">
        <h1>svc console</h1>
        <p>This server wants an API token (made with <code>svc token create --name you --role viewer</code>). It stays in this tab's memory only.</p>
        <label>
          API token
          <input type="password" autoComplete="off" autoFocus value={value} onChange={(e) => setValue(e.target.value)} required />
        </label>
        <ErrorBox error={problem} />
        <button type="submit" disabled={busy || !value.trim()}>
          Sign in
        </button>
      </form>
    </main>
  );
}

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <Boot />
  </StrictMode>,
);
