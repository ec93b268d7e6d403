import { promises as fs } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inTransaction, openSqlite } from './sqlite';

describe('openSqlite', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await fs.mkdtemp(join(tmpdir(), 'cc-sqlite-'));
  });
  afterEach(async () => {
    await fs.rm(dir, { recursive: true, force: true });
  });

  it('creates an owner-only WAL database whose commits a second connection sees', async () => {
    const file = join(dir, 'nested', 'store.sqlite');
    const db = openSqlite(file);
    db.exec('CREATE TABLE t (x TEXT)');
    inTransaction(db, () => db.prepare('INSERT INTO t VALUES (?)').run('kept'));
    expect((db.prepare('PRAGMA journal_mode').get() as { journal_mode: string }).journal_mode).toBe('wal');
    if (process.platform !== 'win32') {
      expect((await fs.stat(file)).mode & 0o777).toBe(0o600);
      expect((await fs.stat(join(dir, 'nested'))).mode & 0o777).toBe(0o700);
    }
    const other = openSqlite(file);
    expect(other.prepare('SELECT x FROM t').all()).toEqual([{ x: 'kept' }]);
    other.close();
    db.close();
  });

  it('rolls a failed transaction back and leaves nothing of it', () => {
    const db = openSqlite(':memory:');
    db.exec('CREATE TABLE t (x TEXT NOT NULL)');
    expect(() =>
      inTransaction(db, () => {
        db.prepare('INSERT INTO t VALUES (?)').run('first');
        db.prepare('INSERT INTO t VALUES (?)').run(null);
      }),
    ).toThrow();
    expect(db.prepare('SELECT count(*) AS n FROM t').get()).toEqual({ n: 0 });
    expect(db.isTransaction).toBe(false);
    db.close();
  });

  it('has full-text search (FTS5)', () => {
    const db = openSqlite(':memory:');
    db.exec('CREATE VIRTUAL TABLE docs USING fts5(body)');
    db.prepare('INSERT INTO docs VALUES (?)').run('the quick brown fox');
    expect(db.prepare('SELECT body FROM docs WHERE docs MATCH ?').all('quick')).toEqual([{ body: 'the quick brown fox' }]);
    db.close();
  });
});
