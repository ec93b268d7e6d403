import { Inject, Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import { promises as fs } from 'node:fs';
import { dirname, join } from 'node:path';
import { formatEvent } from '../common/log-format';
import { APP_CONFIG, type AppConfig } from '../config/app-config';
import { BackupError } from './backup.errors';
import { BACKUP_WORK_DIR, backupLocations } from './backup-sources';
import { backupWorkDir, type BackupSummary, writeBackup } from './backup-writer';
import { appVersion } from './data-format';

export interface WrittenBackup {
  /** the archive, inside a private work folder of the data directory */
  file: string;
  summary: BackupSummary;
  /** removes the archive and its work folder (after the download) */
  discard(): Promise<void>;
}

/**
 * Backups for the console (openspec backup): one at a time, written into `<data dir>/.backup-tmp/` and removed once
 * downloaded; leftovers of an interrupted one are removed at start.
 */
@Injectable()
export class BackupService implements OnModuleInit {
  private readonly logger = new Logger('Backup');
  private running = false;

  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {}

  async onModuleInit(): Promise<void> {
    await fs.rm(join(this.config.dataDir, BACKUP_WORK_DIR), { recursive: true, force: true });
  }

  async create(includeSecrets: boolean): Promise<WrittenBackup> {
    if (this.running) throw new BackupError('backup_running', 'A backup is already being written; try again when it is done');
    this.running = true;
    const work = await backupWorkDir(this.config.dataDir);
    const discard = async () => {
      await fs.rm(work, { recursive: true, force: true });
      await fs.rmdir(dirname(work)).catch(() => undefined);
    };
    try {
      const started = performance.now();
      const file = join(work, 'cashcode-backup.zip');
      const summary = await writeBackup(backupLocations(this.config), {
        target: file,
        includeSecrets,
        appVersion: appVersion(this.config.rootDir),
      });
      this.logger.log(
        formatEvent('backup.written', {
          files: summary.files,
          bytes: summary.bytes,
          archive_bytes: summary.archiveBytes,
          secrets: summary.secrets,
          duration_ms: Math.round(performance.now() - started),
        }),
      );
      return { file, summary, discard };
    } catch (error) {
      await discard();
      this.logger.error(formatEvent('backup.failed', { error: (error as Error).message }));
      throw new BackupError('backup_failed', `The backup could not be written: ${(error as Error).message}`);
    } finally {
      this.running = false;
    }
  }
}
