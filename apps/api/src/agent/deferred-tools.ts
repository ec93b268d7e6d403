/**
 * Finding deferred tools (AgentTool.deferred) by words: `tool_search` matches its query with them, and the user's
 * message activates the ones it names (openspec agent-runner "Requirement: Deferred tool view"). A tool matches when
 * the text contains its name or one of its keywords as whole words, case-insensitively.
 */
import type { AgentTool } from './agent-tool';

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/gu, '\\$&');
}

function wholeWords(phrase: string): RegExp {
  const words = phrase.trim().split(/[\s_-]+/u).map(escapeRegExp).join('[\\s_-]+');
  return new RegExp(`(?<![\\p{L}\\p{N}_])${words}(?![\\p{L}\\p{N}_])`, 'iu');
}

const patterns = new WeakMap<AgentTool, RegExp[]>();

/** The deferred tools the text names (its name or a keyword), in the order given. */
export function deferredToolsNamedIn(tools: readonly AgentTool[], text: string): AgentTool[] {
  if (text.trim() === '') return [];
  return tools.filter((tool) => {
    if (!tool.deferred) return false;
    let own = patterns.get(tool);
    if (!own) {
      own = [tool.name, ...tool.deferred.keywords].map(wholeWords);
      patterns.set(tool, own);
    }
    return own.some((pattern) => pattern.test(text));
  });
}

/** The first sentence of a tool's description: what a search result shows of it. */
export function firstSentence(description: string): string {
  const end = description.search(/[.!?](\s|$)/u);
  return end === -1 ? description : description.slice(0, end + 1);
}
