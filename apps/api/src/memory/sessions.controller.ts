import { API_PATHS } from '@cashcode/contracts';
import { Body, Controller, Delete, Get, HttpCode, HttpStatus, Param, Patch, Query, Res } from '@nestjs/common';
import type { Response } from 'express';
import { ApiNoContentResponse, ApiOkResponse, ApiOperation, ApiParam, ApiProduces, ApiTags } from '@nestjs/swagger';
import { ApiProblemResponses } from '../common/problem-details';
import { ChatIdPipe } from './chat-id.pipe';
import { ExportSessionQueryDto } from './dto/export-session-query.dto';
import { SearchSessionsQueryDto } from './dto/search-sessions-query.dto';
import { RenameSessionDto } from './dto/rename-session.dto';
import {
  RenameSessionResponseDto,
  SessionExportJsonDto,
  SessionListResponseDto,
  SessionSearchResponseDto,
  SessionMessagesResponseDto,
} from './dto/session-responses.dto';
import { exportContentDisposition } from './session-export';
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

  @Get('search')
  @ApiOperation({ summary: 'Search chats by title and by the text of their user and assistant messages' })
  @ApiOkResponse({ type: SessionSearchResponseDto })
  @ApiProblemResponses(422)
  search(@Query() query: SearchSessionsQueryDto): Promise<SessionSearchResponseDto> {
    return this.sessions.search(query.q, query.limit ?? 20);
  }

  @Get(':chat_id/messages')
  @ApiOperation({ summary: "A session's user and assistant messages (tool activity and summaries are not returned)" })
  @ApiParam(CHAT_ID_PARAM)
  @ApiOkResponse({ type: SessionMessagesResponseDto })
  @ApiProblemResponses(400, 404)
  messages(@Param('chat_id', ChatIdPipe) chatId: string): Promise<SessionMessagesResponseDto> {
    return this.sessions.messages(chatId);
  }

  @Get(':chat_id/export')
  @ApiOperation({
    summary: 'Export a session as Markdown (default) or JSON, as a download; the messages are those of /messages',
  })
  @ApiParam(CHAT_ID_PARAM)
  @ApiProduces('text/markdown', 'application/json')
  @ApiOkResponse({ type: SessionExportJsonDto, description: 'format=json; format=markdown answers text/markdown' })
  @ApiProblemResponses(400, 404, 422)
  async export(
    @Param('chat_id', ChatIdPipe) chatId: string,
    @Query() query: ExportSessionQueryDto,
    @Res({ passthrough: true }) res: Response,
  ): Promise<string | SessionExportJsonDto> {
    const exported = await this.sessions.export(chatId, query.format ?? 'markdown');
    if (exported.format === 'json') {
      res.setHeader('Content-Disposition', exportContentDisposition(chatId, 'json'));
      return exported.body;
    }
    res.setHeader('Content-Type', 'text/markdown; charset=utf-8');
    res.setHeader('Content-Disposition', exportContentDisposition(chatId, 'md'));
    return exported.body;
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
