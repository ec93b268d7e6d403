import { Module } from '@nestjs/common';
import { BackupController } from './backup.controller';
import { BackupService } from './backup.service';

/**
 * Backups (openspec backup): `POST /api/backup` for the console. It reads the data, memory, attachments and settings
 * directories directly (a snapshot of files, never through the stores) and imports no feature module; the command
 * line (`npm run backup`, `npm run restore`, backup-cli.ts) uses the same functions without Nest. The data format
 * check and migrations (data-format.ts, migrations.ts) run in bootstrap.ts before any module starts.
 */
@Module({
  controllers: [BackupController],
  providers: [BackupService],
})
export class BackupModule {}
