import pg from 'pg';
import { Db } from '../src/db/db.ts';
import { migrate } from '../src/db/migrate.ts';
const admin = 'postgres://postgres@127.0.0.1:5432/postgres';
const c = new pg.Client({ connectionString: admin }); await c.connect();
for (let i = 0; i < 3; i++) {
  const name = `svc_tmig_${i}_${Date.now()}`;
  let t = performance.now();
  await c.query(`CREATE DATABASE ${name}`);
  const created = performance.now() - t;
  const db = new Db(`postgres://postgres@127.0.0.1:5432/${name}`, 10);
  t = performance.now();
  await migrate(db);
  const mig = performance.now() - t;
  await db.close();
  t = performance.now();
  await c.query(`CREATE DATABASE ${name}_copy TEMPLATE ${name}`);
  const copy = performance.now() - t;
  console.log({ created, mig, copy });
  await c.query(`DROP DATABASE ${name}_copy`); await c.query(`DROP DATABASE ${name}`);
}
await c.end();
