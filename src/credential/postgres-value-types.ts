import pg from 'pg';
import { exactNumber, parseJsonExact } from '../exact-json.ts';

// The types whose default parsers change the value (docs/playbook-dsl.md, "Values of SQL
// results"): a bigint past 2^53 rounded, a bytea as a Buffer, a date or timestamp as a
// midnight (or wall-clock time) in the Node process's time zone, a timestamptz cut to the
// millisecond, NaN or an infinity as JSON's null, an interval as an object of parts, a json
// number past a double's digits rounded. Arrays by their pg_type.typarray.
const INT8 = pg.types.builtins.INT8;
const NUMERIC = pg.types.builtins.NUMERIC;
const FLOAT4 = pg.types.builtins.FLOAT4;
const FLOAT8 = pg.types.builtins.FLOAT8;
const BYTEA = pg.types.builtins.BYTEA;
const DATE = pg.types.builtins.DATE;
const TIMESTAMP = pg.types.builtins.TIMESTAMP;
const TIMESTAMPTZ = pg.types.builtins.TIMESTAMPTZ;
const INTERVAL = pg.types.builtins.INTERVAL;
const JSON_OID = pg.types.builtins.JSON;
const JSONB = pg.types.builtins.JSONB;
const TEXT_ARRAY_OID: number = 1009;
const ARRAYS_OF = new Map<number, number>([
  [1016, INT8],
  [1231, NUMERIC],
  [1021, FLOAT4],
  [1022, FLOAT8],
  [1001, BYTEA],
  [1182, DATE],
  [1115, TIMESTAMP],
  [1185, TIMESTAMPTZ],
  [1187, INTERVAL],
  [199, JSON_OID],
  [3807, JSONB],
]);

// The session settings the parsers rely on: PostgreSQL's text of a date or timestamp in ISO form
// (YYYY-MM-DD…) and of a bytea in hex (\x…), whatever the database or role sets by default.
/** Those settings for a connection's startup packet (`options`). */
export const POSTGRES_VALUE_OPTIONS = '-c DateStyle=ISO -c bytea_output=hex';
/** Those settings for a transaction already open. */
export const POSTGRES_VALUE_SET_LOCAL = 'SET LOCAL DateStyle = ISO; SET LOCAL bytea_output = hex';

/** A float as a JSON number; NaN, Infinity and -Infinity, which JSON has no number for, as PostgreSQL's text. */
function finiteNumber(text: string): number | string {
  const n = Number(text);
  return Number.isFinite(n) ? n : text;
}

// A timestamptz as an ISO-DateStyle session prints it: the session zone's offset, up to microseconds.
const TIMESTAMPTZ_TEXT = /^(\d{4,})-(\d\d)-(\d\d) (\d\d):(\d\d):(\d\d)(?:\.(\d{1,6}))?([+-])(\d\d)(?::(\d\d))?(?::(\d\d))?$/;
const FOUR_DIGIT_YEAR_ISO = /^\d{4}-/;

/**
 * The instant in ISO form in UTC, as `Date#toISOString` writes it (milliseconds always) with the
 * microseconds PostgreSQL holds when it has any; `infinity`, a year past 9999 (in UTC) or BC as PostgreSQL's text.
 */
function utcInstant(text: string): string {
  const m = TIMESTAMPTZ_TEXT.exec(text);
  if (!m) return text;
  const [, year, month, day, hours, minutes, seconds, fraction = '', sign, offsetHours, offsetMinutes = '0', offsetSeconds = '0'] = m;
  const offsetMs = (sign === '-' ? -1 : 1) * ((Number(offsetHours) * 60 + Number(offsetMinutes)) * 60 + Number(offsetSeconds)) * 1000;
  // setUTCFullYear, not Date.UTC: Date.UTC reads years 0-99 as 1900-1999.
  const local = new Date(0);
  local.setUTCFullYear(Number(year), Number(month) - 1, Number(day));
  local.setUTCHours(Number(hours), Number(minutes), Number(seconds));
  const iso = new Date(local.getTime() - offsetMs).toISOString();
  if (!FOUR_DIGIT_YEAR_ISO.test(iso)) return text;
  return `${iso.slice(0, 19)}.${fraction.padEnd(fraction.length > 3 ? 6 : 3, '0')}Z`;
}

// bytea, date, timestamp and interval keep PostgreSQL's text as it is.
const sameText = (text: string): string => text;

const PARSERS = new Map<number, (text: string) => unknown>([
  [INT8, exactNumber],
  [NUMERIC, exactNumber],
  [FLOAT4, finiteNumber],
  [FLOAT8, finiteNumber],
  [BYTEA, sameText],
  [DATE, sameText],
  [TIMESTAMP, sameText],
  [TIMESTAMPTZ, utcInstant],
  [INTERVAL, sameText],
  [JSON_OID, parseJsonExact],
  [JSONB, parseJsonExact],
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
 * ones of src/db/db.ts. Every other type is pg's default (booleans, integers, json parsed, …).
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
