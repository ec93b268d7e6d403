/**
 * The approval audit log: `<data>/approvals/audit.jsonl`, one JSON object per decision (who, what, when, the
 * redacted command or argument preview), appended in decision order, mode 0600. Appends are serialised and each one is
 * on disk (fsync) before the decision takes effect. The listing reads the file newest first, paged; unreadable lines
 * are skipped.
 */
import { promises as fs } from 'node:fs';
import { dirname, join } from 'node:path';
import { Inject, Injectable } from '@nestjs/common';
import { isErrorCode, type ApprovalAuditEntry, type ApprovalAuditResponse } from '@cashcode/contracts';
import { APP_CONFIG, type AppConfig } from '../config/app-config';
import { mkdirPrivate, openPrivate, PRIVATE_FILE_MODE } from '../common/private-fs';
import { SerialQueue } from '../common/keyed-queue';

export const AUDIT_DEFAULT_LIMIT = 50;
export const AUDIT_MAX_LIMIT = 500;

function isEntry(value: unknown): value is ApprovalAuditEntry {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const record = value as Record<string, unknown>;
  return ['at', 'chat_id', 'call_id', 'tool', 'risk', 'decision', 'by', 'preview'].every((key) => typeof record[key] === 'string');
}

@Injectable()
export class ApprovalAuditLog {
  readonly path: string;
  /** one appender at a time */
  private readonly appends = new SerialQueue();

  constructor(@Inject(APP_CONFIG) config: AppConfig) {
    this.path = join(config.dataDir, 'approvals', 'audit.jsonl');
  }

  /** Appends one entry; resolves once it is on disk. */
  append(entry: ApprovalAuditEntry): Promise<void> {
    return this.appends.run(async () => {
      await mkdirPrivate(dirname(this.path));
      const handle = await openPrivate(this.path, 'a');
      try {
        // the mode of an existing file written by an older version or another umask is made exact
        await handle.chmod(PRIVATE_FILE_MODE);
        await handle.appendFile(`${JSON.stringify(entry)}\n`, 'utf8');
        await handle.sync();
      } finally {
        await handle.close();
      }
    });
  }

  /** Newest first. */
  async list(offset: number, limit: number): Promise<ApprovalAuditResponse> {
    await this.appends;
    let text = '';
    try {
      text = await fs.readFile(this.path, 'utf8');
    } catch (error) {
      if (!isErrorCode(error, 'ENOENT')) throw error;
    }
    const entries: ApprovalAuditEntry[] = [];
    for (const line of text.split('\n')) {
      if (line.trim() === '') continue;
      try {
        const parsed: unknown = JSON.parse(line);
        if (isEntry(parsed)) entries.push(parsed);
      } catch {
        // a torn last line of a crash: skipped
      }
    }
    entries.reverse();
    return { entries: entries.slice(offset, offset + limit), total: entries.length, offset, limit };
  }
}
