import { Global, Module } from '@nestjs/common';
import { AgentModule } from '../agent/agent.module';
import { SandboxModule } from '../agent/sandbox/sandbox.module';
import { TOOL_GATE, type ToolGate } from '../agent/tool-gate';
import { ApprovalAuditLog } from './approval-audit';
import { ApprovalAuditController, ToolPoliciesController } from './approvals.controller';
import { ApprovalsService } from './approvals.service';
import { ToolPoliciesService } from './tool-policies.service';
import { ToolPolicyStore } from './tool-policy-store';
import { TrustedSourceStore } from './trusted-source-store';
import { TrustedSourcesController } from './trusted-sources.controller';

/**
 * Tool policies and approvals (openspec approvals): the policy store, the audit log, the approval service and their
 * REST controllers. ApprovalsService is the agent's ToolGate, bound to TOOL_GATE here: the agent asks the gate without
 * importing this module, and this module reads the agent's ToolRegistry (the known tools of the policies page).
 * Global, so the agent's tool executor finds TOOL_GATE and the features (Skills' pre-approvals, the audit of grants)
 * reach ApprovalsService and the audit log wherever they sit.
 */
@Global()
@Module({
  imports: [AgentModule, SandboxModule],
  controllers: [ToolPoliciesController, ApprovalAuditController, TrustedSourcesController],
  providers: [
    ToolPolicyStore,
    ToolPoliciesService,
    ApprovalAuditLog,
    ApprovalsService,
    TrustedSourceStore,
    // a typed factory: the compiler checks that the service fits the agent's ToolGate
    { provide: TOOL_GATE, useFactory: (approvals: ApprovalsService): ToolGate => approvals, inject: [ApprovalsService] },
  ],
  exports: [ApprovalsService, ApprovalAuditLog, TrustedSourceStore, TOOL_GATE],
})
export class ApprovalsModule {}
