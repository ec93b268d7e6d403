/**
 * The sub-agent settings (openspec subagents "Requirement: Limits"), validated at boot like the rest of AppConfig:
 * CASHCODE_SUBAGENT_MAX_DEPTH (default 1: a child cannot delegate; 0 turns `delegate` off), CASHCODE_SUBAGENT_CONCURRENCY
 * (children of one turn running at the same time, default 3; the others wait) and CASHCODE_SUBAGENT_MAX_ITERATIONS
 * (the most model calls with tools a child may make, default 8; a `max_iterations` above it is lowered to it) and
 * CASHCODE_SUBAGENT_MAX_TOKENS (the most tokens a child's model calls may use together, default 200,000; a
 * `max_tokens` above it is lowered to it).
 */
import { parseInteger } from './env-values';

export interface SubagentConfig {
  maxDepth: number;
  concurrency: number;
  maxIterations: number;
  /** total tokens (prompt and completion) of all of one child's model calls */
  maxTokens: number;
}

/** concurrent calls of one model message the tool executor runs at most (tool-executor.ts READ_ONLY_CONCURRENCY) */
const MAX_CONCURRENCY = 4;

export function loadSubagentConfig(env: NodeJS.ProcessEnv): SubagentConfig {
  return {
    maxDepth: parseInteger('CASHCODE_SUBAGENT_MAX_DEPTH', env['CASHCODE_SUBAGENT_MAX_DEPTH'], 1, 0, 3),
    concurrency: parseInteger('CASHCODE_SUBAGENT_CONCURRENCY', env['CASHCODE_SUBAGENT_CONCURRENCY'], 3, 1, MAX_CONCURRENCY),
    maxIterations: parseInteger('CASHCODE_SUBAGENT_MAX_ITERATIONS', env['CASHCODE_SUBAGENT_MAX_ITERATIONS'], 8, 1, 100),
    maxTokens: parseInteger('CASHCODE_SUBAGENT_MAX_TOKENS', env['CASHCODE_SUBAGENT_MAX_TOKENS'], 200_000, 1_000, 100_000_000),
  };
}
