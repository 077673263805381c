import pg from 'pg';

// The types whose default parsers change the value (docs/playbook-dsl.md, "Values of SQL
// results"): a bigint past 2^53 rounded, a bytea as a Buffer, a date or timestamp as a
// midnight (or wall-clock time) in the Node process's time zone. Arrays by their pg_type.typarray.
const INT8 = pg.types.builtins.INT8;
const NUMERIC = pg.types.builtins.NUMERIC;
const BYTEA = pg.types.builtins.BYTEA;
const DATE = pg.types.builtins.DATE;
const TIMESTAMP = pg.types.builtins.TIMESTAMP;
const TEXT_ARRAY_OID: number = 1009;
const ARRAYS_OF = new Map<number, number>([
  [1016, INT8],
  [1231, NUMERIC],
  [1001, BYTEA],
  [1182, DATE],
  [1115, TIMESTAMP],
]);

// The session settings the parsers rely on: PostgreSQL's text of a date or timestamp in ISO form
// (YYYY-MM-DD…) and of a bytea in hex (\x…), whatever the database or role sets by default.
/** Those settings for a connection's startup packet (`options`). */
export const POSTGRES_VALUE_OPTIONS = '-c DateStyle=ISO -c bytea_output=hex';
/** Those settings for a transaction already open. */
export const POSTGRES_VALUE_SET_LOCAL = 'SET LOCAL DateStyle = ISO; SET LOCAL bytea_output = hex';

/**
 * A JSON number only where it reads back as the very value PostgreSQL printed: a whole number
 * within ±(2^53 − 1), or a fraction whose shortest print has the same digits (trailing zeros of
 * its scale aside); else PostgreSQL's own text. NaN and ±Infinity (numeric) stay text too.
 */
function exactNumber(text: string): number | string {
  const n = Number(text);
  if (!Number.isFinite(n) || (Number.isInteger(n) && !Number.isSafeInteger(n))) return text;
  const digits = text.includes('.') ? text.replace(/\.?0+$/, '') : text;
  return String(n) === digits ? n : text;
}

// bytea, date and timestamp keep PostgreSQL's text as it is.
const sameText = (text: string): string => text;

const PARSERS = new Map<number, (text: string) => unknown>([
  [INT8, exactNumber],
  [NUMERIC, exactNumber],
  [BYTEA, sameText],
  [DATE, sameText],
  [TIMESTAMP, sameText],
]);

// Any array's text splits as a text[]'s does (the elements unquoted, NULL as null); each
// element then goes through its type's parser.
const splitArray = (text: string): unknown => pg.types.getTypeParser(TEXT_ARRAY_OID)(text);

function mapElements(value: unknown, parse: (text: string) => unknown): unknown {
  if (Array.isArray(value)) return value.map((element: unknown) => mapElements(element, parse));
  return typeof value === 'string' ? parse(value) : value;
}

/**
 * Parsers of a statement's result values for the clients that run users' SQL (POST
 * /api/postgres/execute, postgres tasks), per client: the service's own pool keeps the global
 * ones of src/db/db.ts. Every other type is pg's default (timestamptz a Date, json parsed, …).
 */
export const postgresValueTypes: pg.CustomTypesConfig = {
  getTypeParser(oid: number, format?: 'text' | 'binary') {
    if (format === 'binary') return pg.types.getTypeParser(oid, format);
    const own = PARSERS.get(oid);
    if (own) return own;
    const element = ARRAYS_OF.get(oid);
    const parse = element === undefined ? undefined : PARSERS.get(element);
    if (parse) return (text: string) => mapElements(splitArray(text), parse);
    return pg.types.getTypeParser(oid, format);
  },
};
