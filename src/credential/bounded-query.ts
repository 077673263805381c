import pg from 'pg';

/**
 * Runs `query` as client.query does (its result, or an array of them for several statements),
 * and calls `over` once when the rows' JSON comes to more than `maxBytes`: the caller stops the
 * statement (a cancel, or the connection ended), so rows stop coming and what was read is bounded.
 * Rows are counted on pg's public Query `row` event.
 */
export function boundedQuery(client: pg.Client, query: pg.QueryConfig, maxBytes: number, over: () => void): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const q = new pg.Query(query, (err, result) => (err ? reject(err) : resolve(result)));
    let bytes = 0;
    q.on('row', (row: unknown) => {
      if (bytes > maxBytes) return;
      bytes += jsonLength(row);
      if (bytes > maxBytes) over();
    });
    client.query(q);
  });
}

/** The length of a row's JSON; 0 for one JSON cannot print (a row listener must not throw inside pg's parser). */
function jsonLength(row: unknown): number {
  try {
    return JSON.stringify(row)?.length ?? 0;
  } catch {
    return 0;
  }
}
