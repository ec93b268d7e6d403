/**
 * `/v1`: the OpenAI-compatible endpoint (openspec openai-compat). The edge (openai-compat-edge.ts) has already
 * checked the switch and the bearer key. Every answer is in the OpenAI format, errors included.
 */
import { Controller, Get, Headers, HttpStatus, Logger, Param, Post, Req, Res, UseFilters } from '@nestjs/common';
import { ApiBearerAuth, ApiBody, ApiHeader, ApiOperation, ApiParam, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { AgentCancelledError } from '../agent/agent-runner';
import { formatEvent } from '../common/log-format';
import { ChunkWriter, completionObject, newCompletionIdentity, SSE_DONE, sseData } from './completion-chunks';
import { parseCompletionRequest } from './completion-request';
import { OpenAiCompatModels } from './openai-compat-models';
import { OpenAiCompatService, type TurnResult } from './openai-compat.service';
import { OpenAiCompatSettingsService } from './openai-compat-settings.service';
import { OpenAiError, OpenAiExceptionFilter, toOpenAiError } from '../common/openai-error';

export const CHAT_ID_HEADER = 'x-cashcode-chat-id';

const ERROR_SCHEMA = {
  type: 'object',
  properties: {
    error: {
      type: 'object',
      properties: {
        message: { type: 'string' },
        type: { type: 'string', example: 'invalid_request_error' },
        param: { type: 'string', nullable: true },
        code: { type: 'string', nullable: true, example: 'model_not_found' },
      },
    },
  },
};

function errorResponse(status: number, description: string): MethodDecorator {
  return ApiResponse({ status, description, content: { 'application/json': { schema: ERROR_SCHEMA } } });
}

function modelObject(id: string, created: number): Record<string, unknown> {
  return { id, object: 'model', created, owned_by: 'cashcode' };
}

@ApiTags('openai-compat')
@ApiBearerAuth()
@Controller('v1')
@UseFilters(OpenAiExceptionFilter)
export class OpenAiCompatController {
  private readonly logger = new Logger('OpenAiCompat');

  constructor(
    private readonly service: OpenAiCompatService,
    private readonly models: OpenAiCompatModels,
    private readonly settings: OpenAiCompatSettingsService,
  ) {}

  @Get('models')
  @ApiOperation({
    summary: 'List the models (OpenAI format)',
    description:
      '`cashcode` (the default chat model) and `cashcode:<provider>/<model>` for every discovered model, as an OpenAI ' +
      'model list. Needs `Authorization: Bearer <key>` (a key from the settings, or the API token); 404 ' +
      '`endpoint_disabled` while the endpoint is off. Errors are `{"error": {"message", "type", "param", "code"}}`.',
  })
  @ApiResponse({
    status: 200,
    description: 'The model list',
    content: {
      'application/json': {
        schema: { example: { object: 'list', data: [{ id: 'cashcode', object: 'model', created: 1767225600, owned_by: 'cashcode' }] } },
      },
    },
  })
  @errorResponse(401, 'Missing or wrong bearer key (`authentication_error`)')
  @errorResponse(404, 'The endpoint is off (`endpoint_disabled`)')
  async listModels(): Promise<Record<string, unknown>> {
    const models = await this.models.listModels();
    return { object: 'list', data: models.map((model) => modelObject(model.id, model.created)) };
  }

  @Get('models/:model')
  @ApiOperation({ summary: 'Retrieve a model (OpenAI format)', description: '404 `model_not_found` for an unknown id.' })
  @ApiParam({ name: 'model', example: 'cashcode' })
  @errorResponse(404, 'Unknown model (`model_not_found`) or the endpoint is off')
  async retrieveModel(@Param('model') model: string): Promise<Record<string, unknown>> {
    await this.models.resolveModel(model);
    return modelObject(model, Math.floor(Date.now() / 1000));
  }

  @Post('chat/completions')
  @ApiOperation({
    summary: 'Run the agent on a conversation (OpenAI chat completions)',
    description:
      'The CashCode agent (its memory, tools, MCP servers and Skills) answers the conversation; tools run on the ' +
      'server and the client gets the final answer as assistant content, the model\'s reasoning (if any) as ' +
      '`reasoning_content` (never inside `content`). `stream: true` answers Server-Sent Events ' +
      '(`chat.completion.chunk` objects, then `data: [DONE]`; a last usage chunk with `stream_options.include_usage`). ' +
      'Stateless by default; with `X-CashCode-Chat-Id` the last user message becomes a turn of that CashCode chat. ' +
      'Tools whose policy is `ask` are denied (no one can approve). `n` must be 1; unknown fields are ignored; ' +
      '`temperature` and `max_tokens` / `max_completion_tokens` reach the model on stateless requests.',
  })
  @ApiHeader({ name: 'X-CashCode-Chat-Id', required: false, description: 'run the turn in this CashCode chat (1–64 of A-Z a-z 0-9 _ : -)' })
  @ApiBody({
    schema: {
      type: 'object',
      required: ['model', 'messages'],
      properties: {
        model: { type: 'string', example: 'cashcode' },
        messages: {
          type: 'array',
          items: {
            type: 'object',
            properties: {
              role: { type: 'string', enum: ['system', 'developer', 'user', 'assistant', 'tool'] },
              content: { oneOf: [{ type: 'string' }, { type: 'array', items: { type: 'object' } }], nullable: true },
            },
          },
          example: [{ role: 'user', content: 'Hello' }],
        },
        stream: { type: 'boolean' },
        stream_options: { type: 'object', properties: { include_usage: { type: 'boolean' } } },
        n: { type: 'integer', enum: [1] },
        temperature: { type: 'number' },
        max_tokens: { type: 'integer' },
        max_completion_tokens: { type: 'integer' },
        user: { type: 'string' },
      },
    },
  })
  @ApiResponse({ status: 200, description: 'A `chat.completion` object, or an SSE stream of `chat.completion.chunk` objects' })
  @errorResponse(400, 'Invalid request (`invalid_request_error`, with the offending `param`)')
  @errorResponse(401, 'Missing or wrong bearer key')
  @errorResponse(404, 'Unknown model (`model_not_found`) or the endpoint is off (`endpoint_disabled`)')
  @errorResponse(413, 'Body too large')
  @errorResponse(429, 'Too many requests at once, or the chat is busy (`Retry-After`)')
  @errorResponse(502, 'The model provider failed (`upstream_error`); 504 on a provider timeout')
  @errorResponse(503, 'No model provider is configured (`llm_not_configured`)')
  async chatCompletions(
    @Req() req: Request,
    @Res() res: Response,
    @Headers(CHAT_ID_HEADER) chatHeader: string | undefined,
  ): Promise<void> {
    const parsed = parseCompletionRequest(req.body as unknown);
    if (!parsed.ok) throw parsed.error;
    const request = parsed.request;
    const conversation = this.service.conversation(request, chatHeader);
    const selection = await this.models.resolveModel(request.model);
    const identity = newCompletionIdentity(request.model);

    const abort = new AbortController();
    const onClose = () => {
      if (!res.writableFinished) abort.abort();
    };
    res.on('close', onClose);

    if (!request.stream) {
      const answer = (result: TurnResult) => {
        if (res.headersSent) return;
        res
          .status(HttpStatus.OK)
          .setHeader('Cache-Control', 'no-store')
          .json(completionObject(identity, result.content, result.usage, result.reasoning));
      };
      try {
        answer(await this.service.run(request, selection, conversation, { delta: () => undefined, done: answer }, abort.signal));
      } catch (err) {
        if (err instanceof AgentCancelledError) return;
        throw err;
      } finally {
        res.off('close', onClose);
      }
      return;
    }

    const writer = new ChunkWriter(identity, request.includeUsage);
    let started = false;
    /** the status and headers go out with the first chunk (the role), in one write with what follows it */
    const begin = (): string => {
      if (started) return '';
      started = true;
      res.status(HttpStatus.OK);
      res.setHeader('Content-Type', 'text/event-stream; charset=utf-8');
      res.setHeader('Cache-Control', 'no-cache, no-store');
      res.setHeader('Connection', 'keep-alive');
      res.setHeader('X-Accel-Buffering', 'no');
      return sseData(writer.role());
    };
    // the text of one tick (one network read of the model stream can hold many deltas) leaves as one chunk per kind
    // (reasoning, answer) in the order they came, written on process.nextTick: one write instead of one per delta,
    // with no delay a client could see
    const pending: Array<{ reasoning: boolean; text: string }> = [];
    const flush = () => {
      const pieces = pending.splice(0);
      if (pieces.length === 0 || abort.signal.aborted || res.writableEnded) return;
      let out = begin();
      for (const piece of pieces) out += sseData(piece.reasoning ? writer.reasoning(piece.text) : writer.content(piece.text));
      res.write(out);
    };
    const queue = (reasoning: boolean, text: string) => {
      if (abort.signal.aborted || text === '') return;
      if (pending.length === 0) process.nextTick(flush);
      const last = pending.at(-1);
      if (last && last.reasoning === reasoning) last.text += text;
      else pending.push({ reasoning, text });
    };
    const write = (text: string) => queue(false, text);
    const toolProgress = this.settings.toolProgress;
    const finish = (result: TurnResult) => {
      flush();
      if (res.writableEnded) return;
      let tail = begin() + sseData(writer.finish());
      if (request.includeUsage) tail += sseData(writer.usage(result.usage));
      res.end(tail + SSE_DONE);
    };
    try {
      finish(
        await this.service.run(
          request,
          selection,
          conversation,
          { delta: write, reasoning: (text) => queue(true, text), done: finish, ...(toolProgress ? { toolCall: (name: string) => write(`[tool: ${name}]\n`) } : {}) },
          abort.signal,
        ),
      );
    } catch (err) {
      if (err instanceof AgentCancelledError || abort.signal.aborted) {
        if (!res.writableEnded) res.end();
        return;
      }
      flush();
      if (!started) throw err;
      // the stream has begun: the error is its last event (as OpenAI does), without [DONE]
      const error = toOpenAiError(err);
      if (!(err instanceof OpenAiError)) {
        this.logger.error(formatEvent('openai.stream.failed', { error_type: err instanceof Error ? err.name : typeof err }));
      }
      res.end(sseData(error.body()));
    } finally {
      res.off('close', onClose);
    }
  }
}
