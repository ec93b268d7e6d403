/**
 * Backups over REST (openspec backup): `POST /api/backup` with this body answers the archive itself
 * (`application/zip`, `Content-Disposition: attachment; filename="cashcode-backup-<time>.zip"`), plus a few headers
 * that describe it. `npm run backup` writes the same archive from the command line.
 */
export interface BackupRequest {
  /**
   * include the secrets (the LLM API keys, the API token, MCP credentials and headers); default false: the archive
   * then holds the settings without them
   */
  include_secrets?: boolean;
}

/** Response headers of `POST /api/backup` (additive). */
export const BACKUP_HEADERS = {
  /** files in the archive */
  files: 'X-CashCode-Backup-Files',
  /** `true` when the archive includes secrets */
  secrets: 'X-CashCode-Backup-Secrets',
} as const;
