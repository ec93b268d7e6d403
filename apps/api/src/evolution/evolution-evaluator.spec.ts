import { Logger } from '@nestjs/common';
import { EventEmitter2 } from '@nestjs/event-emitter';
import { AppEventBus } from '../events/event-bus';
import type { SkillEvolutionEvidence } from '@cashcode/contracts';
import {
  SKILL_EVOLUTION_EVALUATED_EVENT,
  type EvaluationFinishedEvent,
  type TurnCompletedEvent,
} from '../events/app-events';
import type { AppConfig } from '../config/app-config';
import type { EvidenceStore } from './evidence-store';
import { EVALUATION_QUEUE_MAX, EvolutionEvaluator } from './evolution-evaluator';
import type { Evolver } from './evolver';
import type { ProposalStore } from './proposal-store';

function turn(n: number): TurnCompletedEvent {
  return {
    chatId: `chat-${n}`,
    turnId: String(n).padStart(32, '0'),
    provider: 'openai_compatible',
    model: 'm',
    usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
    durationSec: 0.1,
    userContent: `request ${n}`,
    durable: [
      {
        role: 'assistant',
        content: '',
        tool_calls: [
          { id: 'a', type: 'function', function: { name: 'x', arguments: '{}' } },
          { id: 'b', type: 'function', function: { name: 'y', arguments: '{}' } },
        ],
      },
    ],
    answer: 'done',
    toolCalls: 2,
    failedToolCalls: 0,
    iterationLimitReached: false,
  };
}

/** An evidence store whose writes wait until released, recording how many run at once. */
class GatedEvidenceStore {
  active = 0;
  maxActive = 0;
  started = 0;
  private readonly gates: Array<() => void> = [];
  private readonly startWaiters: Array<{ count: number; resolve: () => void }> = [];

  async add(_record: SkillEvolutionEvidence): Promise<void> {
    this.active++;
    this.started++;
    this.maxActive = Math.max(this.maxActive, this.active);
    for (const waiter of this.startWaiters.filter((w) => this.started >= w.count)) {
      this.startWaiters.splice(this.startWaiters.indexOf(waiter), 1);
      waiter.resolve();
    }
    await new Promise<void>((resolve) => this.gates.push(resolve));
    this.active--;
  }

  async idsWithFingerprint(): Promise<string[]> {
    return ['only-one'];
  }

  whenStarted(count: number): Promise<void> {
    if (this.started >= count) return Promise.resolve();
    return new Promise((resolve) => this.startWaiters.push({ count, resolve }));
  }

  releaseAll(): void {
    for (const open of this.gates.splice(0)) open();
  }
}

describe(EvolutionEvaluator.name, () => {
  beforeAll(() => Logger.overrideLogger(false));

  function setup(maxConcurrent: number) {
    const config = {
      skillEvolutionEnabled: true,
      skillEvolutionMinToolCalls: 2,
      skillEvolutionRecurrence: 2,
      skillEvolutionMaxConcurrent: maxConcurrent,
      skillEvolutionMaxContextChars: 12_000,
    } as unknown as AppConfig;
    const evidence = new GatedEvidenceStore();
    const events = new AppEventBus(new EventEmitter2());
    const finished: EvaluationFinishedEvent[] = [];
    events.on(SKILL_EVOLUTION_EVALUATED_EVENT, (event) => finished.push(event));
    const evaluator = new EvolutionEvaluator(
      config,
      evidence as unknown as EvidenceStore,
      {} as ProposalStore,
      {} as Evolver,
      events,
      null,
    );
    return { evaluator, evidence, finished };
  }

  it('Scenario: the listener returns at once; evaluations run later, off the turn', async () => {
    const { evaluator, evidence } = setup(1);
    evaluator.onTurnCompleted(turn(1));
    expect(evidence.started).toBe(0);
    await evidence.whenStarted(1);
    evidence.releaseAll();
    await evaluator.whenIdle();
  });

  it('Scenario: at most SKILL_EVOLUTION_MAX_CONCURRENT evaluations run at once', async () => {
    const { evaluator, evidence, finished } = setup(2);
    for (let n = 0; n < 5; n++) evaluator.onTurnCompleted(turn(n));
    await evidence.whenStarted(2);
    expect(evidence.active).toBe(2);
    const idle = evaluator.whenIdle();
    // release in waves until every queued turn went through
    while (finished.length < 5) {
      evidence.releaseAll();
      await new Promise<void>((resolve) => setImmediate(resolve));
    }
    await idle;
    expect(evidence.maxActive).toBe(2);
    expect(finished.map((e) => e.outcome)).toEqual(Array(5).fill('recorded'));
  });

  it('drops turns beyond the queue bound instead of piling up work', async () => {
    const { evaluator, evidence, finished } = setup(1);
    for (let n = 0; n < EVALUATION_QUEUE_MAX + 3; n++) evaluator.onTurnCompleted(turn(n));
    expect(finished.filter((e) => e.reason === 'queue_full')).toHaveLength(3);
    await evidence.whenStarted(1);
    await Promise.all([evaluator.onApplicationShutdown(), Promise.resolve().then(() => evidence.releaseAll())]);
    expect(evidence.started).toBe(1);
  });
});
