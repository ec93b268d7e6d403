import { API_PATHS } from '@cashcode/contracts';
import { Body, Controller, Delete, Get, HttpCode, HttpStatus, Param, Post, Put, Query, Res } from '@nestjs/common';
import type { Response } from 'express';
import { ApiBody, ApiCreatedResponse, ApiNoContentResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type {
  McpImportResponse,
  McpOAuthStartResponse,
  McpServerListResponse,
  McpServerRecord,
  McpServerResourcesResponse,
  McpServerToolsResponse,
} from '@cashcode/contracts';
import { ApiProblemResponses } from '../common/problem-details';
import { CreateMcpServerDto, ImportMcpServersDto, UpdateMcpServerDto } from './dto/mcp-server-body.dto';
import {
  McpImportResponseDto,
  McpServerListResponseDto,
  McpServerRecordDto,
  McpServerResourcesResponseDto,
  McpServerToolsResponseDto,
} from './dto/mcp-server-response.dto';
import { McpServers } from './mcp-servers';
import { McpSignIn } from './mcp-sign-in';

/** `/api/mcp/servers` — the MCP marketplace: list, create, replace, delete, connect, disconnect, tools. */
@ApiTags('mcp')
@Controller(API_PATHS.mcpServers)
export class McpController {
  constructor(
    private readonly mcp: McpServers,
    private readonly signIn: McpSignIn,
  ) {}

  @Get()
  @ApiOperation({ summary: 'List MCP servers', description: 'Built-in and user servers merged, sorted by name.' })
  @ApiOkResponse({ type: McpServerListResponseDto })
  list(): McpServerListResponse {
    return { servers: this.mcp.list() };
  }

  @Post()
  @ApiOperation({
    summary: 'Add a user MCP server',
    description:
      'Validates and stores the entry without connecting it: `sse`, `streamable_http` (also spelled `http`) or ' +
      '`stdio` (`command`, `args`, `env`, `cwd`: runs a program on this machine when connected). `display_name` ' +
      'defaults to the name.',
  })
  @ApiBody({ type: CreateMcpServerDto })
  @ApiCreatedResponse({ type: McpServerRecordDto })
  @ApiProblemResponses(409, 422)
  create(@Body() body: CreateMcpServerDto): Promise<McpServerRecord> {
    return this.mcp.create({ ...body });
  }

  @Post('import')
  @HttpCode(HttpStatus.OK)
  @ApiOperation({
    summary: 'Import MCP servers from a client configuration',
    description:
      'Accepts Claude Desktop / Claude Code JSON (`{"mcpServers": {…}}`, `type` `stdio`/`sse`/`http`) or VS Code ' +
      'JSON (`{"servers": {…}}`) in `config` and creates a user entry per server. Each server is reported as ' +
      'created or skipped with its reason: `conflict` (the name exists), `unsupported_type`, `invalid` (the detail ' +
      'names the field and rule) or `input_placeholder` (a VS Code `${input:…}` value, which only VS Code can ' +
      'prompt for). 422 on `config` when it has neither key.',
  })
  @ApiBody({ type: ImportMcpServersDto })
  @ApiOkResponse({ type: McpImportResponseDto })
  @ApiProblemResponses(422)
  import(@Body() body: ImportMcpServersDto): Promise<McpImportResponse> {
    return this.mcp.import(body.config);
  }

  @Put(':name')
  @ApiOperation({
    summary: 'Replace a user MCP server',
    description:
      'Replaces the whole entry (`********` keeps a stored header value while the URL stays on the same origin; a ' +
      'moved URL needs the value again, 422 on `headers.<name>`; a stdio `env` value likewise only while command ' +
      'and args are unchanged, else 422 on `env.<NAME>`); disconnects it, purges its activated ' +
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

  @Post(':name/oauth/start')
  @HttpCode(HttpStatus.OK)
  @ApiOperation({
    summary: 'Start an OAuth sign-in',
    description:
      'Drops stored tokens, discovers the authorization server, registers the client if needed and returns the ' +
      '`authorization_url` to open; the browser comes back to the OAuth callback, which connects the server.',
  })
  @ApiProblemResponses(400, 404, 422)
  oauthStart(@Param('name') name: string): Promise<McpOAuthStartResponse> {
    return this.signIn.start(name);
  }

  @Post(':name/oauth/sign-out')
  @HttpCode(HttpStatus.OK)
  @ApiOperation({ summary: 'Sign out of an OAuth server', description: 'Disconnects and deletes the stored tokens.' })
  @ApiOkResponse({ type: McpServerRecordDto })
  @ApiProblemResponses(404)
  oauthSignOut(@Param('name') name: string): Promise<McpServerRecord> {
    return this.signIn.signOut(name);
  }
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/**
 * `GET /api/mcp/oauth/callback` — where the authorization server sends the browser back. It needs no API token (a
 * browser redirect cannot carry it) and is bound by the single-use, short-lived `state` of a sign-in started with the
 * token (SECURITY.md). Answers a small self-contained page: success tells the user to return to the console.
 */
@ApiTags('mcp')
@Controller(API_PATHS.mcpOAuthCallback)
export class McpOAuthCallbackController {
  constructor(private readonly signIn: McpSignIn) {}

  @Get()
  @ApiOperation({ summary: 'OAuth callback', description: 'Browser redirect target; bound by `state`, no token.' })
  async callback(@Query() query: Record<string, unknown>, @Res() res: Response): Promise<void> {
    const outcome = await this.signIn.callback(query);
    const title = outcome.ok ? 'Signed in' : 'Sign-in failed';
    const text = outcome.ok
      ? `Signed in to ${outcome.server}. You can close this tab and return to the CashCode console.`
      : outcome.message;
    res
      .status(outcome.ok ? 200 : 400)
      .set({ 'Cache-Control': 'no-store', 'Content-Security-Policy': "default-src 'none'", 'Referrer-Policy': 'no-referrer' })
      .type('html')
      .send(
        `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${title}</title></head>` +
          `<body><h1>${title}</h1><p id="message">${escapeHtml(text)}</p><p><a href="/">Return to the console</a></p></body></html>`,
      );
  }
}
