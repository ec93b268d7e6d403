import { CHAT_ID_PATTERN } from '@cashcode/contracts';
import { Injectable, type PipeTransform } from '@nestjs/common';
import { MemoryError } from './memory.errors';

/**
 * Rejects a chat id path parameter outside `^[A-Za-z0-9_:-]{1,64}$` (it becomes a directory name) with 400 `invalid
 * chat_id`.
 */
@Injectable()
export class ChatIdPipe implements PipeTransform<unknown, string> {
  transform(value: unknown): string {
    if (typeof value !== 'string' || !CHAT_ID_PATTERN.test(value)) throw new MemoryError('invalid_chat_id');
    return value;
  }
}
