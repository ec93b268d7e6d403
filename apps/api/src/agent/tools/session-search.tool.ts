/**
 * `session_search` (CashCode addition): recall across sessions. BM25 over the user and assistant messages of every
 * chat (memory/session-index.ts, kept current as turns are appended); returns the best snippets with chat id, title,
 * cursor and date as JSON.
 */
import type { AgentTool, JsonSchemaObject, ToolContext, ToolResult } from '../agent-tool';
import { SESSION_SEARCH_MAX_RESULTS, SessionIndex } from '../../memory/session-index';
import { optionalInteger, requireString } from './tool-args';

export const SESSION_SEARCH_DEFAULT_RESULTS = 5;
export const SESSION_SEARCH_EMPTY_QUERY = 'Error: query is empty; give a few keywords to search for.';

export class SessionSearchTool implements AgentTool {
  readonly name = 'session_search';
  readonly description =
    'Search the messages of all past conversations (every chat, including ones summarised away) by keywords. ' +
    'Use it when the user refers to something discussed before that is not in the current context. Returns the ' +
    'best matching messages with chat id, chat title, cursor, date and a snippet.';
  readonly parameters: JsonSchemaObject = {
    type: 'object',
    properties: {
      query: { type: 'string', description: 'Keywords to look for (any language)' },
      limit: {
        type: 'integer',
        description: `How many results to return (1-${SESSION_SEARCH_MAX_RESULTS}, default ${SESSION_SEARCH_DEFAULT_RESULTS})`,
        minimum: 1,
        maximum: SESSION_SEARCH_MAX_RESULTS,
      },
    },
    required: ['query'],
  };
  readonly readOnly = true;

  constructor(private readonly index: SessionIndex) {}

  async execute(args: Record<string, unknown>, ctx: ToolContext): Promise<ToolResult | string> {
    const query = requireString(args, 'query').trim();
    const limit = optionalInteger(args, 'limit', SESSION_SEARCH_DEFAULT_RESULTS, 1, SESSION_SEARCH_MAX_RESULTS);
    if (query === '') return { model: SESSION_SEARCH_EMPTY_QUERY, ok: false };
    ctx.signal.throwIfAborted();
    // the model's recall: never someone else's words (or what followed untrusted content) as the owner's
    const hits = await this.index.search(query, limit, { ownerWordsOnly: true });
    const results = hits.map((hit) => ({
      chat_id: hit.chatId,
      title: hit.title,
      cursor: hit.cursor,
      date: hit.date,
      role: hit.role,
      current_chat: hit.chatId === ctx.chatId,
      snippet: hit.snippet,
    }));
    return {
      model: JSON.stringify({ query, results }),
      public: results.length === 0 ? 'No matching messages found.' : `Found ${results.length} matching messages.`,
    };
  }
}
