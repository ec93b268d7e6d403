import { API_PATHS } from '@cashcode/contracts';
import { Body, Controller, Get, HttpCode, HttpStatus, Param, Post, Put, Query } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import { ApiProblemResponses } from '../common/problem-details';
import { ListDreamsQueryDto } from './dto/list-dreams-query.dto';
import {
  ListProvenanceQueryDto,
  MemoryEntriesResponseDto,
  MemoryProvenanceRecordDto,
  MemoryProvenanceResponseDto,
  VerifyMemoryEntryDto,
} from './dto/memory-provenance.dto';
import { PROVENANCE_DEFAULT_LIMIT } from './memory-provenance';
import {
  DreamRunDto,
  DreamRunListResponseDto,
  DreamTriggerResponseDto,
  MemoryDocumentResponseDto,
  SoulDocumentResponseDto,
} from './dto/memory-responses.dto';
import { UpdateMemoryDocumentDto } from './dto/update-memory-document.dto';
import { MemoryService } from './memory.service';

const DEFAULT_DREAM_LIMIT = 50;

/**
 * Long-term memory REST: MEMORY.md, SOUL.md and Dream (a CashCode addition: the original Python server had no such API;
 * openspec memory "Requirement: Memory REST API").
 */
@ApiTags('memory')
@Controller(API_PATHS.memory)
export class MemoryController {
  constructor(private readonly memory: MemoryService) {}

  @Get()
  @ApiOperation({
    summary: 'Read MEMORY.md (global long-term memory) with its content hash',
    description: 'MEMORY.md is injected into every system prompt. Send `hash` back with PUT.',
  })
  @ApiOkResponse({ type: MemoryDocumentResponseDto })
  getMemory(): Promise<MemoryDocumentResponseDto> {
    return this.memory.getLongTermMemory();
  }

  @Put()
  @ApiOperation({
    summary: 'Replace MEMORY.md',
    description:
      'Atomic replace. `hash` must be the hash of the current file (from GET or the last PUT); 409 `memory_conflict` ' +
      'when it changed since (an agent save, a Dream run or another editor): reload and apply the edit again.',
  })
  @ApiOkResponse({ type: MemoryDocumentResponseDto })
  @ApiProblemResponses(409, 422)
  putMemory(@Body() body: UpdateMemoryDocumentDto): Promise<MemoryDocumentResponseDto> {
    return this.memory.updateLongTermMemory(body.content, body.hash);
  }

  @Get('provenance')
  @ApiOperation({
    summary: "Read MEMORY.md's provenance log, oldest first",
    description:
      'One record per entry added to MEMORY.md: what wrote it (save_memory, Dream, the console), who asked, the chat ' +
      'and turn, and the untrusted content (pages, search results, MCP tools and resources, Skill resources) that was ' +
      'in the model context. Unreadable lines are skipped and counted in `unreadable`.',
  })
  @ApiOkResponse({ type: MemoryProvenanceResponseDto })
  @ApiProblemResponses(422)
  listProvenance(@Query() query: ListProvenanceQueryDto): Promise<MemoryProvenanceResponseDto> {
    return this.memory.listProvenance(query.offset ?? 0, query.limit ?? PROVENANCE_DEFAULT_LIMIT);
  }

  @Get('entries')
  @ApiOperation({
    summary: "List MEMORY.md's entries with their source and trust, a page at a time",
    description:
      'Every non-blank line in file order with its latest provenance record and its trust: `verified` (the owner\'s ' +
      'mark), `untrusted` (written with untrusted content in context), `trusted` (written without) or `unknown` (no ' +
      'record: a line edited outside the server is never trusted). `counts` covers all entries.',
  })
  @ApiOkResponse({ type: MemoryEntriesResponseDto })
  @ApiProblemResponses(422)
  listEntries(@Query() query: ListProvenanceQueryDto): Promise<MemoryEntriesResponseDto> {
    return this.memory.listEntries(query.offset ?? 0, query.limit ?? PROVENANCE_DEFAULT_LIMIT);
  }

  @Post('provenance/verify')
  @HttpCode(HttpStatus.OK)
  @ApiOperation({
    summary: 'Mark a line of MEMORY.md as verified',
    description:
      'Appends the owner\'s verification to the provenance log and answers it. 404 `memory_entry_not_found` when ' +
      'MEMORY.md has no such line.',
  })
  @ApiOkResponse({ type: MemoryProvenanceRecordDto })
  @ApiProblemResponses(404, 422)
  verifyEntry(@Body() body: VerifyMemoryEntryDto): Promise<MemoryProvenanceRecordDto> {
    return this.memory.verifyEntry(body.entry);
  }

  @Get('soul')
  @ApiOperation({
    summary: 'Read SOUL.md (the persona) with its content hash',
    description: 'When SOUL.md is missing or blank, the built-in persona (`default_content`) is used.',
  })
  @ApiOkResponse({ type: SoulDocumentResponseDto })
  getSoul(): Promise<SoulDocumentResponseDto> {
    return this.memory.getSoul();
  }

  @Put('soul')
  @ApiOperation({
    summary: 'Replace SOUL.md',
    description: 'Same rules as PUT /api/memory (409 `soul_conflict`); an empty content restores the built-in persona.',
  })
  @ApiOkResponse({ type: SoulDocumentResponseDto })
  @ApiProblemResponses(409, 422)
  putSoul(@Body() body: UpdateMemoryDocumentDto): Promise<SoulDocumentResponseDto> {
    return this.memory.updateSoul(body.content, body.hash);
  }

  @Get('dreams')
  @ApiOperation({
    summary: 'List Dream runs, newest first, with their diffs',
    description: 'Every run is recorded: time, records read, model, outcome and the diff of MEMORY.md.',
  })
  @ApiOkResponse({ type: DreamRunListResponseDto })
  @ApiProblemResponses(422)
  listDreams(@Query() query: ListDreamsQueryDto): Promise<DreamRunListResponseDto> {
    return this.memory.listDreams(query.limit ?? DEFAULT_DREAM_LIMIT);
  }

  @Post('dreams/:id/revert')
  @HttpCode(HttpStatus.OK)
  @ApiOperation({
    summary: 'Restore MEMORY.md from the snapshot taken before a run',
    description:
      'The revert is itself recorded as a run (trigger `revert`, revertible). 404 for an unknown run; 409 when the ' +
      'run did not write MEMORY.md or its snapshot was pruned.',
  })
  @ApiParam({ name: 'id', description: 'run id `<epoch ms>-<8 hex>`', example: '1785052800000-9f86d081' })
  @ApiOkResponse({ type: DreamRunDto })
  @ApiProblemResponses(404, 409)
  revert(@Param('id') id: string): Promise<DreamRunDto> {
    return this.memory.revertDream(id);
  }

  @Post('dreams/:id/apply')
  @HttpCode(HttpStatus.OK)
  @ApiOperation({
    summary: 'Apply the proposal of a run held for review',
    description:
      'A run is `held` when its rewrite would drop or change entries the owner verified. Applying writes its proposal ' +
      '(a snapshot first; recorded as a revertible `apply` run). 404 for an unknown run; 409 `dream_run_not_held` for ' +
      'a run that holds no proposal, `dream_proposal_stale` when MEMORY.md changed since the run.',
  })
  @ApiParam({ name: 'id', description: 'run id `<epoch ms>-<8 hex>`', example: '1785052800000-9f86d081' })
  @ApiOkResponse({ type: DreamRunDto })
  @ApiProblemResponses(404, 409)
  apply(@Param('id') id: string): Promise<DreamRunDto> {
    return this.memory.applyDream(id);
  }

  @Post('dream')
  @HttpCode(HttpStatus.OK)
  @ApiOperation({
    summary: 'Run Dream now',
    description:
      'Distils the records added since the last run into MEMORY.md and answers when the run is over (up to two ' +
      'model calls). `ran: false` when there are no new records or no model to use. 409 `dream_running` while a run ' +
      '(scheduled or manual) is in progress.',
  })
  @ApiOkResponse({ type: DreamTriggerResponseDto })
  @ApiProblemResponses(409)
  runDream(): Promise<DreamTriggerResponseDto> {
    return this.memory.runDream();
  }
}
