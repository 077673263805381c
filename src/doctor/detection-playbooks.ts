import { readFile } from 'node:fs/promises';
import { load } from 'js-yaml';
import * as v from 'valibot';
import { ServerError } from '../worker/server-client.ts';
import { CHECKS, type CheckName } from './detection-checks.ts';
import { DoctorFailure, type DoctorClient } from './doctor-client.ts';

// The detection playbooks ship with the project (playbooks/*.yaml) and reach a server through its
// catalog: registered when the server lacks them or holds other content, started by version.

const PLAYBOOK_DIR = new URL('./playbooks/', import.meta.url);

const document = v.looseObject({ metadata: v.looseObject({ path: v.string() }) });
const catalogEntry = v.looseObject({ content: v.string(), version: v.number() });
const registered = v.looseObject({ path: v.string(), version: v.number() });

type RegisteredPlaybook = { path: string; version: number };

/** Reads a shipped playbook and its catalog path. */
async function readPlaybook(name: CheckName): Promise<{ path: string; content: string }> {
  const content = await readFile(new URL(CHECKS[name].file, PLAYBOOK_DIR), 'utf8');
  const doc = v.parse(document, load(content));
  return { path: doc.metadata.path, content };
}

const encodePath = (path: string) => path.split('/').map(encodeURIComponent).join('/');

/**
 * Makes sure the server's newest version at the playbook's path is this content: registers it
 * only when it is missing or differs (a new version each time would fill the catalog).
 */
export async function ensureRegistered(client: DoctorClient, name: CheckName): Promise<RegisteredPlaybook> {
  const { path, content } = await readPlaybook(name);
  try {
    const newest = await client.request('GET', `/api/catalog/playbook/${encodePath(path)}`, catalogEntry);
    if (newest.content === content) return { path, version: newest.version };
  } catch (err) {
    if (!(err instanceof ServerError && err.status === 404)) throw err;
  }
  try {
    const row = await client.request('POST', '/api/catalog/playbook', registered, { content });
    return { path: row.path, version: row.version };
  } catch (err) {
    // A server that refuses our playbook (an older DSL without `read_only`) cannot run detection.
    if (err instanceof ServerError && (err.status === 400 || err.status === 422)) {
      throw new DoctorFailure('bad_answer', `the server refused the detection playbook ${path}: ${err.message}`, [
        'the server may be older than this doctor: run the doctor of the same version as the server',
      ]);
    }
    throw err;
  }
}
