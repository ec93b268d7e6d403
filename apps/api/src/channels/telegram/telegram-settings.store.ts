/**
 * The Telegram channel's settings: `<config dir>/settings/telegram.json` (directory 0700, file 0600, written
 * atomically), beside the LLM settings and the other secrets. The bot token is stored with the origin of the Bot API
 * server it was entered for (common/secret-binding.ts): when CASHCODE_TELEGRAM_API_ROOT later names another origin,
 * the stored token is not sent there; the owner enters it again.
 */
import { join } from 'node:path';
import { isRecord, type ChannelModelSelection } from '@cashcode/contracts';
import { JsonStateFile } from '../json-state-file';

export interface StoredTelegramSettings {
  version: 1;
  enabled: boolean;
  groups_enabled: boolean;
  /** '' when none */
  token: string;
  /** the Bot API origin the token was entered for ('' without a token) */
  token_origin: string;
  model: ChannelModelSelection | null;
}

/** Bot API tokens look like `123456789:AAH…` (the bot's id, a colon, a secret). */
export const TELEGRAM_TOKEN_PATTERN = /^\d{1,20}:[A-Za-z0-9_-]{30,120}$/;

function empty(): StoredTelegramSettings {
  return { version: 1, enabled: false, groups_enabled: false, token: '', token_origin: '', model: null };
}

function parse(raw: unknown): StoredTelegramSettings {
  if (!isRecord(raw)) throw new Error('not a settings file');
  const token = typeof raw['token'] === 'string' && TELEGRAM_TOKEN_PATTERN.test(raw['token']) ? raw['token'] : '';
  const model = isRecord(raw['model']) && typeof raw['model']['provider'] === 'string' && typeof raw['model']['model'] === 'string'
    ? { provider: raw['model']['provider'], model: raw['model']['model'] }
    : null;
  return {
    version: 1,
    enabled: raw['enabled'] === true,
    groups_enabled: raw['groups_enabled'] === true,
    token,
    token_origin: token !== '' && typeof raw['token_origin'] === 'string' ? raw['token_origin'] : '',
    model,
  };
}

export class TelegramSettingsStore {
  readonly file: JsonStateFile<StoredTelegramSettings>;

  constructor(configDir: string) {
    this.file = new JsonStateFile(join(configDir, 'settings', 'telegram.json'), empty, parse);
  }

  read(): Promise<StoredTelegramSettings> {
    return this.file.read();
  }

  update(change: (draft: StoredTelegramSettings) => void): Promise<StoredTelegramSettings> {
    return this.file.update((draft) => {
      change(draft);
      return structuredClone(draft);
    });
  }
}

/** The token's masked hint: an ellipsis and its last four characters. */
export function tokenHint(token: string): string | null {
  return token === '' ? null : `…${token.slice(-4)}`;
}
