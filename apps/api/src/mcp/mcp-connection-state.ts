/**
 * The servers the user left connected (openspec mcp "Requirement: Connections that last"): `<data>/mcp/connections.json`
 * (`{"connected": ["name", …]}`, 0600, written atomically). A server joins the list when it connects and leaves it when
 * the user disconnects, edits or deletes it; a shutdown or a lost connection keeps it, so the next start reconnects it
 * in the background.
 */
import { isErrorCode, isRecord } from '@cashcode/contracts';
import { promises as fs } from 'node:fs';
import { dirname } from 'node:path';
import { writeFileAtomic } from '../common/atomic-file';
import { mkdirPrivate } from '../common/private-fs';
import { SerialQueue } from '../common/keyed-queue';

export class McpConnectionState {
  private names = new Set<string>();
  /** one writer of the file at a time */
  private readonly lane = new SerialQueue();

  constructor(private readonly file: string) {}

  /** Reads the file; a missing or unreadable file means none (never fatal: it only decides background reconnects). */
  async load(): Promise<string[]> {
    try {
      const value: unknown = JSON.parse(await fs.readFile(this.file, 'utf8'));
      const list = isRecord(value) && Array.isArray(value['connected']) ? value['connected'] : [];
      this.names = new Set(list.filter((name): name is string => typeof name === 'string'));
    } catch (error) {
      if (!isErrorCode(error, 'ENOENT')) this.names = new Set();
    }
    return [...this.names].sort();
  }

  has(name: string): boolean {
    return this.names.has(name);
  }

  /**
   * Records a server as connected or not. The file only decides background reconnects, so a failed write is not an
   * error for the caller: the promise resolves either way.
   */
  set(name: string, connected: boolean): Promise<void> {
    if (this.names.has(name) === connected) return this.lane.settled();
    if (connected) this.names.add(name);
    else this.names.delete(name);
    const snapshot = [...this.names].sort();
    return this.lane
      .run(async () => {
        await mkdirPrivate(dirname(this.file));
        await writeFileAtomic(this.file, `${JSON.stringify({ connected: snapshot }, null, 2)}\n`);
      })
      .catch(() => undefined);
  }

  flush(): Promise<void> {
    return this.lane.settled();
  }
}
