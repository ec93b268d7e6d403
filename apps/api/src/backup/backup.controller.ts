import { API_PATHS, BACKUP_HEADERS } from '@cashcode/contracts';
import { Body, Controller, HttpCode, Post, Res, StreamableFile } from '@nestjs/common';
import { ApiBody, ApiOkResponse, ApiOperation, ApiProduces, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import { createReadStream } from 'node:fs';
import { ApiProblemResponses } from '../common/problem-details';
import { BackupService } from './backup.service';
import { BackupRequestDto } from './dto/backup-request.dto';

/** `cashcode-backup-20260102-030405.zip` (UTC) */
export function backupFileName(at: Date): string {
  const iso = at.toISOString();
  return `cashcode-backup-${iso.slice(0, 10).replace(/-/g, '')}-${iso.slice(11, 19).replace(/:/g, '')}.zip`;
}

/** `POST /api/backup`: the archive of everything the server owns (openspec backup). */
@ApiTags('backup')
@Controller(API_PATHS.backup)
export class BackupController {
  constructor(private readonly backups: BackupService) {}

  @Post()
  @HttpCode(200)
  @ApiOperation({
    summary: 'Download a backup archive',
    description:
      'A consistent snapshot taken while the server runs: chats, memory and Dream snapshots, Skills, the MCP catalog and ' +
      'cached schemas, approvals, the usage ledger and the settings (secrets only with `include_secrets`). One ZIP with ' +
      '`manifest.json` (versions, sizes and SHA-256 of every file); `npm run restore -- <file>` restores it.',
  })
  @ApiBody({ type: BackupRequestDto, required: false })
  @ApiProduces('application/zip')
  @ApiOkResponse({ description: 'the archive', content: { 'application/zip': { schema: { type: 'string', format: 'binary' } } } })
  @ApiProblemResponses(409, 422, 503)
  async create(@Body() body: BackupRequestDto, @Res({ passthrough: true }) res: Response): Promise<StreamableFile> {
    const written = await this.backups.create(body.include_secrets === true);
    res.setHeader(BACKUP_HEADERS.files, String(written.summary.files));
    res.setHeader(BACKUP_HEADERS.secrets, String(written.summary.secrets));
    res.setHeader('Cache-Control', 'no-store');
    res.setHeader('Access-Control-Expose-Headers', `${BACKUP_HEADERS.files}, ${BACKUP_HEADERS.secrets}, Content-Disposition`);
    const stream = createReadStream(written.file);
    stream.once('close', () => void written.discard());
    return new StreamableFile(stream, {
      type: 'application/zip',
      disposition: `attachment; filename="${backupFileName(new Date(written.summary.manifest.created_at))}"`,
      length: written.summary.archiveBytes,
    });
  }
}
