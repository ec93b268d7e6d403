import { API_PATHS } from '@cashcode/contracts';
import { Body, Controller, Delete, Get, HttpCode, HttpStatus, Param, Post, Put } from '@nestjs/common';
import { ApiBody, ApiCreatedResponse, ApiNoContentResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type {
  McpServerListResponse,
  McpServerRecord,
  McpServerResourcesResponse,
  McpServerToolsResponse,
} from '@cashcode/contracts';
import { ApiProblemResponses } from '../common/problem-details';
import { CreateMcpServerDto, UpdateMcpServerDto } from './dto/mcp-server-body.dto';
import {
  McpServerListResponseDto,
  McpServerRecordDto,
  McpServerResourcesResponseDto,
  McpServerToolsResponseDto,
} from './dto/mcp-server-response.dto';
import { McpService } from './mcp.service';

/** `/api/mcp/servers` — the MCP marketplace: list, create, replace, delete, connect, disconnect, tools. */
@ApiTags('mcp')
@Controller(API_PATHS.mcpServers)
export class McpController {
  constructor(private readonly mcp: McpService) {}

  @Get()
  @ApiOperation({ summary: 'List MCP servers', description: 'Built-in and user servers merged, sorted by name.' })
  @ApiOkResponse({ type: McpServerListResponseDto })
  list(): McpServerListResponse {
    return { servers: this.mcp.list() };
  }

  @Post()
  @ApiOperation({
    summary: 'Add a user MCP server',
    description: 'Validates and stores the entry (SSE or Streamable HTTP) without connecting it.',
  })
  @ApiBody({ type: CreateMcpServerDto })
  @ApiCreatedResponse({ type: McpServerRecordDto })
  @ApiProblemResponses(409, 422)
  create(@Body() body: CreateMcpServerDto): Promise<McpServerRecord> {
    return this.mcp.create({ ...body });
  }

  @Put(':name')
  @ApiOperation({
    summary: 'Replace a user MCP server',
    description:
      'Replaces the whole entry (`********` keeps a stored header value while the URL stays on the same origin; a ' +
      'moved URL needs the value again, 422 on `headers.<name>`); disconnects it, purges its activated ' +
      'tools from every chat and deletes its schema cache.',
  })
  @ApiBody({ type: UpdateMcpServerDto })
  @ApiOkResponse({ type: McpServerRecordDto })
  @ApiProblemResponses(403, 404, 422)
  update(@Param('name') name: string, @Body() body: UpdateMcpServerDto): Promise<McpServerRecord> {
    return this.mcp.update(name, { ...body });
  }

  @Delete(':name')
  @HttpCode(HttpStatus.NO_CONTENT)
  @ApiOperation({ summary: 'Delete a user MCP server', description: 'Disconnects and cleans up, then removes it.' })
  @ApiNoContentResponse()
  @ApiProblemResponses(403, 404)
  async delete(@Param('name') name: string): Promise<void> {
    await this.mcp.delete(name);
  }

  @Post(':name/connect')
  @HttpCode(HttpStatus.OK)
  @ApiOperation({
    summary: 'Connect an MCP server',
    description: 'Always 200 with the resulting status: `connected` with its tool count, or `error` with a redacted message.',
  })
  @ApiOkResponse({ type: McpServerRecordDto })
  @ApiProblemResponses(404)
  connect(@Param('name') name: string): Promise<McpServerRecord> {
    return this.mcp.connect(name);
  }

  @Post(':name/disconnect')
  @HttpCode(HttpStatus.OK)
  @ApiOperation({ summary: 'Disconnect an MCP server', description: 'Also purges its tools from every chat.' })
  @ApiOkResponse({ type: McpServerRecordDto })
  @ApiProblemResponses(404)
  disconnect(@Param('name') name: string): Promise<McpServerRecord> {
    return this.mcp.disconnect(name);
  }

  @Get(':name/tools')
  @ApiOperation({
    summary: "List an MCP server's tools",
    description: 'Live tools when connected (callable), else cached tools of the same transport, else none.',
  })
  @ApiOkResponse({ type: McpServerToolsResponseDto })
  @ApiProblemResponses(404)
  tools(@Param('name') name: string): Promise<McpServerToolsResponse> {
    return this.mcp.tools(name);
  }

  @Get(':name/resources')
  @ApiOperation({
    summary: "List a connected MCP server's resources",
    description: 'The first pages of resources/list (at most 500 entries); empty when not connected or when the server offers none.',
  })
  @ApiOkResponse({ type: McpServerResourcesResponseDto })
  @ApiProblemResponses(400, 404)
  resources(@Param('name') name: string): Promise<McpServerResourcesResponse> {
    return this.mcp.resources(name);
  }
}
