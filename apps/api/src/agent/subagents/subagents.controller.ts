/**
 * `GET /api/sessions/{chat_id}/subagents/{call_id}` (openspec subagents "Requirement: Transcript"): the whole
 * transcript of the sub-agent a `delegate` call of the chat started, as stored when it ended. 404 `not_found` when
 * the chat has none by that call id.
 */
import { API_PATHS, type SubagentTranscript } from '@cashcode/contracts';
import { Controller, Get, HttpStatus, Param } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import { DomainError } from '../../common/domain-error';
import { ApiProblemResponses } from '../../common/problem-details';
import { ArtifactStore } from '../../memory/artifact.store';
import { ChatIdPipe } from '../../memory/chat-id.pipe';
import { parseTranscript, transcriptArtifactId } from './subagent-transcript';

/** a call id that can name a stored transcript */
const CALL_ID_PATTERN = /^[A-Za-z0-9_-]{1,71}$/;

export class SubagentNotFoundError extends DomainError<'not_found'> {
  constructor() {
    super('not_found', 'This chat has no sub-agent transcript for that call.', { status: HttpStatus.NOT_FOUND });
  }
}

@ApiTags('sessions')
@Controller(API_PATHS.sessions)
export class SubagentsController {
  constructor(private readonly artifacts: ArtifactStore) {}

  @Get(':chat_id/subagents/:call_id')
  @ApiOperation({ summary: "A sub-agent's whole transcript (the child of a delegate call of the chat)" })
  @ApiParam({ name: 'chat_id', description: 'the chat' })
  @ApiParam({ name: 'call_id', description: 'the call id of the delegate call' })
  @ApiOkResponse({ description: 'the transcript: task, tools, outcome, messages, usage' })
  @ApiProblemResponses(400, 404)
  async transcript(@Param('chat_id', ChatIdPipe) chatId: string, @Param('call_id') callId: string): Promise<SubagentTranscript> {
    if (!CALL_ID_PATTERN.test(callId)) throw new SubagentNotFoundError();
    const text = await this.artifacts.readArtifact(chatId, transcriptArtifactId(callId));
    const transcript = text === null ? null : parseTranscript(text);
    if (transcript === null) throw new SubagentNotFoundError();
    return transcript;
  }
}
