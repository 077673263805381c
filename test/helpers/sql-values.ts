// A statement of the values pg's default parsers used to change (a bigint past 2^53 rounded, a
// bytea as a Buffer, a date as a midnight in the process's time zone…), and the row users' SQL
// gets back (docs/playbook-dsl.md, "Values of SQL results"): POST /api/postgres/execute and
// postgres tasks alike.
export const VALUES_QUERY = String.raw`SELECT 9007199254740993::bigint AS big, 42::bigint AS small, -9007199254740991::bigint AS min_safe,
  12345678901234567890.123456789::numeric AS wide, 10.50::numeric AS amount, 'NaN'::numeric AS nan,
  '\x00ff10'::bytea AS bytes, '2026-02-03'::date AS day, '2026-02-03 04:05:06.789'::timestamp AS wall_time,
  '2026-02-03 04:05:06.789+00'::timestamptz AS instant,
  ARRAY[9007199254740993, 7]::bigint[] AS bigs, ARRAY[1.5, 0.1000000000000000000001]::numeric[] AS nums,
  ARRAY['\x01'::bytea, NULL] AS byte_list, ARRAY['2026-02-03', NULL]::date[] AS days,
  ARRAY[['2026-02-03 04:05:06']]::timestamp[] AS wall_times`;
export const VALUES_ROW = {
  big: '9007199254740993',
  small: 42,
  min_safe: -9007199254740991,
  wide: '12345678901234567890.123456789',
  amount: 10.5,
  nan: 'NaN',
  bytes: '\\x00ff10',
  day: '2026-02-03',
  wall_time: '2026-02-03 04:05:06.789',
  instant: '2026-02-03T04:05:06.789Z',
  bigs: ['9007199254740993', 7],
  nums: [1.5, '0.1000000000000000000001'],
  byte_list: ['\\x01', null],
  days: ['2026-02-03', null],
  wall_times: [['2026-02-03 04:05:06']],
};
