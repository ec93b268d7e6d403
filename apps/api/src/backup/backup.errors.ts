import { HttpStatus } from '@nestjs/common';
import { DomainError, type DomainProblem } from '../common/domain-error';

export type BackupErrorCode =
  /** another backup is being written; one at a time */
  | 'backup_running'
  /** the snapshot or the archive could not be written (disk full, a file unreadable); nothing was left behind */
  | 'backup_failed';

const PROBLEMS: Record<BackupErrorCode, DomainProblem> = {
  backup_running: { status: HttpStatus.CONFLICT },
  backup_failed: { status: HttpStatus.SERVICE_UNAVAILABLE },
};

/** Coded domain error of the backup REST API, rendered as problem+json by the global filter. */
export class BackupError extends DomainError<BackupErrorCode> {
  constructor(code: BackupErrorCode, message: string) {
    super(code, message, PROBLEMS[code]);
  }
}
