/**
 * The tool policies and standing rules as the owner manages them (openspec approvals "Requirement: REST for
 * policies" and "Requirement: Standing rules"): the policies page's view (every known tool with its effective policy,
 * rules that no longer cover anything flagged), its updates, and the rules "always allow" stores.
 */
import { Injectable, Logger } from '@nestjs/common';
import type {
  StandingRule,
  StandingRuleScope,
  ToolPoliciesResponse,
  ToolPolicyEntry,
  UpdateToolPoliciesRequest,
} from '@cashcode/contracts';
import { ToolRegistry } from '../agent/tool-registry';
import { formatEvent } from '../common/log-format';
import { approvalTime } from './approval-texts';
import { effectivePolicy } from './call-evaluation';
import { ruleInactiveReason } from './command-analysis';
import { newRuleId, sameScope, ToolPolicyStore } from './tool-policy-store';
import { policyKey, toolRisk } from './tool-risk';

@Injectable()
export class ToolPoliciesService {
  private readonly logger = new Logger('ApprovalsService');

  constructor(
    private readonly policies: ToolPolicyStore,
    private readonly registry: ToolRegistry,
  ) {}

  /** Stores a standing rule for the scope (or finds the one there is) before the decision takes effect. */
  async addRule(scope: StandingRuleScope): Promise<StandingRule> {
    let stored: StandingRule | null = null;
    await this.policies.update((draft) => {
      stored = draft.rules.find((rule) => sameScope(rule.scope, scope)) ?? null;
      if (stored === null) {
        stored = { id: newRuleId(), scope: { ...scope }, created_at: approvalTime(Date.now()) };
        draft.rules.push(stored);
      }
    });
    return stored as unknown as StandingRule;
  }

  /** GET /api/settings/tool-policies */
  policiesResponse(): ToolPoliciesResponse {
    const state = this.policies.snapshot();
    const known: ToolPolicyEntry[] = this.registry.allTools().map((tool) => {
      const risk = toolRisk(tool);
      const key = policyKey(tool);
      const entry: ToolPolicyEntry = {
        name: key,
        risk,
        policy: effectivePolicy(state, tool, risk),
        explicit: state.tools[key] !== undefined,
      };
      if (tool.mcp) {
        entry.server = tool.mcp.server;
        entry.read_only = tool.mcp.readOnly;
        entry.destructive = tool.mcp.destructive;
        if (tool.mcp.title !== undefined) entry.title = tool.mcp.title;
      }
      return entry;
    });
    known.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    const rules = state.rules.map((rule) => {
      const inactive = ruleInactiveReason(rule.scope);
      return inactive === null ? rule : { ...rule, inactive_reason: inactive };
    });
    return { defaults: state.defaults, tools: state.tools, servers: state.servers, rules, known_tools: known };
  }

  /** PUT /api/settings/tool-policies (validated by the DTO). */
  async updatePolicies(body: UpdateToolPoliciesRequest): Promise<ToolPoliciesResponse> {
    await this.policies.update((draft) => {
      if (body.defaults) Object.assign(draft.defaults, body.defaults);
      if (body.tools) draft.tools = { ...body.tools };
      if (body.servers) draft.servers = { ...body.servers };
      if (body.keep_rule_ids) {
        const keep = new Set(body.keep_rule_ids);
        draft.rules = draft.rules.filter((rule) => keep.has(rule.id));
      }
    });
    this.logger.log(formatEvent('approval.policies.updated', {}));
    return this.policiesResponse();
  }

  /** DELETE /api/settings/tool-policies/rules/:id; false when no such rule. */
  async deleteRule(id: string): Promise<boolean> {
    if (!this.policies.current.rules.some((rule) => rule.id === id)) return false;
    let removed = false;
    await this.policies.update((draft) => {
      const before = draft.rules.length;
      draft.rules = draft.rules.filter((rule) => rule.id !== id);
      removed = draft.rules.length < before;
    });
    return removed;
  }
}
