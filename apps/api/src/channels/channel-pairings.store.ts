/**
 * Who may talk to the agent through a channel (openspec channels "Requirement: Pairing"): pending pairing requests,
 * each with a short code the unknown sender was given, and the approved senders. A sender paired from a private chat
 * (`kind: 'user'`) is the owner; an approved group (`kind: 'group'`) lets its members talk as untrusted senders. One
 * file per channel, `<dataDir>/channels/<kind>/pairings.json` (0600, written atomically).
 */
import { randomInt } from 'node:crypto';
import type { TelegramApprovedSender, TelegramChatType, TelegramPairingRequest } from '@cashcode/contracts';
import { isRecord } from '@cashcode/contracts';
import { localIsoWithOffset } from '../common/local-iso-time';
import { JsonStateFile } from './json-state-file';

/** how long a pairing code stays valid */
export const PAIRING_TTL_MS = 60 * 60 * 1000;
/** pending requests kept at once; past it the oldest is dropped */
export const MAX_PENDING_PAIRINGS = 20;
/** letters and digits that cannot be mistaken for each other */
const CODE_ALPHABET = 'ABCDEFGHJKLMNPQRSTUVWXYZ23456789';
export const PAIRING_CODE_LENGTH = 8;

interface StoredPending extends TelegramPairingRequest {
  expires_ms: number;
}

interface PairingsState {
  version: 1;
  pending: StoredPending[];
  senders: TelegramApprovedSender[];
}

function parse(raw: unknown): PairingsState {
  if (!isRecord(raw) || !Array.isArray(raw['pending']) || !Array.isArray(raw['senders'])) throw new Error('not a pairings file');
  return {
    version: 1,
    pending: (raw['pending'] as unknown[]).filter(isRecord) as unknown as StoredPending[],
    senders: (raw['senders'] as unknown[]).filter(isRecord) as unknown as TelegramApprovedSender[],
  };
}

function newCode(): string {
  let code = '';
  for (let i = 0; i < PAIRING_CODE_LENGTH; i++) code += CODE_ALPHABET[randomInt(CODE_ALPHABET.length)];
  return code;
}

export interface PairingApplicant {
  senderId: string;
  displayName: string;
  username: string | null;
  chatType: TelegramChatType;
}

export class ChannelPairingsStore {
  private readonly file: JsonStateFile<PairingsState>;

  constructor(
    path: string,
    private readonly now: () => number = Date.now,
  ) {
    this.file = new JsonStateFile(path, () => ({ version: 1, pending: [], senders: [] }), parse);
  }

  async list(): Promise<{ pending: TelegramPairingRequest[]; senders: TelegramApprovedSender[] }> {
    const state = await this.file.read();
    const now = this.now();
    return {
      pending: state.pending.filter((entry) => entry.expires_ms > now).map(({ expires_ms: _ms, ...entry }) => ({ ...entry })),
      senders: state.senders.map((sender) => ({ ...sender })),
    };
  }

  /** The approved sender (owner account or group) with this id, or null. */
  async approved(senderId: string): Promise<TelegramApprovedSender | null> {
    const state = await this.file.read();
    const found = state.senders.find((sender) => sender.sender_id === senderId);
    return found ? { ...found } : null;
  }

  /** Whether the id is an owner account (paired from a private chat). */
  async isOwner(senderId: string): Promise<boolean> {
    return (await this.approved(senderId))?.kind === 'user';
  }

  /**
   * The pairing code of an unknown sender: the one it already has while valid (so repeated messages do not fill the
   * list), else a new one. Returns `fresh: false` when the code was given before.
   */
  async request(applicant: PairingApplicant): Promise<{ code: string; fresh: boolean }> {
    const now = this.now();
    const state = await this.file.read();
    const existing = state.pending.find((entry) => entry.sender_id === applicant.senderId && entry.expires_ms > now);
    if (existing) return { code: existing.code, fresh: false };
    return this.file.update((draft) => {
      draft.pending = draft.pending.filter((entry) => entry.expires_ms > now && entry.sender_id !== applicant.senderId);
      let code = newCode();
      while (draft.pending.some((entry) => entry.code === code)) code = newCode();
      draft.pending.push({
        code,
        sender_id: applicant.senderId,
        display_name: applicant.displayName,
        username: applicant.username,
        chat_type: applicant.chatType,
        requested_at: localIsoWithOffset(new Date(now)),
        expires_at: localIsoWithOffset(new Date(now + PAIRING_TTL_MS)),
        expires_ms: now + PAIRING_TTL_MS,
      });
      while (draft.pending.length > MAX_PENDING_PAIRINGS) draft.pending.shift();
      return { code, fresh: true };
    });
  }

  /** Approves a valid code: its sender becomes an approved sender. Null for an unknown or expired code. */
  approve(code: string): Promise<TelegramApprovedSender | null> {
    const now = this.now();
    const wanted = code.trim().toUpperCase();
    return this.file.update((draft) => {
      const entry = draft.pending.find((pending) => pending.code === wanted && pending.expires_ms > now);
      if (!entry) return null;
      draft.pending = draft.pending.filter((pending) => pending !== entry);
      const sender: TelegramApprovedSender = {
        sender_id: entry.sender_id,
        display_name: entry.display_name,
        username: entry.username,
        approved_at: localIsoWithOffset(new Date(now)),
        kind: entry.chat_type === 'private' ? 'user' : 'group',
      };
      draft.senders = [...draft.senders.filter((known) => known.sender_id !== sender.sender_id), sender];
      return { ...sender };
    });
  }

  /** Removes an approved sender; false when there is none with this id. */
  async revoke(senderId: string): Promise<boolean> {
    if (!(await this.approved(senderId))) return false;
    return this.file.update((draft) => {
      const before = draft.senders.length;
      draft.senders = draft.senders.filter((sender) => sender.sender_id !== senderId);
      return draft.senders.length !== before;
    });
  }
}
