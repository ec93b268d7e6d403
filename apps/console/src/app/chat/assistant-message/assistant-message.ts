import { ChangeDetectionStrategy, Component, inject, input } from '@angular/core';

import { I18n } from '../../core/i18n/i18n';
import { Icon } from '../../shared/icon/icon';
import { Logo } from '../../shared/logo/logo';
import { Markdown } from '../../shared/markdown/markdown';
import { ApprovalCard } from '../approval-card/approval-card';
import { ElicitationCard } from '../elicitation-card/elicitation-card';
import type { ChatMessage, ToolBlockState } from '../chat-types';
import { SubagentCard } from '../subagent-card/subagent-card';
import { ToolBlock } from '../tool-block/tool-block';

/**
 * An assistant turn: tool blocks first (a call that needed approval shows its approval card, then its block once it
 * was allowed to run), then the Markdown answer (with a cursor while streaming).
 */
@Component({
  selector: 'cc-assistant-message',
  changeDetection: ChangeDetectionStrategy.OnPush,
  imports: [Markdown, ToolBlock, SubagentCard, ApprovalCard, ElicitationCard, Logo, Icon],
  template: `
    <div class="cc-avatar"><cc-logo /></div>
    <div class="cc-body">
      @if (message().reasoning) {
        <!-- the model's reasoning: collapsed unless opened, never part of the answer -->
        <details class="cc-reasoning" data-testid="reasoning">
          <summary>{{ i18n.t(thinking() ? 'chat.reasoningLive' : 'chat.reasoning') }}</summary>
          <div class="cc-reasoning-text" data-testid="reasoning-text">{{ message().reasoning }}</div>
        </details>
      }
      @if (message().tools.length) {
        <div class="cc-tools">
          @for (tool of message().tools; track tool.callId) {
            @if (tool.approval; as approval) {
              <cc-approval-card [approval]="approval" />
            }
            @if (tool.name === 'delegate' && !tool.approval) {
              <cc-subagent-card [tool]="tool" />
            } @else if (ran(tool)) {
              <cc-tool-block [tool]="tool" data-testid="tool-block" />
            }
            @if (tool.elicitation; as elicitation) {
              <cc-elicitation-card [card]="elicitation" />
            }
          }
        </div>
      }
      @if (message().content) {
        <cc-markdown [content]="message().content" [streaming]="message().streaming" data-testid="assistant-text" />
      } @else if (message().streaming) {
        <div class="cc-typing" [attr.aria-label]="i18n.t('chat.generating')"><span></span><span></span><span></span></div>
      }
      @if (message().cancelled) {
        <div class="cc-stopped" data-testid="stopped-marker"><cc-icon name="stop" />{{ i18n.t('chat.stopped') }}</div>
      }
      @if (message().truncated) {
        <div class="cc-stopped" data-testid="truncated-marker">{{ i18n.t('chat.truncated') }}</div>
      }
    </div>
  `,
  styles: `
    :host {
      display: flex;
      gap: 14px;
      align-items: flex-start;
    }
    .cc-avatar {
      --cc-logo-size: 28px;
      margin-top: 2px;
    }
    .cc-body {
      flex: 1;
      min-width: 0;
      display: flex;
      flex-direction: column;
      gap: 10px;
    }
    .cc-reasoning {
      align-self: stretch;
      border-left: 3px solid var(--mat-sys-outline-variant);
      padding: 2px 0 2px 10px;
      color: var(--mat-sys-on-surface-variant);
      font: var(--mat-sys-body-small);
    }
    .cc-reasoning summary {
      cursor: pointer;
      font: var(--mat-sys-label-medium);
    }
    .cc-reasoning-text {
      white-space: pre-wrap;
      overflow-wrap: anywhere;
      margin-top: 6px;
      max-height: 320px;
      overflow-y: auto;
    }
    .cc-tools {
      display: flex;
      flex-direction: column;
      gap: 6px;
    }
    .cc-typing {
      display: inline-flex;
      gap: 4px;
      padding: 10px 0;
    }
    .cc-typing span {
      width: 7px;
      height: 7px;
      border-radius: 50%;
      background: var(--mat-sys-on-surface-variant);
      animation: cc-bounce 1.2s infinite ease-in-out;
    }
    .cc-typing span:nth-child(2) {
      animation-delay: 0.15s;
    }
    .cc-typing span:nth-child(3) {
      animation-delay: 0.3s;
    }
    .cc-stopped {
      align-self: flex-start;
      display: inline-flex;
      align-items: center;
      gap: 4px;
      padding: 2px 10px 2px 6px;
      border-radius: 999px;
      background: var(--mat-sys-surface-container-high);
      color: var(--mat-sys-on-surface-variant);
      font: var(--mat-sys-label-medium);
      --cc-icon-size: 14px;
    }
    @keyframes cc-bounce {
      0%,
      80%,
      100% {
        transform: scale(0.6);
        opacity: 0.4;
      }
      40% {
        transform: scale(1);
        opacity: 1;
      }
    }
  `,
})
export class AssistantMessage {
  readonly message = input.required<ChatMessage>();
  protected readonly i18n = inject(I18n);

  /** The model is still reasoning: the answer has not started yet. */
  protected thinking(): boolean {
    return this.message().streaming && this.message().content === '';
  }

  /**
   * A call runs unless it waits for its approval or was refused. A sub-agent's call runs inside its sub-agent's card:
   * here it shows only its approval card.
   */
  protected ran(tool: ToolBlockState): boolean {
    const resolution = tool.approval?.resolution;
    if (!tool.approval) return true;
    if (tool.approval.subagent) return false;
    return resolution !== null && resolution !== undefined && resolution.decision !== 'deny';
  }
}
