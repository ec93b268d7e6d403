import { Module } from '@nestjs/common';
import { LlmSettingsModule } from '../llm-settings/llm-settings.module';
import { SkillsModule } from '../skills/skills.module';
import { EvidenceStore } from './evidence-store';
import { EvolutionController } from './evolution.controller';
import { EvolutionEvaluator } from './evolution-evaluator';
import { EVOLUTION_SKILLS } from './evolution-skills.port';
import { SkillsServiceEvolutionAdapter } from './evolution-skills.adapter';
import { EvolutionService } from './evolution.service';
import { Evolver } from './evolver';
import { ProposalStore } from './proposal-store';

/**
 * Skill self-evolution (openspec skill-evolution; off unless SKILL_EVOLUTION_ENABLED): evidence from completed turns
 * (the turn-completed event — no import of the chat module), workflow fingerprints, the restricted evolver and the
 * proposal review REST API. Depends on SkillsModule (never the reverse) through the EVOLUTION_SKILLS port.
 */
@Module({
  imports: [LlmSettingsModule, SkillsModule],
  controllers: [EvolutionController],
  providers: [
    EvidenceStore,
    ProposalStore,
    Evolver,
    EvolutionEvaluator,
    EvolutionService,
    { provide: EVOLUTION_SKILLS, useClass: SkillsServiceEvolutionAdapter },
  ],
  exports: [EvolutionService],
})
export class EvolutionModule {}
