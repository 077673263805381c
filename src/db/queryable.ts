import type pg from 'pg';

/** Anything that runs parameterised SQL: the pool or a client inside a transaction. */
export type Queryable = {
  query<R extends pg.QueryResultRow = pg.QueryResultRow>(text: string | pg.QueryConfig, params?: unknown[]): Promise<pg.QueryResult<R>>;
};
