import { getCatalogById, type CatalogRow } from '../src/db/catalog.repo.ts';
import type { Queryable } from '../src/db/queryable.ts';
import type { NormalizedPlaybook } from '../src/dsl/parse-playbook.ts';
import { createExecutionMachine, type ExecutionMachine } from '../machines/execution.machine.ts';

export type CompiledPlaybook = { catalogId: number; path: string; kind: string; playbook: NormalizedPlaybook; machine: ExecutionMachine };

// Catalog versions are immutable, so a compiled machine per catalog_id never goes stale.
const MAX_ENTRIES = 500;

/** catalog_id → the playbook and its compiled execution machine, loaded once. */
export class PlaybookCache {
  #entries = new Map<number, CompiledPlaybook>();

  /** Compiles a catalog row (its payload is the playbook normalized and validated at registration). */
  compile(row: Pick<CatalogRow, 'catalog_id' | 'path' | 'kind' | 'payload'>): CompiledPlaybook {
    let hit = this.#entries.get(row.catalog_id);
    if (hit) return hit;
    const playbook = row.payload as NormalizedPlaybook;
    hit = { catalogId: row.catalog_id, path: row.path, kind: row.kind, playbook, machine: createExecutionMachine(playbook) };
    if (this.#entries.size >= MAX_ENTRIES) this.#entries.delete(this.#entries.keys().next().value!);
    this.#entries.set(row.catalog_id, hit);
    return hit;
  }

  async get(q: Queryable, catalogId: number): Promise<CompiledPlaybook> {
    const hit = this.#entries.get(catalogId);
    if (hit) return hit;
    const row = await getCatalogById(q, catalogId);
    if (!row) throw new Error(`catalog entry ${catalogId} not found`);
    return this.compile(row);
  }
}
