import { load } from 'js-yaml';
import { useState } from 'react';
import * as v from 'valibot';
import { checkInputs, inputDefaults, type InputProblem } from '../../../src/dsl/check-inputs.ts';
import { InputsSchema, type InputDeclaration, type Inputs } from '../../../src/dsl/inputs.schema.ts';
import { parseInputText } from '../../../src/dsl/parse-input-text.ts';
import { asObject, isObject } from '../../../src/objects.ts';
import { api, type CatalogEntry } from '../api.ts';
import { newIdempotencyKey } from '../idempotency-key.ts';
import { href, navigate } from '../route.ts';
import { ErrorBox } from '../ui.tsx';

/** The YAML's `workload:` (with the inputs' defaults over it) and `inputs:` (null when none or malformed). */
function declared(content: string | undefined): { workload: Record<string, unknown>; inputs: Inputs | null } {
  let doc: unknown;
  try {
    doc = load(content ?? '');
  } catch {
    return { workload: {}, inputs: null };
  }
  const raw = isObject(doc) ? doc : {};
  const parsed = raw.inputs === undefined ? null : v.safeParse(InputsSchema, raw.inputs);
  const inputs = parsed?.success ? parsed.output : null;
  return { workload: { ...asObject(raw.workload), ...inputDefaults(inputs ?? undefined) }, inputs };
}

/** A workload value as a field's text: a string as it is, anything else as JSON, absent as empty. */
const textOf = (value: unknown): string => (value === undefined ? '' : typeof value === 'string' ? value : JSON.stringify(value));

/**
 * The run form of a catalog entry: generated from its `inputs:` (a control per input, pre-filled
 * from the defaults) and checked in the page by the server's own rule (check-inputs.ts), so a
 * wrong value is refused before anything is sent; without `inputs:`, a JSON payload pre-filled
 * from the workload.
 */
export function RunForm({ entry }: { entry: CatalogEntry }) {
  const [{ workload, inputs }] = useState(() => declared(entry.content));
  return inputs ? <InputsForm entry={entry} workload={workload} inputs={inputs} /> : <JsonForm entry={entry} workload={workload} />;
}

/**
 * Starts the entry with `payload`, under the form's idempotency `key`: a double click or Enter
 * pressed twice sent two starts, and two executions ran; the second is now answered as the first.
 */
async function start(entry: CatalogEntry, payload: Record<string, unknown>, key: string): Promise<void> {
  const body = entry.kind === 'agent' ? { path: entry.path, resource_kind: 'agent', workload: payload } : { path: entry.path, version: entry.version, payload };
  const out = await api<{ execution_id: number }>(entry.kind === 'agent' ? '/execute' : '/run/playbook', { body, headers: { 'idempotency-key': key } });
  navigate(href(['executions', out.execution_id]));
}

function InputsForm({ entry, workload, inputs }: { entry: CatalogEntry; workload: Record<string, unknown>; inputs: Inputs }) {
  const [texts, setTexts] = useState<Record<string, string>>(() => Object.fromEntries(Object.keys(inputs).map((name) => [name, textOf(workload[name])])));
  const [key, setKey] = useState(newIdempotencyKey);
  const [tried, setTried] = useState(false);
  const [error, setError] = useState<unknown>();
  // Each field's text read as its type, then the merged workload checked as the server checks it.
  const payload: Record<string, unknown> = {};
  const problems: InputProblem[] = [];
  for (const [name, input] of Object.entries(inputs)) {
    const text = texts[name] ?? '';
    if (text === '') continue;
    const parsed = parseInputText(input.type, text);
    if (parsed.ok) payload[name] = parsed.value;
    else problems.push({ path: `workload.${name}`, message: parsed.message });
  }
  // An emptied field is not sent: the server then takes the workload's value, as merged here.
  for (const p of checkInputs(inputs, { ...workload, ...payload })) if (!problems.some((q) => q.path === p.path)) problems.push(p);
  const problemOf = (name: string) => problems.find((p) => p.path === `workload.${name}`)?.message;
  const run = async (e: React.FormEvent) => {
    e.preventDefault();
    setTried(true);
    if (problems.length > 0) return;
    try {
      await start(entry, payload, key);
    } catch (err) {
      setError(err);
    }
  };
  return (
    <form className="run" onSubmit={run} noValidate>
      {Object.entries(inputs).map(([name, input]) => {
        const problem = tried || texts[name] !== '' ? problemOf(name) : undefined;
        return (
          <InputField key={name} name={name} input={input} text={texts[name] ?? ''} problem={problem} onChange={(text) => {
              setTexts({ ...texts, [name]: text });
              setKey(newIdempotencyKey());
            }} />
        );
      })}
      {tried && problems.length > 0 ? (
        <p className="error" role="alert">
          Not sent: {problems.map((p) => `${p.path} ${p.message}`).join('; ')}
        </p>
      ) : null}
      <ErrorBox error={error} />
      <button type="submit">Run version {entry.version}</button>
    </form>
  );
}

function InputField({ name, input, text, problem, onChange }: { name: string; input: InputDeclaration; text: string; problem: string | undefined; onChange: (text: string) => void }) {
  const id = `input-${name}`;
  const help = input.description ? `${id}-help` : undefined;
  const common = { id, 'aria-invalid': problem ? true : undefined, 'aria-describedby': help, 'aria-required': input.required ? true : undefined };
  let control;
  if (input.enum || input.type === 'boolean') {
    const options = input.enum ? input.enum.map(textOf) : ['true', 'false'];
    control = (
      <select {...common} value={text} onChange={(e) => onChange(e.target.value)}>
        <option value="">(not set)</option>
        {options.map((o) => (
          <option key={o} value={o}>
            {o}
          </option>
        ))}
      </select>
    );
  } else if (input.type === 'object' || input.type === 'array') {
    control = <textarea {...common} rows={3} value={text} spellCheck={false} placeholder={input.type === 'array' ? '[ ]' : '{ }'} onChange={(e) => onChange(e.target.value)} />;
  } else {
    const inputMode = input.type === 'integer' ? 'numeric' : input.type === 'number' ? 'decimal' : undefined;
    control = <input {...common} type="text" inputMode={inputMode} value={text} onChange={(e) => onChange(e.target.value)} />;
  }
  return (
    <div className="run-field">
      <label htmlFor={id}>
        {name}
        {input.required ? <span aria-label="required"> *</span> : null} <span className="muted">({input.type})</span>
      </label>
      {control}
      {input.description ? <small id={help} className="muted">{input.description}</small> : null}
      {problem ? <span className="error">{problem}</span> : null}
    </div>
  );
}

/** Without `inputs:`: a JSON object merged into the workload, checked before it is sent. */
function JsonForm({ entry, workload }: { entry: CatalogEntry; workload: Record<string, unknown> }) {
  const [payload, setPayload] = useState(() => JSON.stringify(workload, null, 2));
  const [key, setKey] = useState(newIdempotencyKey);
  const [error, setError] = useState<unknown>();
  let problem: string | null = null;
  let parsed: unknown;
  try {
    parsed = JSON.parse(payload || '{}');
    if (!isObject(parsed)) problem = 'the payload must be a JSON object';
  } catch (e) {
    problem = e instanceof Error ? e.message : String(e);
  }
  const run = async (e: React.FormEvent) => {
    e.preventDefault();
    if (problem || !isObject(parsed)) return;
    try {
      await start(entry, parsed, key);
    } catch (err) {
      setError(err);
    }
  };
  return (
    <form className="run" onSubmit={run}>
      <label>
        Payload (JSON, merged into the workload)
        <textarea rows={4} value={payload} onChange={(e) => {
            setPayload(e.target.value);
            setKey(newIdempotencyKey());
          }} aria-invalid={problem ? true : undefined} spellCheck={false} />
      </label>
      {problem ? <p className="error">{problem}</p> : null}
      <ErrorBox error={error} />
      <button type="submit" disabled={problem !== null}>
        Run version {entry.version}
      </button>
    </form>
  );
}
