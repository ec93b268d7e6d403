import { API_PATHS } from '@cashcode/contracts';
import { Body, Controller, Delete, Get, HttpCode, HttpStatus, Param, Patch } from '@nestjs/common';
import { ApiNoContentResponse, ApiOkResponse, ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import { ApiProblemResponses } from '../common/problem-details';
import { ChatIdPipe } from './chat-id.pipe';
import { RenameSessionDto } from './dto/rename-session.dto';
import {
  RenameSessionResponseDto,
  SessionListResponseDto,
  SessionMessagesResponseDto,
} from './dto/session-responses.dto';
import { SessionsService } from './sessions.service';

const CHAT_ID_PARAM = {
  name: 'chat_id',
  description: 'chat id: 1–64 characters from A–Z, a–z, 0–9, `_`, `:` and `-`',
  schema: { type: 'string', pattern: '^[A-Za-z0-9_:-]{1,64}$' },
} as const;

/** Sessions REST (openspec sessions). */
@ApiTags('sessions')
@Controller(API_PATHS.sessions)
export class SessionsController {
  constructor(private readonly sessions: SessionsService) {}

  @Get()
  @ApiOperation({ summary: 'List chat sessions, most recently updated first' })
  @ApiOkResponse({ type: SessionListResponseDto })
  list(): Promise<SessionListResponseDto> {
    return this.sessions.list();
  }

  @Get(':chat_id/messages')
  @ApiOperation({ summary: "A session's user and assistant messages (tool activity and summaries are not returned)" })
  @ApiParam(CHAT_ID_PARAM)
  @ApiOkResponse({ type: SessionMessagesResponseDto })
  @ApiProblemResponses(400, 404)
  messages(@Param('chat_id', ChatIdPipe) chatId: string): Promise<SessionMessagesResponseDto> {
    return this.sessions.messages(chatId);
  }

  @Patch(':chat_id')
  @ApiOperation({ summary: 'Rename a session' })
  @ApiParam(CHAT_ID_PARAM)
  @ApiOkResponse({ type: RenameSessionResponseDto })
  @ApiProblemResponses(400, 404, 422)
  rename(
    @Param('chat_id', ChatIdPipe) chatId: string,
    @Body() body: RenameSessionDto,
  ): Promise<RenameSessionResponseDto> {
    return this.sessions.rename(chatId, body.title);
  }

  @Delete(':chat_id')
  @HttpCode(HttpStatus.NO_CONTENT)
  @ApiOperation({ summary: 'Delete a session: its history and metadata, and any running turn of it' })
  @ApiParam(CHAT_ID_PARAM)
  @ApiNoContentResponse({ description: 'Deleted' })
  @ApiProblemResponses(400, 404)
  remove(@Param('chat_id', ChatIdPipe) chatId: string): Promise<void> {
    return this.sessions.remove(chatId);
  }
}
