/**
 * ArtifactStore: large tool results kept whole in the chat's `artifacts/<id>.txt` (0600, atomic), so that the model
 * gets a bounded preview and can page through the rest with read_artifact (agent/tool-output-budget.ts). Writes run
 * on the chat's lane (chat-file-lanes.ts) and never create a chat: a stateless caller has no directory to write into.
 */
import { Inject, Injectable } from '@nestjs/common';
import { isErrorCode } from '@cashcode/contracts';
import { existsSync, promises as fs } from 'node:fs';
import { join } from 'node:path';
import { writeFileAtomic } from '../common/atomic-file';
import { mkdirPrivate } from '../common/private-fs';
import { APP_CONFIG, type AppConfig } from '../config/app-config';
import { assertChatId, ChatFiles } from './chat-files';
import { ChatFileLanes } from './chat-file-lanes';

/** an artifact id: what a tool call id may safely become as a file name */
export const ARTIFACT_ID_PATTERN = /^[A-Za-z0-9_-]{1,80}$/;

@Injectable()
export class ArtifactStore {
  private readonly files: ChatFiles;

  constructor(
    @Inject(APP_CONFIG) config: Pick<AppConfig, 'memoryDir'>,
    private readonly lanes: ChatFileLanes,
  ) {
    this.files = new ChatFiles(config.memoryDir);
  }

  /**
   * Keeps a large tool result whole. Only for an existing chat directory of a chat not deleted meanwhile: returns
   * false (nothing written) otherwise, and for an id that is not a safe file name.
   */
  async saveArtifact(chatId: string, id: string, text: string): Promise<boolean> {
    assertChatId(chatId);
    if (!ARTIFACT_ID_PATTERN.test(id)) return false;
    return this.lanes.run(chatId, async () => {
      if (this.lanes.isDeleted(chatId) || !(await this.files.isChatDirectory(chatId))) return false;
      const dir = this.files.artifactsDir(chatId);
      await mkdirPrivate(dir);
      await writeFileAtomic(join(dir, `${id}.txt`), text);
      return true;
    });
  }

  /** Whether the chat has kept an artifact (read_artifact is offered from then on). */
  hasArtifacts(chatId: string): boolean {
    assertChatId(chatId);
    return existsSync(this.files.artifactsDir(chatId));
  }

  /** The text of an artifact of the chat, or null when there is none by that id. */
  async readArtifact(chatId: string, id: string): Promise<string | null> {
    assertChatId(chatId);
    if (!ARTIFACT_ID_PATTERN.test(id)) return null;
    try {
      return await fs.readFile(join(this.files.artifactsDir(chatId), `${id}.txt`), 'utf8');
    } catch (error) {
      if (isErrorCode(error, 'ENOENT', 'ENOTDIR', 'EISDIR')) return null;
      throw error;
    }
  }
}
