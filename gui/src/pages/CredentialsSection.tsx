import { useState } from 'react';
import { MaskedTextarea } from '../MaskedTextarea.tsx';
import { api } from '../api.ts';
import { usePoll } from '../hooks.ts';
import { useCan } from '../session.ts';
import { ErrorBox, Section, formatTime } from '../ui.tsx';

type Credential = { id: string; name: string; type: string; description?: string | null; tags?: string[]; created_at: string; updated_at: string };
type FieldKind = 'string' | 'url' | 'integer' | 'port' | 'boolean' | 'object' | 'strings';
type Field = { name: string; kind: FieldKind; description: string; secret: boolean; multiline?: boolean; aliasOf?: string; choices?: string[] };
type TypeSpec = { type: string; description: string; fields: Field[]; required: string[][]; open: boolean; test: 'postgres' | 'http' | 'nats' | null };
type TestResult = { ok: boolean; message: string; status?: number; duration_ms: number };

// The data label of free-form types: the whole data (custom) or the fields beyond the known ones.
const JSON_LABEL = 'Data (JSON; sealed by the server, never shown again)';
const EXTRA_LABEL = 'Other fields (JSON)';

type FormState = { editing: boolean; name: string; type: string; description: string; values: Record<string, string>; extra: string };
const emptyForm = (type: string): FormState => ({ editing: false, name: '', type, description: '', values: {}, extra: '{}' });

/** The form's fields of a type: its own names (aliases are for stored data and the docs). */
const formFields = (spec: TypeSpec | undefined): Field[] => spec?.fields.filter((f) => !f.aliasOf) ?? [];
const isRequired = (spec: TypeSpec, name: string): boolean => spec.required.some((group) => group.length === 1 && group[0] === name);

/** The data object a form holds: filled fields converted to their kind, then the JSON extras. */
function formData(spec: TypeSpec | undefined, form: FormState): { data: Record<string, unknown> } | { problem: string } {
  const data: Record<string, unknown> = {};
  if (spec?.open || !spec) {
    try {
      const extra: unknown = JSON.parse(form.extra || '{}');
      if (!extra || typeof extra !== 'object' || Array.isArray(extra)) return { problem: 'the JSON must be an object' };
      Object.assign(data, extra);
    } catch (e) {
      return { problem: e instanceof Error ? e.message : String(e) };
    }
  }
  for (const field of formFields(spec)) {
    const raw = form.values[field.name] ?? '';
    if (raw === '') continue;
    if (field.kind === 'integer' || field.kind === 'port') data[field.name] = /^\d+$/.test(raw) ? Number(raw) : raw;
    else if (field.kind === 'boolean') data[field.name] = raw === 'true';
    else if (field.kind === 'object') {
      try {
        data[field.name] = JSON.parse(raw);
      } catch {
        return { problem: `${field.name} must be JSON` };
      }
    } else data[field.name] = raw;
  }
  return { data };
}

/** Credentials: the list (never data), a form generated from GET /api/credential-types, edit and Test per row. */
export function Credentials() {
  const canAdmin = useCan('admin');
  const list = usePoll((signal) => api<{ credentials: Credential[] }>('/credentials', { signal }), null, []);
  const types = usePoll((signal) => api<{ types: TypeSpec[] }>('/credential-types', { signal }), null, []);
  const [form, setForm] = useState<FormState>(emptyForm('bearer'));
  // Bumped when the form starts over (saved, cancelled, another credential opened): its fields are
  // made anew, so a secret shown with its toggle is masked again for the next one.
  const [generation, setGeneration] = useState(0);
  const restart = (next: FormState) => {
    setForm(next);
    setGeneration((g) => g + 1);
  };
  const [error, setError] = useState<unknown>();
  const [tested, setTested] = useState<{ name: string; result: TestResult } | null>(null);
  const spec = types.data?.types.find((t) => t.type === form.type);
  const built = formData(spec, form);
  const problem = 'problem' in built ? built.problem : null;

  const submit = async (e: React.FormEvent) => {
    e.preventDefault();
    if (!('data' in built)) return;
    // POST /api/credentials creates or updates by name: "Create" on a name that exists replaced the
    // data of that credential (which playbooks use) without a word. It asks first.
    const existing = form.editing ? undefined : list.data?.credentials.find((c) => c.name === form.name);
    if (existing && !confirm(`A credential named ${existing.name} (${existing.type}) exists: replace its data with this ${form.type} one?`)) return;
    setError(undefined);
    try {
      const description = form.description || undefined;
      if (form.editing) {
        // PATCH merges: fields left blank keep their stored (never shown) values.
        await api(`/credentials/${encodeURIComponent(form.name)}`, { method: 'PATCH', body: { type: form.type, description, data: built.data } });
      } else {
        await api('/credentials', { body: { name: form.name, type: form.type, description, data: built.data } });
      }
      // The data leaves the form once sent: the console never shows it again.
      restart(emptyForm(form.type));
      list.reload();
    } catch (err) {
      setError(err);
    }
  };
  const remove = async (name: string) => {
    if (!confirm(`Delete credential ${name}?`)) return;
    try {
      await api(`/credentials/${encodeURIComponent(name)}`, { method: 'DELETE' });
      list.reload();
    } catch (err) {
      setError(err);
    }
  };
  const test = async (c: Credential) => {
    setError(undefined);
    setTested(null);
    const kind = types.data?.types.find((t) => t.type === c.type)?.test;
    let body: { url?: string } = {};
    if (kind === 'http') {
      const url = prompt(`URL to send a GET with ${c.name}'s auth`, 'https://');
      if (!url) return;
      body = { url };
    }
    try {
      setTested({ name: c.name, result: await api<TestResult>(`/credentials/${encodeURIComponent(c.name)}/test`, { body }) });
    } catch (err) {
      setError(err);
    }
  };
  const edit = (c: Credential) => restart({ editing: true, name: c.name, type: c.type, description: c.description ?? '', values: {}, extra: '{}' });
  const setValue = (name: string, value: string) => setForm({ ...form, values: { ...form.values, [name]: value } });

  return (
    <Section title="Credentials">
      <ErrorBox error={list.error ?? types.error ?? error} />
      {tested ? (
        <p role="status" className={tested.result.ok ? undefined : 'error'}>
          {tested.name}: {tested.result.ok ? 'ok' : 'failed'} — {tested.result.message} ({tested.result.duration_ms} ms)
        </p>
      ) : null}
      <table className="list">
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Type</th>
            <th scope="col">Description</th>
            <th scope="col">Created</th>
            <th scope="col">Updated</th>
            {canAdmin ? <th scope="col">Actions</th> : null}
          </tr>
        </thead>
        <tbody>
          {list.data?.credentials.map((c) => (
            <tr key={c.id}>
              <td>{c.name}</td>
              <td>{c.type}</td>
              <td>{c.description}</td>
              <td>{formatTime(c.created_at)}</td>
              <td>{formatTime(c.updated_at)}</td>
              {canAdmin ? (
                <td>
                  {types.data?.types.find((t) => t.type === c.type)?.test ? (
                    <button type="button" onClick={() => void test(c)}>
                      Test
                    </button>
                  ) : null}{' '}
                  <button type="button" onClick={() => edit(c)}>
                    Edit
                  </button>{' '}
                  <button type="button" className="danger" onClick={() => void remove(c.name)}>
                    Delete
                  </button>
                </td>
              ) : null}
            </tr>
          ))}
        </tbody>
      </table>
      {canAdmin ? (
        <form className="stack" onSubmit={submit} aria-label={form.editing ? 'Edit credential' : 'New credential'}>
          <h3>{form.editing ? `Edit ${form.name}` : 'New credential'}</h3>
          {form.editing ? (
            <p className="muted">Stored values are never shown: fields left blank keep theirs.</p>
          ) : (
            <label>
              Name <input required value={form.name} onChange={(e) => setForm({ ...form, name: e.target.value })} placeholder="api_auth" />
            </label>
          )}
          <label>
            Type{' '}
            <select value={form.type} onChange={(e) => setForm({ ...form, type: e.target.value, values: {} })}>
              {(types.data?.types ?? []).map((t) => (
                <option key={t.type}>{t.type}</option>
              ))}
            </select>
          </label>
          {spec ? <p className="muted">{spec.description}</p> : null}
          <label>
            Description <input value={form.description} onChange={(e) => setForm({ ...form, description: e.target.value })} />
          </label>
          {formFields(spec).map((field) => (
            <FieldInput key={`${generation}.${form.type}.${field.name}`} field={field} required={!form.editing && spec !== undefined && isRequired(spec, field.name)} value={form.values[field.name] ?? ''} onChange={(v) => setValue(field.name, v)} />
          ))}
          {spec?.open ? (
            // Secret as a whole: the custom data, or extras where a token may be added by hand.
            <MaskedTextarea
              key={`${generation}.${form.type}.extra`}
              id="credential-extra"
              name={spec.type === 'custom' ? 'data' : 'other fields'}
              label={spec.type === 'custom' ? JSON_LABEL : EXTRA_LABEL}
              rows={4}
              value={form.extra}
              onChange={(extra) => setForm({ ...form, extra })}
            />
          ) : null}
          {spec && spec.required.some((g) => g.length > 1) ? <p className="muted">Needs one of: {spec.required.filter((g) => g.length > 1).map((g) => g.join(' / ')).join('; ')}</p> : null}
          {problem ? <p className="error">{problem}</p> : null}
          <div>
            <button type="submit" disabled={problem !== null || !form.name}>
              {form.editing ? 'Save' : 'Create'}
            </button>{' '}
            {form.editing ? (
              <button type="button" onClick={() => restart(emptyForm(form.type))}>
                Cancel
              </button>
            ) : null}
          </div>
        </form>
      ) : null}
    </Section>
  );
}

/**
 * One field of the form, by kind; secrets are password inputs the browser does not fill or keep.
 * A multi-line field (a PEM key, a .creds file) is a textarea, which keeps the line breaks a
 * one-line input drops; it and a JSON object field are masked until shown when secret.
 */
function FieldInput({ field, required, value, onChange }: { field: Field; required: boolean; value: string; onChange: (value: string) => void }) {
  const label = `${field.name}${required ? ' *' : ''}`;
  const multiline = field.multiline && !field.choices && field.kind !== 'boolean' && field.kind !== 'object';
  if (field.secret && (multiline || field.kind === 'object')) {
    return (
      <MaskedTextarea
        id={`credential-field-${field.name}`}
        name={field.name}
        label={
          <>
            {label} <span className="muted">{field.description}</span>
          </>
        }
        title={field.description}
        ariaLabel={field.name}
        rows={multiline ? 4 : 3}
        value={value}
        onChange={onChange}
        placeholder={multiline ? undefined : '{}'}
      />
    );
  }
  let input;
  if (multiline) {
    input = <textarea aria-label={field.name} rows={4} className="code" value={value} onChange={(e) => onChange(e.target.value)} spellCheck={false} autoComplete="off" autoCapitalize="off" autoCorrect="off" />;
  } else if (field.choices || field.kind === 'boolean') {
    const choices = field.choices ?? ['true', 'false'];
    input = (
      <select aria-label={field.name} value={value} onChange={(e) => onChange(e.target.value)}>
        <option value="">(not set)</option>
        {choices.map((c) => (
          <option key={c}>{c}</option>
        ))}
      </select>
    );
  } else if (field.kind === 'object') {
    input = <textarea aria-label={field.name} rows={3} className="code" value={value} onChange={(e) => onChange(e.target.value)} placeholder="{}" spellCheck={false} autoComplete="off" />;
  } else {
    input = (
      <input
        aria-label={field.name}
        type={field.secret ? 'password' : field.kind === 'integer' || field.kind === 'port' ? 'number' : 'text'}
        autoComplete={field.secret ? 'new-password' : 'off'}
        value={value}
        onChange={(e) => onChange(e.target.value)}
      />
    );
  }
  return (
    <label title={field.description}>
      {label} <span className="muted">{field.description}</span>
      {input}
    </label>
  );
}
